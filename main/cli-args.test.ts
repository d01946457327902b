import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCommand, UsageError } from './cli-args.js';

describe('parseCommand', () => {
  it('serves by default, with the flags given', () => {
    assert.deepEqual(parseCommand([]), { kind: 'serve', flags: {} });
    assert.deepEqual(parseCommand(['--port', '9200', '--host', '0.0.0.0']), { kind: 'serve', flags: { port: 9200, host: '0.0.0.0' } });
    assert.deepEqual(parseCommand(['--no-auth']), { kind: 'serve', flags: { auth: false } });
    assert.deepEqual(parseCommand(['-h']), { kind: 'help' });
    assert.deepEqual(parseCommand(['--version']), { kind: 'version' });
  });

  it('parses the token commands', () => {
    assert.deepEqual(parseCommand(['token', 'create', '--name', 'ci', '--expires', '7d', '--workspace-path', 'Crew/a']), {
      kind: 'token-create',
      name: 'ci',
      expires: '7d',
      workspacePath: 'Crew/a',
    });
    assert.deepEqual(parseCommand(['token', 'list', '--json']), { kind: 'token-list', json: true });
    assert.deepEqual(parseCommand(['token', 'revoke', 'abc']), { kind: 'token-revoke', id: 'abc' });
  });

  it('parses places policy: show, or set with extra folders', () => {
    assert.deepEqual(parseCommand(['places', 'policy', 'Crew/a']), { kind: 'places-policy', place: 'Crew/a', folders: [] });
    assert.deepEqual(parseCommand(['places', 'policy', '.', 'strict', '--folder', '/srv/a', '--folder', 'b']), {
      kind: 'places-policy',
      place: '.',
      policy: 'strict',
      folders: ['/srv/a', 'b'],
    });
  });

  it('parses tool search for a token and a place: show, or set', () => {
    assert.deepEqual(parseCommand(['token', 'tool-search', 'abc']), { kind: 'token-tool-search', id: 'abc' });
    assert.deepEqual(parseCommand(['token', 'tool-search', 'abc', 'off']), { kind: 'token-tool-search', id: 'abc', mode: 'off' });
    assert.deepEqual(parseCommand(['places', 'tool-search', '.', 'on']), { kind: 'places-tool-search', place: '.', mode: 'on' });
    assert.throws(() => parseCommand(['places', 'tool-search']), /needs a PLACE/);
    assert.throws(() => parseCommand(['token', 'tool-search']), /needs a token ID/);
  });

  it('explains what is wrong with bad usage', () => {
    const cases: Array<[string[], RegExp]> = [
      [['--port', '99999'], /not a port number/],
      [['--port', '-1'], /argument|port/i],
      [['--bogus'], /--help/],
      [['serve'], /Unknown command "serve"/],
      [['token'], /create, list, revoke/],
      [['token', 'create'], /--name/],
      [['token', 'revoke'], /exactly one token ID/],
      [['token', 'list', 'extra'], /does not take "extra"/],
      [['places'], /"places" needs: policy/],
      [['places', 'policy'], /needs a PLACE/],
      [['places', 'policy', 'Crew/a', 'place', 'extra'], /needs a PLACE/],
      [['places', 'policy', 'Crew/a', '--folder', '/srv'], /--folder goes with a policy/],
    ];
    for (const [argv, message] of cases) {
      assert.throws(() => parseCommand(argv), (e: unknown) => e instanceof UsageError && message.test(e.message), argv.join(' '));
    }
  });
});
