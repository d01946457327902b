import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../main/config.js';
import { decideToolSearch, parseToolSearchMode } from './tool-search-mode.js';

describe('tool search mode', () => {
  it('follows the token first, then the place, then the tool count against the threshold', () => {
    assert.deepEqual(decideToolSearch({ token: 'off', place: 'on', toolCount: 500, threshold: 40 }), { on: false, by: 'token' });
    assert.deepEqual(decideToolSearch({ token: 'auto', place: 'on', toolCount: 5, threshold: 40 }), { on: true, by: 'place' });
    assert.deepEqual(decideToolSearch({ place: 'off', toolCount: 500, threshold: 40 }), { on: false, by: 'place' });
    assert.deepEqual(decideToolSearch({ toolCount: 40, threshold: 40 }), { on: false, by: 'automatic' });
    assert.deepEqual(decideToolSearch({ toolCount: 41, threshold: 40 }), { on: true, by: 'automatic' });
  });

  it('accepts on, off and auto only', () => {
    assert.equal(parseToolSearchMode('auto'), 'auto');
    assert.throws(() => parseToolSearchMode('yes'), /must be on, off or auto/);
  });

  it('reads the threshold from WORKSPACE_TOOL_SEARCH_THRESHOLD, 40 by default', () => {
    assert.equal(loadConfig({}, {}).toolSearchThreshold, 40);
    assert.equal(loadConfig({}, { WORKSPACE_TOOL_SEARCH_THRESHOLD: '100' }).toolSearchThreshold, 100);
    assert.throws(() => loadConfig({}, { WORKSPACE_TOOL_SEARCH_THRESHOLD: 'many' }), /WORKSPACE_TOOL_SEARCH_THRESHOLD=many/);
  });
});
