import type { WaitingAgentSignIn } from '../../common/api/agent-sign-ins.js';

// The desktop app's question to the owner when an agent asks to sign in, as data, so that what it
// says and what each button does is tested without Electron.

export type PromptAnswer = 'approve' | 'deny' | 'later';

export interface SignInDialog {
  title: string;
  message: string;
  detail: string;
  buttons: string[];
  defaultId: number;
  cancelId: number;
}

const BUTTONS: Array<[string, PromptAnswer]> = [
  ['Allow', 'approve'],
  ['Deny', 'deny'],
  ['Decide later', 'later'],
];

/** "Allow ... to work on this machine in ...?", with Allow, Deny and Decide later (the default, so Enter or Esc never approves). */
export function signInDialog(request: WaitingAgentSignIn): SignInDialog {
  const place = request.askedPlace?.label ?? 'This machine';
  const later = BUTTONS.findIndex(([, answer]) => answer === 'later');
  return {
    title: 'An agent asks to sign in',
    message: `Allow ${request.clientName} to work on this machine in ${place}?`,
    detail:
      `Code ${request.code}: check that the agent's sign-in page shows the same code.\n` +
      `Asked at ${new Date(request.createdAt).toLocaleTimeString()}${request.from ? ` from ${request.from}` : ''}.\n` +
      `The answer goes to ${request.redirectUri}.\n` +
      `To allow it in another place, use Agent access in the window. Unanswered, it is refused at ${new Date(request.expiresAt).toLocaleTimeString()}.`,
    buttons: BUTTONS.map(([label]) => label),
    defaultId: later,
    cancelId: later,
  };
}

/** What the clicked button means; anything unknown is "later": nothing is approved by accident. */
export function answerOf(buttonIndex: number): PromptAnswer {
  return BUTTONS[buttonIndex]?.[1] ?? 'later';
}

/** Which waiting requests have not been put to the owner yet; each is asked once. */
export class PromptedSignIns {
  private readonly asked = new Set<string>();

  fresh(pending: readonly WaitingAgentSignIn[]): WaitingAgentSignIn[] {
    const waiting = new Set(pending.map((r) => r.code));
    for (const code of this.asked) if (!waiting.has(code)) this.asked.delete(code);
    const fresh = pending.filter((r) => !this.asked.has(r.code));
    for (const r of fresh) this.asked.add(r.code);
    return fresh;
  }
}
