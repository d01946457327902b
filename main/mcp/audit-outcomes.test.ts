import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { callApi } from '../../test/support/control-api.js';
import { startHost, type HostFixture } from '../../test/support/host-fixture.js';

// Every call is audited with how it really ended, refused ones included.

describe('the audit log of tool calls', () => {
  let fx: HostFixture;
  let client: Client;
  let controlUrl: string;
  let adminToken: string;

  before(async () => {
    fx = await startHost();
    controlUrl = await fx.host.open();
    adminToken = await fx.host.adminToken();
    ({ client } = await fx.connect(await fx.token('auditor')));
  });
  after(() => fx.close());

  async function lastRecord(tool: string): Promise<Record<string, unknown>> {
    const { json } = await callApi(controlUrl, adminToken, 'GET', '/activity?limit=50');
    const record = (json.records as Array<Record<string, unknown>>).filter((r) => r.tool === tool).at(-1);
    assert.ok(record, `no audit record for ${tool}: ${JSON.stringify(json.records)}`);
    return record;
  }

  it('records a call to a tool that does not exist, as refused', async () => {
    const result = (await client.callTool({ name: 'no_such_tool', arguments: {} })) as CallToolResult;
    assert.equal(result.isError, true);
    const record = await lastRecord('no_such_tool');
    assert.equal(record.outcome, 'error');
    assert.match(String(record.error), /There is no tool named "no_such_tool"/);
    assert.match(String(record.caller), /^token:/);
  });

  it('records a command that timed out as a timeout, not ok', async () => {
    const result = (await client.callTool({ name: 'bash', arguments: { command: 'sleep 30', timeout: 0.5 } })) as CallToolResult;
    assert.equal((result.structuredContent as { timedOut: boolean }).timedOut, true);
    const record = await lastRecord('bash');
    assert.equal(record.outcome, 'timeout');
    assert.match(String(record.error), /ended by signal|exit code/);
  });

  it('records a command that ran to its end as ok, whatever its exit code', async () => {
    await client.callTool({ name: 'bash', arguments: { command: 'exit 3' } });
    assert.equal((await lastRecord('bash')).outcome, 'ok');
  });
});
