import { listSkills, skillCatalogText, type InvalidSkill } from './skills.js';

export interface SkillsWatchOptions {
  /** How often the skills folder is read again. */
  intervalMs?: number;
  /** The catalog (resource://skills text) changed: a skill was added, removed, renamed or redescribed. */
  onChange: (catalogText: string) => void;
  /** A skill folder is skipped; told once per folder and reason, so the log is not flooded. */
  onInvalid: (skill: InvalidSkill) => void;
  /** The folder could not be read (told once until it can be read again). */
  onError: (error: Error) => void;
}

/**
 * Notices changes to the skills on disk by reading the folder at an interval. Polling keeps this
 * working on every platform and when the folder is created later or is a network mount.
 */
export class SkillsWatch {
  private timer: NodeJS.Timeout | undefined;
  private catalog: string | undefined;
  private reported = new Map<string, string>();
  private failing = false;
  private scanning: Promise<void> | undefined;

  constructor(
    private readonly skillsDir: string,
    private readonly options: SkillsWatchOptions,
  ) {}

  /** Reads the folder now (reporting invalid skills at once), then keeps watching. */
  async start(): Promise<void> {
    await this.scan();
    this.timer = setInterval(() => void this.scan(), this.options.intervalMs ?? 2_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.scanning;
  }

  private scan(): Promise<void> {
    // A slow disk must not pile up overlapping scans.
    this.scanning ??= this.read().finally(() => (this.scanning = undefined));
    return this.scanning;
  }

  private async read(): Promise<void> {
    let found;
    try {
      found = await listSkills(this.skillsDir);
    } catch (error) {
      if (!this.failing) this.options.onError(error as Error);
      this.failing = true;
      return;
    }
    this.failing = false;
    const reported = new Map<string, string>();
    for (const skill of found.invalid) {
      if (this.reported.get(skill.folder) !== skill.reason) this.options.onInvalid(skill);
      reported.set(skill.folder, skill.reason);
    }
    this.reported = reported;
    const catalog = skillCatalogText(found.skills);
    if (this.catalog !== undefined && catalog !== this.catalog) this.options.onChange(catalog);
    this.catalog = catalog;
  }
}
