import nodePath, { type PlatformPath } from 'node:path';
import { hasUnprintable } from './user-id.js';

export type PlaceKind = 'machine' | 'workflow' | 'crew' | 'work' | 'code';

/** A place: a folder of the workspace root whose connections and access are its own. */
export interface Place {
  /** Relative to the workspace root, `/`-separated, normalized; `""` for This machine. */
  readonly root: string;
  readonly kind: PlaceKind;
  /** The user id in `_users/<owner>/...`: a Work or Code project's owner. */
  readonly owner?: string;
  /** For people, e.g. "Crew alpha", "Code project 42 of alice". */
  readonly label: string;
}

/** The workspace root itself: the place of agents that name no other. */
export const THIS_MACHINE: Place = Object.freeze({ root: '', kind: 'machine', label: 'This machine' });

/** A path or root names no place, or is not acceptable; the message says why. */
export class PlacePathError extends Error {
  override readonly name = 'PlacePathError';
}

const PLACE_KINDS =
  'a place is the workspace root itself (This machine), Workflow/<name>, Crew/<id>, ' +
  '_users/<owner>/Chats/Work/projects/<id> or _users/<owner>/Chats/Code/projects/<id>';

const MAX_PATH_LENGTH = 4096;
const MAX_SEGMENT_LENGTH = 255;

/**
 * The place a path is in: any path inside a place maps to its root (`Crew/alpha/runs/12/x.txt` is
 * Crew alpha). `path` is absolute (inside the workspace root) or relative to the workspace root; it is
 * normalized lexically. `paths` are the platform's path rules (Windows takes `\` as a separator).
 */
export function placeRootOf(workspaceRoot: string, path: string, paths: PlatformPath = nodePath): Place {
  if (!paths.isAbsolute(workspaceRoot)) {
    throw new PlacePathError(`The workspace root must be an absolute path, not ${JSON.stringify(workspaceRoot)}.`);
  }
  checkText(path, 'A path');
  const root = paths.resolve(workspaceRoot);
  const relative = paths.relative(root, paths.resolve(root, path));
  if (relative === '') return THIS_MACHINE;
  const segments = relative.split(paths.sep);
  if (segments[0] === '..' || paths.isAbsolute(relative)) {
    throw new PlacePathError(`${JSON.stringify(path)} is outside the workspace ${root}: ${PLACE_KINDS}.`);
  }
  return placeFromSegments(segments, path, false);
}

/** The place whose root is exactly `root` (normalized, `/`-separated, relative to the workspace root). */
export function placeFromRoot(root: string): Place {
  checkText(root, 'A place root');
  if (root === '') return THIS_MACHINE;
  return placeFromSegments(root.split('/'), root, true);
}

/** Each kind's root, folder by folder: the names allowed there, or what the folder's name is. */
const SHAPES: Readonly<Record<string, readonly (readonly string[] | string)[]>> = {
  Workflow: [['Workflow'], 'workflow name'],
  Crew: [['Crew'], 'Crew id'],
  _users: [['_users'], 'owner', ['Chats'], ['Work', 'Code'], ['projects'], 'project id'],
};

/** The place whose root starts `segments`; `exact` requires the segments to be that root and no more. */
function placeFromSegments(segments: readonly string[], given: string, exact: boolean): Place {
  const quoted = JSON.stringify(given);
  const head = segments[0] ?? '';
  const shape = Object.hasOwn(SHAPES, head) ? SHAPES[head] : undefined;
  if (!shape) throw new PlacePathError(`${quoted} is not in a place: ${PLACE_KINDS}.`);
  shape.forEach((step, i) => {
    const segment = segments[i];
    if (segment === undefined) throw new PlacePathError(`${quoted} names no ${shape.at(-1)}: ${PLACE_KINDS}.`);
    if (typeof step === 'string') checkSegment(segment, step, quoted);
    else if (!step.includes(segment)) throw new PlacePathError(`${quoted} is not in a place: ${PLACE_KINDS}.`);
  });
  if (exact && segments.length > shape.length) throw new PlacePathError(`${quoted} is not a place root: ${PLACE_KINDS}.`);
  const root = segments.slice(0, shape.length).join('/');
  switch (head) {
    case 'Workflow':
      return { root, kind: 'workflow', label: `Workflow ${segments[1]}` };
    case 'Crew':
      return { root, kind: 'crew', label: `Crew ${segments[1]}` };
    default: {
      const [, owner, , area, , project] = segments as [string, string, string, 'Work' | 'Code', string, string];
      return { root, kind: area === 'Work' ? 'work' : 'code', owner, label: `${area} project ${project} of ${owner}` };
    }
  }
}

function checkText(text: string, what: string): void {
  if (text.length > MAX_PATH_LENGTH) throw new PlacePathError(`${what} must be at most ${MAX_PATH_LENGTH} characters.`);
  if (text.includes('\0')) throw new PlacePathError(`${what} must not contain a NUL character.`);
}

/** A name or id is one folder name that means the same on every platform and reads as what it is. */
function checkSegment(segment: string, what: string, quoted: string): void {
  const problem =
    segment === ''
      ? 'is empty'
      : segment === '.' || segment === '..'
        ? `is "${segment}"`
        : segment.includes('\\')
          ? 'contains a backslash'
          : // As for user ids: a right-to-left override or a zero-width character would make a root read as another.
            hasUnprintable(segment)
            ? 'contains a control, bidi or invisible character'
            : segment.length > MAX_SEGMENT_LENGTH
              ? `is longer than ${MAX_SEGMENT_LENGTH} characters`
              : undefined;
  if (problem) throw new PlacePathError(`In ${quoted}, the ${what} ${problem}: ${PLACE_KINDS}.`);
}
