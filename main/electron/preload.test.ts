import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

// The preload is built by the repo's own tsc settings and then run the way Electron runs a sandboxed
// preload: as a function body given `require` (Electron's modules only), `process`, `exports` and
// `module`. That proves the build is loadable there without an Electron binary.

const TSCONFIG = fileURLToPath(new URL('../../tsconfig.json', import.meta.url));
const PRELOAD = fileURLToPath(new URL('../../preload/index.cts', import.meta.url));

function buildPreload(): { fileName: string; code: string } {
  const { config } = ts.readConfigFile(TSCONFIG, ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, fileURLToPath(new URL('../..', import.meta.url)));
  const program = ts.createProgram([PRELOAD], { ...options, sourceMap: false });
  const errors = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  assert.deepEqual(errors, []);
  const out: { fileName: string; code: string }[] = [];
  program.emit(program.getSourceFile(PRELOAD), (fileName, code) => out.push({ fileName, code }));
  assert.equal(out.length, 1);
  return out[0]!;
}

function runSandboxed(code: string): { exposed: Map<string, unknown>; invoked: unknown[][]; required: string[] } {
  const exposed = new Map<string, unknown>();
  const invoked: unknown[][] = [];
  const required: string[] = [];
  const electron = {
    contextBridge: { exposeInMainWorld: (key: string, api: unknown) => exposed.set(key, api) },
    ipcRenderer: { invoke: async (...args: unknown[]) => invoked.push(args) },
  };
  const preloadRequire = (name: string) => {
    required.push(name);
    if (name === 'electron') return electron;
    throw new Error(`module not found: ${name}`);
  };
  const exports = {};
  new Function('require', 'process', 'exports', 'module', code)(preloadRequire, {}, exports, { exports });
  return { exposed, invoked, required };
}

describe('the preload', () => {
  const { fileName, code } = buildPreload();

  it('is built as CommonJS (index.cjs), requiring nothing but electron', () => {
    assert.match(fileName, /preload\/index\.cjs$/);
    assert.doesNotMatch(code, /^\s*(import|export)\s/m);
    assert.deepEqual(runSandboxed(code).required, ['electron']);
  });

  it('exposes exactly the DesktopApi as window.personaDesktop, each method one IPC channel', async () => {
    const { exposed, invoked } = runSandboxed(code);
    assert.deepEqual([...exposed.keys()], ['personaDesktop']);
    const api = exposed.get('personaDesktop') as Record<string, (...args: unknown[]) => Promise<unknown>>;
    assert.deepEqual(Object.keys(api).sort(), ['config', 'launchAtLogin', 'openExternal', 'openSkillFolder', 'quit']);
    await api.config!();
    await api.openExternal!('https://a.example/authorize');
    await api.launchAtLogin!();
    await api.launchAtLogin!(true);
    await api.openSkillFolder!('pdf-tools');
    await api.quit!();
    assert.deepEqual(invoked, [
      ['app:config'],
      ['app:open-external', 'https://a.example/authorize'],
      ['app:launch-at-login'],
      ['app:launch-at-login', true],
      ['skills:open-folder', 'pdf-tools'],
      ['app:quit'],
    ]);
  });
});
