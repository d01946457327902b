// The package `npm pack` makes: it carries the built program and no tests or test tooling, and
// `npm install -g` of it into a fresh prefix (from the local npm cache: packages already fetched)
// gives a `persona-mcp-workspace` that runs with only its runtime dependencies. The install builds
// the native modules again (minutes on two cores), so it runs in CI (`.ci/run` sets TEST_FIRST_RUN=1)
// and with TEST_FIRST_RUN=1; what the tarball holds is checked in every run.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { access, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../', import.meta.url));
const INSTALL_MS = 10 * 60_000;
const pkg = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8')) as {
  version: string;
  dependencies: Record<string, string>;
  optionalDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

const skipInstall =
  process.env.TEST_FIRST_RUN === '1' ? false : 'an install that builds native modules: runs in CI, or with TEST_FIRST_RUN=1';

describe('the package npm pack makes', { timeout: INSTALL_MS + 60_000 }, () => {
  let dir: string;
  let tarball: string;

  before(async () => {
    // The package is made from the build (the test runner starts this file once the build is done).
    await access(join(repo, 'dist', 'main', 'cli.js'));
    dir = await mkdtemp(join(tmpdir(), 'pw-pack-'));
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: repo, maxBuffer: 64 * 1024 * 1024 });
    const [packed] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    tarball = join(dir, packed!.filename);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('carries the built program and its install check, and no tests, sources or test tooling', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball], { maxBuffer: 64 * 1024 * 1024 });
    const files = stdout.split('\n').filter(Boolean);
    for (const file of [
      'package/package.json',
      'package/dist/main/cli.js',
      // The host's render of the page's first screen, with what it needs bundled in (React is a devDependency).
      'package/dist/server-render/first-screen.js',
      'package/scripts/check-native-modules.mjs',
      'package/README.md',
    ])
      assert.ok(files.includes(file), `${file} is in the package`);
    assert.ok(
      files.some((file) => file.startsWith('package/dist/renderer/')),
      'the page',
    );
    // The sandbox launcher, where the build had a C compiler (scripts/build-launcher.ts), executable.
    const launcher = await access(join(repo, 'dist', 'native', 'sandbox-enter')).then(
      () => true,
      () => false,
    );
    if (launcher) {
      const { stdout: listing } = await run('tar', ['-tvzf', tarball], { maxBuffer: 64 * 1024 * 1024 });
      assert.match(listing, /^-rwxr-xr-x .* package\/dist\/native\/sandbox-enter$/m, 'the sandbox launcher, executable');
    }
    const unwanted = files.filter(
      (file) =>
        /\.test\.js$|\.map$|\.ts$/.test(file) ||
        /^package\/(e2e|bench|test|main|common|renderer|preload|\.test-build|node_modules)\//.test(file) ||
        /^package\/dist\/(e2e|bench|test)\//.test(file) ||
        /^package\/scripts\/(?!check-native-modules\.mjs$)/.test(file),
    );
    assert.deepEqual(unwanted, []);
  });

  it('installs with npm install -g and runs with only its runtime dependencies', { skip: skipInstall }, async () => {
    const prefix = join(dir, 'prefix');
    // The user's npm settings (its registry, its certificates) as they are; the packages already fetched first.
    const env = {
      ...process.env,
      npm_config_prefer_offline: 'true',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
    };
    const installed = await run('npm', ['install', '-g', '--prefix', prefix, tarball], {
      env,
      timeout: INSTALL_MS,
      maxBuffer: 64 * 1024 * 1024,
    });
    const bin = join(prefix, 'bin', 'persona-mcp-workspace');
    const version = await run(bin, ['--version'], { env });
    assert.equal(version.stdout, `${pkg.version}\n`);
    const help = await run(bin, ['--help'], { env });
    assert.match(help.stdout, /^Usage:\n {2}persona-mcp-workspace \[--port N\]/);
    const status = await run(bin, ['status'], { env: { ...env, WORKSPACE_STATE_DIR: join(dir, 'state') } });
    assert.match(status.stdout, /^No server runs on the state dir /);

    const installedRoot = join(prefix, 'lib', 'node_modules', 'persona-mcp-workspace');
    // The sandbox launcher, where the build made one, runs where it is installed.
    if (
      await access(join(repo, 'dist', 'native', 'sandbox-enter')).then(
        () => true,
        () => false,
      )
    ) {
      const launcher = await run(join(installedRoot, 'dist', 'native', 'sandbox-enter'), ['--version']);
      assert.equal(launcher.stdout, 'sandbox-enter 1\n');
    }

    // Its own dependencies and nothing of the tests' or the build's.
    const modules = join(installedRoot, 'node_modules');
    const present = new Set(await readdir(modules));
    for (const name of Object.keys(pkg.dependencies)) assert.ok(present.has(name.split('/')[0]!), `${name} is installed`);
    for (const name of Object.keys(pkg.devDependencies)) assert.ok(!present.has(name) || name.startsWith('@'), `${name} is not installed`);
    for (const name of ['typescript', 'tsx', 'electron', 'playwright-core', 'vite', 'eslint']) assert.ok(!present.has(name), name);
    // The install says nothing of the native modules where they built; where not, it names them.
    assert.doesNotMatch(installed.stderr + installed.stdout, /could not be checked/);
  });
});
