import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readlinkSync, realpathSync, type Stats } from 'node:fs';
import { posix } from 'node:path';
import { MachineError, fileSystemError, isDirectoryError } from './errors.js';
import { realPathOf } from './sandbox/place-sandbox.js';

export type FileMode = 'read' | 'write';

/** A place's policy as the file tools apply it to real paths (PlaceSandbox under place and strict). */
export interface FileRules {
  /**
   * Throws the refusal when the policy does not let the file tools `mode` the real path `real`;
   * `requested` is the path the agent gave, for the message. `info`, the open file's, is given
   * once the file is open: what it is (a hard link to one of the app's files) is refused too.
   */
  checkFile(requested: string, real: string, mode: FileMode, info?: Stats): void;
}

/**
 * Where a file is, or is to be: its folder as a path that reaches exactly the folder that was
 * checked, and the file open when it exists. Writes make their temp file and rename it there.
 */
export interface FileSpot {
  /** The folder: its real path, or under a policy on Linux `/proc/self/fd/N` (the folder held open). */
  readonly folder: string;
  readonly name: string;
  /** The file's real path, for answers. */
  readonly path: string;
  /** The file there now, open for reading (O_NONBLOCK: a FIFO cannot hang it); the caller closes it. None yet for a new file. */
  readonly file: { fd: number; info: Stats } | undefined;
  /** Flags for every open through `folder` (macOS under a policy: no link anywhere in the path). */
  readonly openFlags: number;
  /** Closes the folder (once the work in it is done). */
  close(): void;
}

// A FIFO opened for reading would wait for a writer, a terminal would become ours: neither, ever.
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;
const MAX_HOPS = 40;
// macOS 11+: open(2) fails with ELOOP if any component of the path is a symbolic link.
const O_NOFOLLOW_ANY = 0x20000000;

export interface SpotOptions {
  /** Under place and strict: the policy's rules, checked on what is opened. */
  rules?: FileRules | undefined;
  /** Make missing parent folders (write). */
  create?: boolean;
  /** The verb for messages ("read", "write", "edit"). */
  action: string;
}

/**
 * Opens where `path` (absolute) leads: the folder, and the file if it exists (a regular file;
 * a directory, device, socket or pipe is refused). Without rules, by name, following links.
 * Under rules on Linux, through descriptors: each folder is opened and its real path taken from
 * the open descriptor (/proc/self/fd), links are read and followed by hand, and the file is opened
 * in the open folder without following a link; the rules decide on that real path before the file
 * is opened or anything is made. So an agent that swaps a folder for a link while this runs gets
 * at most what the rules allow at the moment each descriptor was taken: what is checked is what
 * is opened. Elsewhere (macOS) under rules: the real path is checked, then opened with no link
 * allowed anywhere in it (see main/machine/sandbox/README.md).
 */
export function openSpot(path: string, options: SpotOptions): FileSpot {
  const mode: FileMode = options.action === 'read' ? 'read' : 'write';
  try {
    if (!options.rules) return spotByName(path, options);
    if (process.platform === 'linux') return spotByDescriptor(path, mode, options.rules, options);
    return spotByCheckedName(path, mode, options.rules, options);
  } catch (error) {
    throw fileSystemError(error, path, options.action);
  }
}

