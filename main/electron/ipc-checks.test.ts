import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkArgs, IpcArgumentError, senderAllowed } from './ipc-checks.js';

const controlOrigin = 'http://127.0.0.1:9101';
const own = { frameUrl: 'http://127.0.0.1:9101/#/connections', topFrame: true, appWindow: true };

describe('senderAllowed', () => {
  it("answers the top frame of the app's window showing the control plane", () => {
    assert.equal(senderAllowed(own, controlOrigin), true);
  });

  it('refuses frames of other origins, even on the same host', () => {
    for (const frameUrl of [
      'https://evil.example/',
      'http://127.0.0.1:9100/mcp',
      'http://localhost:9101/',
      'https://127.0.0.1:9101/',
      'data:text/html,x',
      'about:blank',
      'file:///x',
    ]) {
      assert.equal(senderAllowed({ ...own, frameUrl }, controlOrigin), false, frameUrl);
    }
  });

  it('refuses subframes, other windows, and frames or windows that are gone', () => {
    assert.equal(senderAllowed({ ...own, topFrame: false }, controlOrigin), false);
    assert.equal(senderAllowed({ ...own, appWindow: false }, controlOrigin), false);
    assert.equal(senderAllowed({ ...own, frameUrl: undefined }, controlOrigin), false);
  });
});

describe('checkArgs', () => {
  it('passes well-formed arguments through', () => {
    assert.deepEqual(checkArgs('app:config', []), []);
    assert.deepEqual(checkArgs('app:quit', []), []);
    assert.deepEqual(checkArgs('app:open-external', ['https://a.example/x']), ['https://a.example/x']);
    assert.deepEqual(checkArgs('skills:open-folder', ['pdf-tools']), ['pdf-tools']);
    assert.deepEqual(checkArgs('app:launch-at-login', []), []);
    assert.deepEqual(checkArgs('app:launch-at-login', [true]), [true]);
    assert.deepEqual(checkArgs('app:launch-at-login', [false]), [false]);
  });

  it('refuses anything else the page might send', () => {
    const bad: [Parameters<typeof checkArgs>[0], unknown[]][] = [
      ['app:config', [1]],
      ['app:quit', ['now']],
      ['app:open-external', []],
      ['app:open-external', [{ toString: () => 'https://a.example' }]],
      ['app:open-external', ['https://a.example', 'extra']],
      ['skills:open-folder', []],
      ['skills:open-folder', [['pdf-tools']]],
      ['skills:open-folder', ['a', 'b']],
      ['app:launch-at-login', ['true']],
      ['app:launch-at-login', [1]],
      ['app:launch-at-login', [true, false]],
    ];
    for (const [channel, args] of bad)
      assert.throws(() => checkArgs(channel, args), IpcArgumentError, `${channel} ${JSON.stringify(args)}`);
  });
});
