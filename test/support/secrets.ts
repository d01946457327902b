// Helpers for the secrets tests (no tests here): a keychain service of their own, child processes
// (another process, or a keychain that is missing or locked), and a search of written files.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before } from 'node:test';
import { EncryptedFileSecretStore } from '../../main/secrets/encrypted-file-store.js';
import { KeychainSecretStore } from '../../main/secrets/keychain-store.js';
import type { SecretStore } from '../../main/secrets/secret-store.js';
import { KEYTAR_SKIP } from './native-modules.js';

export { KEYTAR_SKIP };
import { builtUrl } from './built.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** A keychain store under a service name no other test run uses; `clear()` removes every item of it. */
export function testKeychain(): KeychainSecretStore & { clear(): Promise<void> } {
  const store = new KeychainSecretStore({ service: `persona-mcp-workspace-test-${process.pid}-${randomBytes(4).toString('hex')}` });
  return Object.assign(store, {
    async clear() {
      if (!KEYTAR_SKIP) await store.deleteAll();
    },
  });
}

/**
 * The two secret stores a test runs against: a keychain of its own and an encrypted file in a
 * temp folder. Registers the hooks that make the folder and, at the end, empty both.
 */
export function secretBackends(prefix: string): {
  keychain: SecretStore;
  backends: Array<[label: string, storeOf: () => SecretStore, skip: string | false]>;
} {
  const keychain = testKeychain();
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), prefix));
  });
  after(async () => {
    await keychain.clear();
    await rm(dir, { recursive: true, force: true });
  });
  return {
    keychain,
    backends: [
      ['the OS keychain', () => keychain, KEYTAR_SKIP],
      ['the encrypted file', () => new EncryptedFileSecretStore({ stateDir: dir }), false],
    ],
  };
}

/** `import` specifier of a module of main/secrets (`x.ts`), for code run in a child process. */
export function moduleUrl(file: string): string {
  return JSON.stringify(builtUrl(new URL(`../../main/secrets/${file}`, import.meta.url)));
}

export interface ChildResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs ES module `code` (importing compiled modules: `moduleUrl`) in a new Node process with `env` added. */
export function runChild(code: string, env: Record<string, string> = {}): Promise<ChildResult> {
  return runCommand(process.execPath, ['--input-type=module', '-e', code], env);
}

export function runCommand(command: string, args: string[], env: Record<string, string> = {}): Promise<ChildResult> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: repoRoot, env: { ...process.env, ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

/** The last line of a child's stdout, parsed as JSON: children print their outcome there. */
export function outcomeOf(result: ChildResult): unknown {
  const line = result.stdout.trim().split('\n').at(-1);
  assert.ok(line, `the child printed nothing (exit ${result.code}): ${result.stderr}`);
  return JSON.parse(line);
}

/** Fails if any file under `dir` contains one of `texts`; returns the files searched. */
export async function assertNotInFiles(dir: string, texts: Array<string | Uint8Array>): Promise<string[]> {
  const files = await filesUnder(dir);
  for (const file of files) {
    // The keyring daemon, serving other test files at the same time, writes a temp file and renames
    // it over the keyring: one listed a moment ago may be gone. What is left is searched.
    const content = await readFile(file).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (!content) continue;
    for (const text of texts) {
      const needle = typeof text === 'string' ? Buffer.from(text, 'utf8') : Buffer.from(text);
      assert.equal(content.indexOf(needle), -1, `${file} contains a secret in plaintext`);
    }
  }
  return files;
}

/** Every regular file under `dir`, however deep (a socket or a pipe is not read). */
export async function filesUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await filesUnder(path)));
    else if (entry.isFile()) found.push(path);
  }
  return found;
}
