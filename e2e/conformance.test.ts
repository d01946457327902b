import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { SUITE, suiteNode } from '../test/support/conformance-suite.js';
import { startHost, type HostFixture } from '../test/support/host-fixture.js';

// The official MCP conformance suite's server scenarios that apply to any server (the others call
// the tools and prompts of its own reference server), run against our /mcp. The suite sends no
// token, so the host runs with auth off, as `--no-auth` on loopback does.

const SCENARIOS = [
  'server-initialize',
  'ping',
  'tools-list',
  'resources-list',
  'logging-set-level',
  'server-sse-multiple-streams',
  'dns-rebinding-protection',
];

describe('the official MCP conformance suite', () => {
  let fx: HostFixture;
  let node: string;
  before(async () => {
    node = suiteNode();
    fx = await startHost({ auth: false });
  });
  after(() => fx.close());

  for (const scenario of SCENARIOS) {
    it(`passes ${scenario}`, async () => {
      // The suite checks DNS-rebinding protection on a "localhost" URL.
      const url = fx.url.replace('127.0.0.1', 'localhost');
      const { stdout } = await promisify(execFile)(node, [SUITE, 'server', '--url', url, '--scenario', scenario], { timeout: 60_000 });
      const text = stdout.replace(/\u001b\[[0-9;]*m/g, '');
      const result = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(text);
      assert.ok(result, `no result line in:\n${text}`);
      const [, passed, total, failed] = result;
      assert.equal(failed, '0', text);
      assert.ok(Number(total) > 0 && passed === total, text);
    });
  }
});
