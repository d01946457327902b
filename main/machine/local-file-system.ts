import { statfs } from 'node:fs/promises';

// statfs f_type of file systems whose data the kernel keeps on a local disk or in memory: a small
// read from them never waits on a network or on a FUSE process. Not proc, sysfs and the like: some
// of their files block on read (/proc/kmsg). overlayfs is the root of most containers.
const LOCAL_TYPES = new Set([
  0xef53, // ext2, ext3, ext4
  0x58465342, // xfs
  0x9123683e, // btrfs
  0xf2f52010, // f2fs
  0x2fc12fc1, // zfs
  0x01021994, // tmpfs
  0x858458f6, // ramfs
  0x794c7630, // overlayfs
]);

/** How long a device's answer is kept: the device number of an unmounted file system can be reused. */
export const LOCAL_VERDICT_MS = 60_000;

/**
 * Whether an open file lives on a local file system, asked of the kernel once per device and
 * minute. Linux only: elsewhere the answer is always no.
 */
export class LocalFileSystems {
  private readonly verdicts = new Map<number, { local: boolean; until: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  async isLocal(dev: number, fd: number): Promise<boolean> {
    if (process.platform !== 'linux') return false;
    const known = this.verdicts.get(dev);
    if (known && known.until > this.now()) return known.local;
    // Through /proc/self/fd: the file system of the file actually open, whatever its path points to now.
    const local = await statfs(`/proc/self/fd/${fd}`).then(
      (info) => LOCAL_TYPES.has(info.type),
      () => false,
    );
    this.verdicts.set(dev, { local, until: this.now() + LOCAL_VERDICT_MS });
    return local;
  }
}
