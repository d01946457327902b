import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { WaitingAgentSignIn } from '../../common/api/agent-sign-ins.js';
import { answerOf, PromptedSignIns, signInDialog } from './agent-sign-in-prompt.js';

const request = (code: string, extra: Partial<WaitingAgentSignIn> = {}): WaitingAgentSignIn => ({
  code,
  clientName: 'Claude Code',
  redirectUri: 'http://127.0.0.1:5555/callback',
  createdAt: '2026-01-01T00:00:00.000Z',
  expiresAt: '2026-01-01T00:10:00.000Z',
  ...extra,
});

describe('the desktop sign-in prompt', () => {
  it('asks to allow the client in the place it named, showing the code and where the answer goes', () => {
    const dialog = signInDialog(request('ABCD-EFGH', { askedPlace: { root: 'Crew/a', label: 'Crew a' } }));
    assert.equal(dialog.message, 'Allow Claude Code to work on this machine in Crew a?');
    assert.match(dialog.detail, /Code ABCD-EFGH/);
    assert.match(dialog.detail, /http:\/\/127\.0\.0\.1:5555\/callback/);
    assert.equal(signInDialog(request('ABCD-EFGH')).message, 'Allow Claude Code to work on this machine in This machine?');
  });

  it('says where the sign-in came from and when it asked, so two clients of one name can be told apart', () => {
    const dialog = signInDialog(request('ABCD-EFGH', { from: '192.0.2.7' }));
    const asked = new Date('2026-01-01T00:00:00.000Z').toLocaleTimeString();
    assert.match(dialog.detail, new RegExp(`Asked at ${asked.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} from 192\\.0\\.2\\.7\\.`));
    assert.doesNotMatch(signInDialog(request('ABCD-EFGH')).detail, / from /);
  });

  it('maps Allow and Deny, and never approves by default, by Esc or by an unknown button', () => {
    const dialog = signInDialog(request('ABCD-EFGH'));
    assert.equal(answerOf(dialog.buttons.indexOf('Allow')), 'approve');
    assert.equal(answerOf(dialog.buttons.indexOf('Deny')), 'deny');
    assert.equal(answerOf(dialog.defaultId), 'later');
    assert.equal(answerOf(dialog.cancelId), 'later');
    assert.equal(answerOf(7), 'later');
  });

  it('puts each waiting request to the owner once', () => {
    const prompted = new PromptedSignIns();
    assert.deepEqual(
      prompted.fresh([request('AAAA-AAAA')]).map((r) => r.code),
      ['AAAA-AAAA'],
    );
    assert.deepEqual(
      prompted.fresh([request('AAAA-AAAA'), request('BBBB-BBBB')]).map((r) => r.code),
      ['BBBB-BBBB'],
    );
    assert.deepEqual(prompted.fresh([]), []);
  });
});
