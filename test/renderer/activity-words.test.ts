import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { callerWords } from '../../renderer/features/server/activity-words.js';

describe('callerWords', () => {
  it('names a client that signed in by its own name, and tokens by theirs', () => {
    assert.deepEqual(callerWords('grant:0123456789abcdef', [], 'Claude Code'), { name: 'Claude Code', detail: 'signed in, allowed by you' });
    const token = { id: '0123456789abcdef', name: 'ci agent', createdAt: '2026-01-01T00:00:00.000Z' };
    assert.deepEqual(callerWords('token:0123456789abcdef', [token]), { name: 'ci agent', detail: 'token made here' });
  });
});
