import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/**
 * The owner's credential stores: sealed under the place and strict policies unless the owner lifts
 * one for a place (`places unseal PLACE NAME`). Each is named as people know it (`~/.ssh`); its
 * paths are in the home folder (`~`), on each system where it lives there, and where the variable
 * that moves it points.
 */
export interface CredentialStore {
  /** What the owner names to lift it, and what a refusal names. */
  readonly name: string;
  /** What it holds, in words. */
  readonly what: string;
  /** Relative to the home folder, on every system. */
  readonly paths: readonly string[];
  /** Relative to the home folder, on macOS only / on Linux only. */
  readonly darwin?: readonly string[];
  readonly linux?: readonly string[];
  /** Variables naming where it lives instead (a list separated by colons for KUBECONFIG). */
  readonly env?: readonly string[];
}

export const CREDENTIAL_STORES: readonly CredentialStore[] = [
  { name: '~/.ssh', what: 'SSH keys', paths: ['.ssh'] },
  { name: '~/.gnupg', what: 'GPG keys', paths: ['.gnupg'], env: ['GNUPGHOME'] },
  { name: '~/.aws', what: 'AWS credentials', paths: ['.aws'], env: ['AWS_SHARED_CREDENTIALS_FILE', 'AWS_CONFIG_FILE'] },
  { name: '~/.azure', what: 'Azure logins', paths: ['.azure'], env: ['AZURE_CONFIG_DIR'] },
  { name: '~/.config/gcloud', what: 'Google Cloud logins', paths: ['.config/gcloud'], env: ['CLOUDSDK_CONFIG'] },
  { name: '~/.kube', what: 'Kubernetes credentials', paths: ['.kube'], env: ['KUBECONFIG'] },
  { name: '~/.docker/config.json', what: 'Docker registry logins', paths: ['.docker/config.json'] },
  { name: '~/.netrc', what: 'passwords for hosts (curl, git, ftp)', paths: ['.netrc'] },
  { name: '~/.npmrc', what: 'npm registry tokens', paths: ['.npmrc'], env: ['NPM_CONFIG_USERCONFIG'] },
  { name: '~/.pypirc', what: 'Python package index tokens', paths: ['.pypirc'] },
  { name: '~/.git-credentials', what: "git's saved passwords", paths: ['.git-credentials'] },
  { name: '~/.config/gh', what: "the GitHub CLI's login", paths: ['.config/gh'], env: ['GH_CONFIG_DIR'] },
  { name: '~/.password-store', what: 'the pass password store', paths: ['.password-store'], env: ['PASSWORD_STORE_DIR'] },
  {
    name: 'browser profiles',
    what: "the browsers' profiles (cookies, saved passwords, sessions)",
    paths: [],
    linux: [
      '.mozilla',
      '.config/google-chrome',
      '.config/google-chrome-beta',
      '.config/chromium',
      '.config/BraveSoftware',
      '.config/microsoft-edge',
      '.config/vivaldi',
      '.config/opera',
      'snap/firefox',
      'snap/chromium',
      '.var/app/org.mozilla.firefox',
      '.var/app/com.google.Chrome',
      '.var/app/org.chromium.Chromium',
      '.var/app/com.brave.Browser',
    ],
    darwin: [
      'Library/Application Support/Google/Chrome',
      'Library/Application Support/Chromium',
      'Library/Application Support/Firefox',
      'Library/Application Support/BraveSoftware',
      'Library/Application Support/Microsoft Edge',
      'Library/Application Support/Vivaldi',
      'Library/Application Support/Arc',
      'Library/Safari',
      'Library/Cookies',
      'Library/Containers/com.apple.Safari',
    ],
  },
  {
    name: 'shell histories',
    what: 'shell and console histories (commands typed, often with tokens in them)',
    paths: [
      '.bash_history',
      '.zsh_history',
      '.zhistory',
      '.histfile',
      '.sh_history',
      '.local/share/fish/fish_history',
      '.python_history',
      '.node_repl_history',
      '.psql_history',
      '.mysql_history',
      '.sqlite_history',
      '.irb_history',
    ],
    darwin: ['.zsh_sessions'],
    env: ['HISTFILE'],
  },
];

export function isCredentialStoreName(name: string): boolean {
  return CREDENTIAL_STORES.some((store) => store.name === name);
}

/** A path the sandbox seals, with the rule that seals it (for refusals). */
export interface SealedPath {
  /** Absolute (not yet resolved: links are resolved where the plan is made). */
  readonly path: string;
  /** The credential store's name, or the path the owner sealed. */
  readonly rule: string;
  readonly what: string;
  /** Whether it is one of the defaults, which the owner lifts with `places unseal`. */
  readonly byDefault: boolean;
}

/**
 * The paths sealed for a place: every credential store but those the owner lifted (`unseal`),
 * and the paths the owner sealed (`seal`, absolute or `~/...`).
 */
export function sealedPaths(
  seals: { readonly seal?: readonly string[]; readonly unseal?: readonly string[] },
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
): SealedPath[] {
  const home = env.HOME && isAbsolute(env.HOME) ? env.HOME : homedir();
  const lifted = new Set(seals.unseal ?? []);
  const sealed: SealedPath[] = [];
  for (const store of CREDENTIAL_STORES) {
    if (lifted.has(store.name)) continue;
    const relative = [...store.paths, ...((platform === 'darwin' ? store.darwin : store.linux) ?? [])];
    const named = (store.env ?? []).flatMap((name) => (env[name] ?? '').split(':')).filter((path) => isAbsolute(path));
    for (const path of [...relative.map((p) => join(home, p)), ...named])
      sealed.push({ path, rule: store.name, what: store.what, byDefault: true });
  }
  for (const path of seals.seal ?? [])
    sealed.push({ path: expandHome(path, home), rule: path, what: 'a path the owner sealed', byDefault: false });
  return sealed;
}

/** `~/x` as an absolute path in `home`. */
export function expandHome(path: string, home: string): string {
  return path === '~' ? home : path.startsWith('~/') ? join(home, path.slice(2)) : path;
}
