import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { HostStatus } from '../../common/api/host-status.js';
import { trayClickAction, trayIconName, trayState, trayTooltip } from './tray-state.js';

const running: HostStatus = { state: 'running', url: 'http://127.0.0.1:9100/mcp', auth: true };
const tracker = { displayName: 'Issue tracker', place: 'Crew/alpha' };

describe('trayState', () => {
  it('running while agents can connect and no connection waits for a sign-in', () => {
    assert.equal(trayState(running, []), 'running');
    assert.equal(trayIconName(trayState(running, [])), 'tray-running');
  });

  it('attention while the server runs and a connection needs its person to sign in', () => {
    assert.equal(trayState(running, [tracker]), 'attention');
    assert.equal(trayIconName(trayState(running, [tracker])), 'tray-attention');
  });

  it('stopped whenever agents cannot connect, sign-ins or not', () => {
    const states: HostStatus[] = [
      { state: 'stopped' },
      { state: 'starting' },
      { state: 'stopping' },
      { state: 'failed', error: 'Port 9100 is in use.' },
    ];
    for (const status of states) {
      assert.equal(trayState(status, []), 'stopped', status.state);
      assert.equal(trayState(status, [tracker]), 'stopped', status.state);
    }
    assert.equal(trayIconName('stopped'), 'tray-stopped');
  });
});

describe('trayTooltip', () => {
  it('gives the state and the MCP URL', () => {
    assert.equal(trayTooltip(running, []), 'Persona Workspace: Running on http://127.0.0.1:9100/mcp');
    assert.equal(trayTooltip({ state: 'stopped' }, []), 'Persona Workspace: Stopped');
    assert.equal(trayTooltip({ state: 'failed', error: 'Port 9100 is in use.' }, []), 'Persona Workspace: Failed: Port 9100 is in use.');
  });

  it('names the connection waiting for a sign-in, or counts them', () => {
    assert.equal(
      trayTooltip(running, [tracker]),
      'Persona Workspace: Running on http://127.0.0.1:9100/mcp\nIssue tracker (Crew/alpha) needs you to sign in',
    );
    assert.equal(
      trayTooltip(running, [tracker, { displayName: 'Docs', place: 'This machine' }]).split('\n')[1],
      '2 connections need you to sign in',
    );
  });
});

describe('trayClickAction', () => {
  it('opens the window on Windows and on a Linux activation; macOS shows the menu', () => {
    assert.equal(trayClickAction('win32'), 'open-window');
    assert.equal(trayClickAction('linux'), 'open-window');
    assert.equal(trayClickAction('darwin'), 'menu');
  });
});
