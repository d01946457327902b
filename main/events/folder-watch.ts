import { watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { currentStamp } from '../state/file-stamp.js';

/**
 * Hears when files of a folder change, whichever process wrote them (the CLI writes the state files
 * the server reads): the OS tells of a change to a name (inotify, FSEvents, ...); the file's stat
 * stamp then says whether its content is new. Names not asked for are ignored.
 */
export class FolderWatch {
  private watcher: FSWatcher | undefined;
  private readonly stamps = new Map<string, string>();
  private readonly due = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  /**
   * `onChange(name)` for each name of `names` whose stamp changed; `always` names are told on every
   * event (a lock file taken and released leaves no stamp behind).
   */
  constructor(
    private readonly dir: string,
    private readonly names: { stamped: readonly string[]; always?: readonly string[] },
    private readonly onChange: (name: string) => void,
    private readonly onError: (error: Error) => void,
  ) {}

  start(): void {
    for (const name of this.names.stamped) this.stamps.set(name, currentStamp(join(this.dir, name)));
    try {
      this.watcher = watch(this.dir, { persistent: false }, (_event, name) => this.heard(name === null ? undefined : String(name)));
      this.watcher.on('error', (error) => this.onError(error));
    } catch (error) {
      this.onError(error as Error);
    }
  }

  close(): void {
    this.watcher?.close();
    this.watcher = undefined;
    clearTimeout(this.timer);
  }

  private heard(name: string | undefined): void {
    // No name given (some platforms): any of them may have changed.
    const names = name === undefined ? [...this.names.stamped, ...(this.names.always ?? [])] : [name];
    for (const n of names) if (this.names.stamped.includes(n) || this.names.always?.includes(n)) this.due.add(n);
    // A write is a burst of events (temp file, rename): looked at once, a moment later.
    if (this.due.size && !this.timer) this.timer = setTimeout(() => this.look(), 10);
  }

  private look(): void {
    this.timer = undefined;
    const due = [...this.due];
    this.due.clear();
    for (const name of due) {
      if (this.names.always?.includes(name)) {
        this.onChange(name);
        continue;
      }
      let stamp: string;
      try {
        stamp = currentStamp(join(this.dir, name));
      } catch (error) {
        this.onError(error as Error);
        continue;
      }
      if (stamp === this.stamps.get(name)) continue;
      this.stamps.set(name, stamp);
      this.onChange(name);
    }
  }
}
