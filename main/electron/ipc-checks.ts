import type { IpcChannel, IpcChannels } from '../../common/ipc.js';
import { originOf } from './window.js';

/** What the main process knows of the frame that sent an IPC message. */
export interface IpcSender {
  /** The sending frame's URL; undefined when the frame is gone (navigated away or destroyed). */
  frameUrl: string | undefined;
  /** Whether the frame is its page's top frame (not an iframe). */
  topFrame: boolean;
  /** Whether the page belongs to the app's own window, and that window is not destroyed. */
  appWindow: boolean;
}

/**
 * Every IPC handler answers only the top frame of the app's own window while it shows the control
 * plane's page: an iframe, another window, or a page of another origin (if one ever got in) is refused.
 */
export function senderAllowed(sender: IpcSender, controlOrigin: string): boolean {
  if (!sender.appWindow || !sender.topFrame || sender.frameUrl === undefined) return false;
  return originOf(sender.frameUrl) === controlOrigin;
}

export class IpcArgumentError extends Error {
  override readonly name = 'IpcArgumentError';
}

/**
 * Checks the arguments of a channel, which come from the page and so are never trusted to match
 * their types: answers them typed, or throws IpcArgumentError.
 */
export function checkArgs<C extends IpcChannel>(channel: C, args: unknown[]): IpcChannels[C]['args'] {
  const fail = (expected: string) => new IpcArgumentError(`${channel} takes ${expected}.`);
  switch (channel) {
    case 'app:config':
    case 'app:quit':
      if (args.length !== 0) throw fail('no arguments');
      break;
    case 'app:open-external':
      if (args.length !== 1 || typeof args[0] !== 'string') throw fail('one URL string');
      break;
    case 'skills:open-folder':
      if (args.length !== 1 || typeof args[0] !== 'string') throw fail('one skill name');
      break;
    case 'app:launch-at-login':
      if (args.length > 1 || (args.length === 1 && typeof args[0] !== 'boolean')) throw fail('nothing, or true or false');
      break;
    default:
      throw new IpcArgumentError(`Unknown channel ${String(channel)}.`);
  }
  return args as IpcChannels[C]['args'];
}