/** The machine policy: the real path by name, as the kernel resolves it now. */
function spotByName(path: string, options: SpotOptions): FileSpot {
  let real: string;
  try {
    real = realpathSync.native(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    // No file yet (or a dangling link, which the new file replaces).
    if (options.create) mkdirSync(posix.dirname(path), { recursive: true });
    return spot(posix.dirname(path), posix.basename(path), path, undefined, 0, undefined);
  }
  const fd = openSync(real, READ_FLAGS);
  return spot(posix.dirname(real), posix.basename(real), real, openedFile(fd, path, options.action), 0, undefined);
}

/** macOS under a policy: check the real path, then open it with no link allowed in it. */
function spotByCheckedName(path: string, mode: FileMode, rules: FileRules, options: SpotOptions): FileSpot {
  const real = realPathOf(path);
  rules.checkFile(path, real, mode);
  const folder = posix.dirname(real);
  if (options.create) mkdirSync(folder, { recursive: true });
  let fd: number;
  try {
    fd = openSync(real, READ_FLAGS | O_NOFOLLOW_ANY);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    return spot(folder, posix.basename(real), real, undefined, O_NOFOLLOW_ANY, undefined);
  }
  const file = openedFile(fd, path, options.action);
  try {
    rules.checkFile(path, real, mode, file.info);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return spot(folder, posix.basename(real), real, file, O_NOFOLLOW_ANY, undefined);
}

interface OpenFolder {
  fd: number;
  /** The folder's real path, as the kernel names the open descriptor. */
  real: string;
}

/** `name` inside the open folder: a path that the kernel resolves from exactly that folder (openat). */
function inside(folder: OpenFolder, name: string): string {
  return `/proc/self/fd/${folder.fd}/${name}`;
}

/** Opens `dir` (following links) and asks the kernel where the folder it opened is. */
function openFolder(dir: string, flags = 0): OpenFolder {
  const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | flags);
  try {
    const real = readlinkSync(`/proc/self/fd/${fd}`);
    // A folder removed since it was opened has no path; (a folder really named "x (deleted)" has links).
    if (real.endsWith(' (deleted)') && fstatSync(fd).nlink === 0) throw Object.assign(new Error(`${dir} was removed`), { code: 'ENOENT' });
    return { fd, real };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

function spotByDescriptor(path: string, mode: FileMode, rules: FileRules, options: SpotOptions): FileSpot {
  let target = path;
  for (let hops = 0; hops <= MAX_HOPS; hops += 1) {
    const found = locate(target);
    const result = 'again' in found ? found : spotIn(found.folder, found.rest, target, path, mode, rules, options);
    if (!('again' in result)) return result;
    target = result.again;
  }
  throw tooManyLinks(path);
}

/**
 * The spot of `rest` (names) under the open folder `top`, which it takes over (closed unless it
 * is the spot's). `target` is the path being looked up; when a link or a change is met on the way,
 * the path to look up next.
 */
function spotIn(
  top: OpenFolder,
  rest: string[],
  target: string,
  path: string,
  mode: FileMode,
  rules: FileRules,
  options: SpotOptions,
): FileSpot | { again: string } {
  const opened = [top.fd];
  let kept: number | undefined;
  try {
    if (rest.length === 0) throw isDirectoryError(path, options.action);
    // Decided on the real path before the file is opened or a folder made.
    rules.checkFile(path, posix.join(top.real, ...rest), mode);
    let folder = top;
    if (rest.length > 1) {
      const inTheWay = lstatSync(inside(top, rest[0]!), { throwIfNoEntry: false });
      if (inTheWay?.isDirectory() || inTheWay?.isSymbolicLink()) return { again: target }; // changed meanwhile
      if (inTheWay || !options.create) throw Object.assign(new Error(`no folder ${rest[0]}`), { code: inTheWay ? 'ENOTDIR' : 'ENOENT' });
      for (const name of rest.slice(0, -1)) {
        const made = makeFolder(folder, name, path, rules);
        if (made === undefined) return { again: target };
        opened.push(made.fd);
        folder = made;
      }
    }
    const name = rest.at(-1)!;
    const real = posix.join(folder.real, name);
    let fd: number;
    try {
      fd = openSync(inside(folder, name), READ_FLAGS | constants.O_NOFOLLOW);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') {
        kept = folder.fd;
        return spot(`/proc/self/fd/${folder.fd}`, name, real, undefined, 0, folder.fd);
      }
      if (code !== 'ELOOP') throw error;
      // A link: read it, and look again from where it points.
      const link = readLinkOrUndefined(inside(folder, name));
      return { again: link === undefined ? target : posix.resolve(folder.real, link) };
    }
    const file = openedFile(fd, path, options.action);
    try {
      rules.checkFile(path, real, mode, file.info);
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    kept = folder.fd;
    return spot(`/proc/self/fd/${folder.fd}`, name, real, file, 0, folder.fd);
  } finally {
    for (const fd of opened) if (fd !== kept) closeSync(fd);
  }
}

type Located = { folder: OpenFolder; rest: string[] } | { again: string };

/**
 * The deepest folder on the way to `path` that can be opened, open, and the names below it
 * (the first of them missing or not a folder, the last the file's); or, when the first of them
 * is a link, the path it leads to.
 */
function locate(path: string): Located {
  const parts = path.split('/').filter(Boolean);
  if (parts.length === 0) return { folder: openFolder('/'), rest: [] };
  for (let depth = parts.length - 1; ; depth -= 1) {
    let folder: OpenFolder;
    try {
      folder = openFolder(`/${parts.slice(0, depth).join('/')}`);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if ((code === 'ENOENT' || code === 'ENOTDIR') && depth > 0) continue;
      throw error;
    }
    if (depth === parts.length - 1) return { folder, rest: parts.slice(depth) };
    const next = inside(folder, parts[depth]!);
    const info = lstatSync(next, { throwIfNoEntry: false });
    if (info?.isSymbolicLink()) {
      const link = readLinkOrUndefined(next);
      closeSync(folder.fd);
      return { again: link === undefined ? path : posix.resolve(folder.real, link, ...parts.slice(depth + 1)) };
    }
    if (info?.isDirectory()) {
      // It appeared since: look again.
      closeSync(folder.fd);
      return { again: path };
    }
    return { folder, rest: parts.slice(depth) };
  }
}

/**
 * Makes the folder `name` in the open folder, checked by the rules first, and opens it without
 * following a link; undefined when something else is there by then (the caller looks again).
 */
function makeFolder(folder: OpenFolder, name: string, requested: string, rules: FileRules): OpenFolder | undefined {
  const real = posix.join(folder.real, name);
  rules.checkFile(requested, real, 'write');
  try {
    mkdirSync(inside(folder, name));
    return { fd: openSync(inside(folder, name), constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW), real };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ELOOP' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/** The fstat of a file just opened: a regular file, or the descriptor is closed and the refusal thrown. */
function openedFile(fd: number, path: string, action: string): { fd: number; info: Stats } {
  const info = fstatSync(fd);
  if (info.isFile()) return { fd, info };
  closeSync(fd);
  if (info.isDirectory()) throw isDirectoryError(path, action);
  throw new MachineError(
    'not_a_file',
    `Cannot ${action} ${path}: it is not a regular file (a device, socket or pipe). Use bash to inspect it.`,
  );
}

function spot(
  folder: string,
  name: string,
  path: string,
  file: FileSpot['file'],
  openFlags: number,
  folderFd: number | undefined,
): FileSpot {
  return {
    folder,
    name,
    path,
    file,
    openFlags,
    close() {
      if (folderFd !== undefined) closeSync(folderFd);
    },
  };
}

function readLinkOrUndefined(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

function tooManyLinks(path: string): MachineError {
  return new MachineError('not_found', `Too many symbolic links in ${path} (or it kept changing while it was looked up).`);
}
