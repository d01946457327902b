import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { otherPlacesFolders, policyOf, type AccessDirectory, type AccessDirectorySnapshot } from './access-directory.js';
import { placeFromRoot } from './place-root.js';
import { describePolicy } from './sandbox-policy.js';

/** A place whose sandbox changed, and how, in words ("its policy changed from place to strict"). */
export interface PolicyChange {
  readonly root: string;
  readonly label: string;
  readonly why: string;
}

/** How often the file is looked at besides the file system's notices (which some file systems never send). */
const POLL_MS = 1000;
/** Writes come in bursts (temp file, rename): one look after the last notice. */
const SETTLE_MS = 10;

/**
 * Tells, as soon as the access directory changes (the page, the API or the CLI wrote it), which
 * places' sandboxes changed: their own policy (kind, folders, network, seals, limits), or another
 * place's extra folders, which their sandbox hides. What ran under the old policy is then ended
 * (services.ts): a policy change takes effect at once, not when the running commands end.
 */
export class PolicyWatch {
  private last: AccessDirectorySnapshot | undefined;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private settle: NodeJS.Timeout | undefined;
  private checking: Promise<void> = Promise.resolve();
  /** Per place root: how many changes of its sandbox were seen, and the latest. */
  private readonly seen = new Map<string, { count: number; change: PolicyChange }>();

  constructor(
    private readonly access: AccessDirectory,
    /** Ends what ran under the old policies; the watch waits for it (caughtUp). */
    private readonly onChange: (changes: PolicyChange[]) => Promise<void>,
    private readonly report: (line: string) => void,
  ) {}

  /** Reads the current directory as the baseline, then watches. */
  async start(): Promise<void> {
    this.last = await this.access.snapshot().catch(() => undefined);
    const file = basename(this.access.path);
    try {
      this.watcher = watch(dirname(this.access.path), (_event, name) => {
        if (name === null || name === file) this.soon();
      });
      this.watcher.on('error', () => this.watcher?.close());
    } catch (error) {
      this.report(`Policy changes are seen within ${POLL_MS} ms only: the state folder cannot be watched (${(error as Error).message}).`);
    }
    this.timer = setInterval(() => this.soon(), POLL_MS);
    this.timer.unref();
  }

  /**
   * Resolves once what ran under an access directory older than `dir` has been ended. A call that
   * read `dir` waits for this before it starts anything: the watch may not have seen the change
   * yet, and would otherwise end the call's new sandbox along with the old ones. Then resolves to
   * the check a command of place `root` started under `dir` makes once it is registered: the change
   * seen since, if any (a change seen later ends it with the others). Undefined when `dir` is
   * already outdated for that place: read it again.
   */
  async caughtUp(dir: AccessDirectorySnapshot, root: string): Promise<(() => PolicyChange | undefined) | undefined> {
    if (dir !== this.last) this.checking = this.checking.then(() => this.check());
    await this.checking;
    if (this.last && sandboxOf(this.last, root).key !== sandboxOf(dir, root).key) return undefined;
    const count = this.seen.get(root)?.count ?? 0;
    return () => {
      const now = this.seen.get(root);
      return now && now.count !== count ? now.change : undefined;
    };
  }

  stop(): void {
    this.watcher?.close();
    clearInterval(this.timer);
    clearTimeout(this.settle);
  }

  private soon(): void {
    clearTimeout(this.settle);
    this.settle = setTimeout(() => void (this.checking = this.checking.then(() => this.check())), SETTLE_MS);
  }

  private async check(): Promise<void> {
    // A file that cannot be read changes nothing here: every call refuses with its reason meanwhile.
    const current = await this.access.snapshot().catch(() => undefined);
    if (!current || current === this.last) return;
    const before = this.last;
    this.last = current;
    if (!before) return;
    const changes: PolicyChange[] = [];
    for (const root of new Set([...Object.keys(before.places), ...Object.keys(current.places)])) {
      const [was, is] = [sandboxOf(before, root), sandboxOf(current, root)];
      if (was.key === is.key) continue;
      const why =
        was.words !== is.words
          ? `its policy changed from ${was.words} to ${is.words}`
          : was.policy !== is.policy
            ? `its policy (${is.words}) changed`
            : "another place's extra folders changed";
      const change = { root, label: is.label, why };
      changes.push(change);
      // Counted before anything is ended: a command registered from now on finds it (caughtUp).
      this.seen.set(root, { count: (this.seen.get(root)?.count ?? 0) + 1, change });
    }
    if (changes.length) await this.onChange(changes);
  }
}

/** What the answer of a command ended by `change` says. */
export function endedByChange({ label, why }: PolicyChange): string {
  return `the sandbox of ${label} changed while it ran (${why})`;
}

/** What a place's sandbox is made of in this directory (its policy, the other places' folders). */
function sandboxOf(dir: AccessDirectorySnapshot, root: string): { key: string; policy: string; words: string; label: string } {
  let place;
  try {
    place = placeFromRoot(root);
  } catch {
    return { key: 'none', policy: 'none', words: 'none', label: root };
  }
  const policy = policyOf(dir, place);
  const words = describePolicy(policy);
  if (policy.kind === 'machine') return { key: 'machine', policy: 'machine', words, label: place.label };
  return { key: JSON.stringify([policy, otherPlacesFolders(dir, place)]), policy: JSON.stringify(policy), words, label: place.label };
}
