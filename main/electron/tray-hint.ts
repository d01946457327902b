import { readSettingsFile, writeSetting } from '../settings-file.js';

// The first time the window is closed, the app says that it keeps running in the tray (closing a
// window usually quits an app); the settings file remembers that it was said, so it is said once.

export const TRAY_HINT = {
  title: 'Persona Workspace keeps running in the tray',
  content: 'Agents can still connect. Open the window again from the tray icon; Quit in its menu stops the server.',
};

export interface HintDecision {
  show: boolean;
  /** Why it could not be remembered (a settings file that does not parse is never rewritten). */
  problem?: string;
}

export class TrayHint {
  private decided = false;

  constructor(private readonly settingsPath: string) {}

  /**
   * Called as the window hides to the tray: whether to say so now. Yes the first time ever (then
   * recorded as `trayHintShown` in the settings file); no after that, nor again in this run when
   * the file cannot record it.
   */
  async onHide(): Promise<HintDecision> {
    if (this.decided) return { show: false };
    this.decided = true;
    try {
      if (readSettingsFile(undefined, {}, this.settingsPath).settings.trayHintShown === true) return { show: false };
      await writeSetting(this.settingsPath, 'trayHintShown', true);
      return { show: true };
    } catch (error) {
      return { show: true, problem: `${(error as Error).message} The tray hint will show again at the next start.` };
    }
  }
}
