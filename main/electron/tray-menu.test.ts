import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { HostStatus } from '../../common/api/host-status.js';
import { trayMenuModel, trayStatusLine, type TrayItem } from './tray-menu.js';

/** The menu as a person reads it: one line per item, disabled items in brackets, checkboxes marked. */
function shown(items: TrayItem[]): string[] {
  return items.map((item) => {
    switch (item.kind) {
      case 'status':
        return `(${item.label})`;
      case 'separator':
        return '---';
      case 'action':
        return item.enabled ? `${item.label} → ${item.id}` : `[${item.label}]`;
      case 'checkbox':
        return `${item.checked ? '☑' : '☐'} ${item.label} → ${item.id}`;
    }
  });
}

const tail = ['Open window → open-window'];
const end = ['---', '☐ Launch at login → toggle-launch-at-login', '---', 'Quit Persona Workspace → quit'];

describe('trayMenuModel', () => {
  it('running: the URL in the status line, Stop, Copy MCP URL', () => {
    const status: HostStatus = { state: 'running', url: 'http://127.0.0.1:9100/mcp', auth: true };
    assert.deepEqual(shown(trayMenuModel(status, { launchAtLogin: false, upstreamSignIns: [] })), [
      '(Running on http://127.0.0.1:9100/mcp)',
      '---',
      'Stop server → stop',
      ...tail,
      'Copy MCP URL → copy-mcp-url',
      ...end,
    ]);
  });

  it('stopped: Start, and no URL to copy', () => {
    assert.deepEqual(shown(trayMenuModel({ state: 'stopped' }, { launchAtLogin: false, upstreamSignIns: [] })), [
      '(Stopped)',
      '---',
      'Start server → start',
      ...tail,
      '[Copy MCP URL]',
      ...end,
    ]);
  });

  it('failed: why, in the status line, and Start to try again', () => {
    const status: HostStatus = { state: 'failed', error: 'Port 9100 on 127.0.0.1 is already in use.' };
    assert.deepEqual(shown(trayMenuModel(status, { launchAtLogin: false, upstreamSignIns: [] })), [
      '(Failed: Port 9100 on 127.0.0.1 is already in use.)',
      '---',
      'Start server → start',
      ...tail,
      '[Copy MCP URL]',
      ...end,
    ]);
  });

  it('starting and stopping: neither Start nor Stop can be used until it settles', () => {
    assert.deepEqual(shown(trayMenuModel({ state: 'starting' }, { launchAtLogin: false, upstreamSignIns: [] })).slice(0, 5), [
      '(Starting…)',
      '---',
      '[Start server]',
      ...tail,
      '[Copy MCP URL]',
    ]);
    assert.deepEqual(shown(trayMenuModel({ state: 'stopping' }, { launchAtLogin: false, upstreamSignIns: [] })).slice(0, 5), [
      '(Stopping…)',
      '---',
      '[Stop server]',
      ...tail,
      '[Copy MCP URL]',
    ]);
  });

  it('shows launch at login checked when it is on, in every state', () => {
    const states: HostStatus[] = [
      { state: 'stopped' },
      { state: 'starting' },
      { state: 'running', url: 'http://h/mcp', auth: false },
      { state: 'stopping' },
      { state: 'failed', error: 'x' },
    ];
    for (const status of states) {
      const items = trayMenuModel(status, { launchAtLogin: true, upstreamSignIns: [] });
      assert.deepEqual(
        items.filter((i) => i.kind === 'checkbox'),
        [{ kind: 'checkbox', id: 'toggle-launch-at-login', label: 'Launch at login', checked: true }],
      );
      // Open window and Quit never depend on the server.
      assert.ok(items.some((i) => i.kind === 'action' && i.id === 'open-window' && i.enabled));
      assert.ok(items.some((i) => i.kind === 'action' && i.id === 'quit' && i.enabled));
    }
  });

  it('puts a waiting sign-in right under the status line; it opens the Connections screen', () => {
    const status: HostStatus = { state: 'running', url: 'http://127.0.0.1:9100/mcp', auth: true };
    const one = shown(
      trayMenuModel(status, { launchAtLogin: false, upstreamSignIns: [{ displayName: 'Issue tracker', place: 'Crew/alpha' }] }),
    );
    assert.deepEqual(one.slice(0, 3), [
      '(Running on http://127.0.0.1:9100/mcp)',
      'Issue tracker (Crew/alpha) needs you to sign in… → open-connections',
      '---',
    ]);
    const two = shown(
      trayMenuModel(status, {
        launchAtLogin: false,
        upstreamSignIns: [
          { displayName: 'A', place: 'This machine' },
          { displayName: 'B', place: 'Crew/alpha' },
        ],
      }),
    );
    assert.equal(two[1], '2 connections need you to sign in… → open-connections');
  });

  it('status line for the tooltip', () => {
    assert.equal(trayStatusLine({ state: 'running', url: 'http://[::1]:9100/mcp', auth: true }), 'Running on http://[::1]:9100/mcp');
    assert.equal(trayStatusLine({ state: 'failed', error: 'boom' }), 'Failed: boom');
  });
});
