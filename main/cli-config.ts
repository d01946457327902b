import { loadConfig, type ServeFlags } from './config.js';
import { effectiveSettings, type SettingsFile } from './settings-file.js';
import type { SettingName } from './settings.js';
import { recordedSecretStore } from './secrets/open-secret-store.js';

/** Each setting's effective value and where it came from, as a table or (`json`) as JSON. */
export async function configCommand(flags: ServeFlags, json: boolean, file: SettingsFile, env: NodeJS.ProcessEnv): Promise<number> {
  // Checks the whole configuration as a start would, so a bad value shows here too.
  const config = loadConfig(flags, env);
  const flagValues: Partial<Record<SettingName, string>> = {
    ...(flags.port !== undefined && { port: String(flags.port) }),
    ...(flags.host !== undefined && { host: flags.host }),
    ...(flags.controlPort !== undefined && { controlPort: String(flags.controlPort) }),
    ...(flags.auth === false && { noAuth: 'true' }),
    ...(flags.clientMetadataUrl !== undefined && { clientMetadataUrl: flags.clientMetadataUrl }),
  };
  // Sources are told apart on the real environment, before the file's settings were put under it.
  const rows = effectiveSettings(flagValues, file, process.env);
  const store = rows.find((row) => row.name === 'secretStore')!;
  if (store.source === 'default') {
    const recorded = await recordedSecretStore(config.stateDir);
    if (recorded) Object.assign(store, { value: recorded.store, source: `chosen on first use (${recorded.path})` });
  }
  if (json) {
    process.stdout.write(`${JSON.stringify({ settingsFile: { path: file.path, found: file.found }, settings: rows }, null, 2)}\n`);
    return 0;
  }
  const out = [`Settings file: ${file.path}${file.found ? '' : ' (none there: defaults apply)'}`];
  const width = Math.max(...rows.map((row) => row.name.length), ...rows.map((row) => row.value.length).filter((n) => n <= 40));
  for (const row of rows) out.push(`${row.name.padEnd(width)}  ${row.value.padEnd(width)}  ${row.source}`);
  process.stdout.write(`${out.join('\n')}\n`);
  return 0;
}
