import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { serverInfo } from './server-info.js';

describe('serverInfo', () => {
  const base = { host: '127.0.0.1', port: 9100, auth: true, jwt: {} };

  it('names every key source the endpoint accepts besides its own tokens', () => {
    assert.deepEqual(serverInfo(base, { state: 'stopped' }, { runningCommands: 0, agentSessions: 0 }).authMode, {
      required: true,
      external: [],
    });
    const all = serverInfo(
      { ...base, jwt: { secret: 's', publicKeyPem: 'pem', jwksUrl: 'https://idp/jwks' } },
      { state: 'stopped' },
      { runningCommands: 0, agentSessions: 0 },
    );
    assert.deepEqual(all.authMode, { required: true, external: ['secret', 'public-key', 'jwks'] });
    assert.deepEqual(serverInfo({ ...base, auth: false }, { state: 'stopped' }, { runningCommands: 0, agentSessions: 0 }).authMode, {
      required: false,
    });
  });

  it('says whether only this machine or the network can reach the endpoint', () => {
    assert.equal(serverInfo(base, { state: 'stopped' }, { runningCommands: 0, agentSessions: 0 }).reachable, 'this-machine');
    assert.equal(
      serverInfo({ ...base, host: '::1' }, { state: 'stopped' }, { runningCommands: 0, agentSessions: 0 }).reachable,
      'this-machine',
    );
    assert.equal(
      serverInfo({ ...base, host: '0.0.0.0' }, { state: 'stopped' }, { runningCommands: 0, agentSessions: 0 }).reachable,
      'network',
    );
  });

  it('gives the public URL agents reach it at behind a reverse proxy, when one is set', () => {
    assert.equal(serverInfo(base, { state: 'stopped' }, { runningCommands: 0, agentSessions: 0 }).publicUrl, undefined);
    assert.equal(
      serverInfo({ ...base, publicUrl: 'https://box.example.com' }, { state: 'stopped' }, { runningCommands: 0, agentSessions: 0 })
        .publicUrl,
      'https://box.example.com',
    );
  });

  it('keeps the state as the host reports it', () => {
    const failed = serverInfo(
      base,
      { state: 'failed', error: 'Port 9100 on 127.0.0.1 is already in use.' },
      { runningCommands: 0, agentSessions: 0 },
    );
    assert.equal(failed.state, 'failed');
    assert.equal(failed.state === 'failed' && failed.error, 'Port 9100 on 127.0.0.1 is already in use.');
    assert.deepEqual(failed.listen, { host: '127.0.0.1', port: 9100 });
  });
});
