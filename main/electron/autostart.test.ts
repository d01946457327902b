import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AUTOSTART_FILE_NAME, autostartEntry, autostartPath, LinuxAutostart } from './autostart.js';

describe('autostartPath', () => {
  it('lives in $XDG_CONFIG_HOME/autostart, else ~/.config/autostart', () => {
    assert.equal(autostartPath({ XDG_CONFIG_HOME: '/x/config' }, '/home/a'), `/x/config/autostart/${AUTOSTART_FILE_NAME}`);
    assert.equal(autostartPath({}, '/home/a'), `/home/a/.config/autostart/${AUTOSTART_FILE_NAME}`);
    // The XDG spec ignores a relative value.
    assert.equal(autostartPath({ XDG_CONFIG_HOME: 'rel' }, '/home/a'), `/home/a/.config/autostart/${AUTOSTART_FILE_NAME}`);
  });
});

describe('autostartEntry', () => {
  it('starts the app hidden in the tray', () => {
    assert.equal(
      autostartEntry(['/opt/Persona Workspace/persona-workspace']),
      [
        '[Desktop Entry]',
        'Type=Application',
        'Version=1.0',
        'Name=Persona Workspace',
        'Comment=Lets remote AI agents work on this machine over MCP',
        'Exec="/opt/Persona Workspace/persona-workspace" --hidden',
        'Terminal=false',
        'X-GNOME-Autostart-enabled=true',
        '',
      ].join('\n'),
    );
  });

  it('quotes Exec arguments as the Desktop Entry spec asks', () => {
    const exec = (command: string[]) => /^Exec=(.*)$/m.exec(autostartEntry(command))![1];
    assert.equal(exec(['/home/a/Apps/Persona.AppImage']), '/home/a/Apps/Persona.AppImage --hidden');
    // Reserved characters quote the argument; " ` $ \ are escaped inside; backslashes are then doubled again as a string value.
    assert.equal(exec(['/a b/$x`y"z']), '"/a b/\\\\$x\\\\`y\\\\"z" --hidden');
    assert.equal(exec(['/a\\b c']), '"/a\\\\\\\\b c" --hidden');
    // % would start a field code.
    assert.equal(exec(['/100%/app']), '/100%%/app --hidden');
    // An unpackaged run: the Electron binary, then the app's folder.
    assert.equal(exec(['/repo/node_modules/electron/dist/electron', '/repo']), '/repo/node_modules/electron/dist/electron /repo --hidden');
  });
});

describe('LinuxAutostart', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pw-autostart-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('turns on by writing the entry (creating the folder), off by removing it', async () => {
    const path = join(dir, 'config', 'autostart', AUTOSTART_FILE_NAME);
    const autostart = new LinuxAutostart(path, ['/opt/pw/persona-workspace']);
    assert.equal(await autostart.enabled(), false);
    await autostart.set(true);
    assert.equal(await autostart.enabled(), true);
    assert.equal(await readFile(path, 'utf8'), autostartEntry(['/opt/pw/persona-workspace']));
    assert.deepEqual(await readdir(join(dir, 'config', 'autostart')), [AUTOSTART_FILE_NAME], 'no temp file left');
    await autostart.set(false);
    assert.equal(await autostart.enabled(), false);
    await autostart.set(false);
    assert.equal(await autostart.enabled(), false);
  });

  it("counts an entry the desktop turned off (Hidden or GNOME's switch) as off", async () => {
    const path = join(dir, AUTOSTART_FILE_NAME);
    const autostart = new LinuxAutostart(path, ['/opt/pw/persona-workspace']);
    await writeFile(path, `${autostartEntry(['/x'])}Hidden=true\n`);
    assert.equal(await autostart.enabled(), false);
    await writeFile(path, autostartEntry(['/x']).replace('X-GNOME-Autostart-enabled=true', 'X-GNOME-Autostart-enabled=false'));
    assert.equal(await autostart.enabled(), false);
    await autostart.set(true);
    assert.equal(await autostart.enabled(), true);
  });
});
