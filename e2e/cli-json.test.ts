// --json on the commands that list or show, and status: with no server running (the command reads
// the state itself) and through a running server, each printing the shape its schema in common/ gives.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import * as z from 'zod';
import { agentToken } from '../common/api/agent-tokens.js';
import { placePolicy, placeToolSearchAnswer, placeToolSearchSetting } from '../common/api/places.js';
import { secretNamesAnswer } from '../common/api/connections.js';
import { statusAnswer } from '../common/api/server.js';
import { DEFAULT_TOOL_SEARCH_THRESHOLD } from '../common/tool-search-mode.js';
import { checkNativeModules } from '../main/native-modules.js';
import { cliSandbox } from './fixtures/cli-process.js';

const cli = cliSandbox('pw-cli-json-');

/** Runs a command that must succeed, and parses its stdout with `schema` (strictly: no line but the JSON). */
async function json<S extends z.ZodType>(args: string[], schema: S, stdin?: string): Promise<z.infer<S>> {
  const result = await cli.run(args, {}, stdin);
  assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
  return schema.parse(JSON.parse(result.stdout));
}

describe('--json on the commands that list or show', () => {
  after(() => cli.remove());

  it('prints each as JSON with no server running', async () => {
    assert.equal((await cli.run(['secrets', 'set', 'API_KEY', '--workspace-path', 'Crew/a'], {}, 'sk-json-8812')).code, 0);
    assert.deepEqual(await json(['secrets', 'list', '--workspace-path', 'Crew/a', '--json'], secretNamesAnswer.shape.names), ['API_KEY']);
    assert.deepEqual(await json(['secrets', 'list', '--json'], secretNamesAnswer.shape.names), [], 'This machine has none');

    const created = await cli.run(['token', 'create', '--name', 'json-agent']);
    const id = /Created token (\S+)/.exec(created.stderr)?.[1];
    assert.ok(id, created.stderr);
    const [listed] = await json(['token', 'list', '--json'], z.array(agentToken));
    assert.equal(listed?.id, id);
    assert.deepEqual(await json(['token', 'tool-search', id, 'off', '--json'], agentToken), { ...listed, toolSearch: 'off' });

    const strict = await json(['places', 'policy', 'Crew/a', 'strict', '--json'], placePolicy);
    assert.equal(strict.kind, 'strict');
    assert.deepEqual(await json(['places', 'network', 'Crew/a', 'api.example.com', '--json'], placePolicy), {
      ...strict,
      network: ['api.example.com'],
    });
    assert.deepEqual((await json(['places', 'limits', 'Crew/a', 'processes=64', '--json'], placePolicy)).limits, { processes: 64 });
    assert.deepEqual((await json(['places', 'seal', 'Crew/a', '/srv/keys', '--json'], placePolicy)).seal, ['/srv/keys']);
    assert.deepEqual(await json(['places', 'tool-search', 'Crew/a', 'on', '--json'], placeToolSearchSetting.strict()), {
      workspace_path: 'Crew/a',
      label: 'Crew a',
      mode: 'on',
      threshold: DEFAULT_TOOL_SEARCH_THRESHOLD,
    });

    const status = await json(['status', '--json'], statusAnswer);
    assert.equal(status.stateDir, cli.stateDir);
    assert.equal(status.server, undefined, 'no server runs');
    assert.equal(status.nativeModulesCheckedBy, 'this command');
    // As this test's own process finds them: the same install.
    assert.deepEqual(
      status.nativeModules.map((m) => [m.name, m.loaded]),
      (await checkNativeModules()).map((m) => [m.name, m.loaded]),
    );
  });

  it('prints what the running server has, in the same shapes', async () => {
    const server = await cli.serve();
    try {
      assert.deepEqual(await json(['secrets', 'list', '--workspace-path', 'Crew/a', '--json'], secretNamesAnswer.shape.names), ['API_KEY']);
      const policy = await json(['places', 'policy', 'Crew/a', '--json'], placePolicy);
      assert.equal(policy.kind, 'strict');
      assert.ok(policy.limitsInEffect, 'the running server says what it applies');
      const toolSearch = await json(['places', 'tool-search', 'Crew/a', '--json'], placeToolSearchAnswer.strict());
      assert.equal(toolSearch.mode, 'on');
      assert.ok(toolSearch.toolCount > 0, 'the machine tools, counted by the server');

      const status = await json(['status', '--json'], statusAnswer);
      assert.equal(status.server?.state, 'running');
      assert.equal(status.server.state === 'running' && status.server.url, server.mcpUrl);
      assert.equal(status.server.pid, server.child.pid);
      assert.equal(status.nativeModulesCheckedBy, 'server');
      assert.deepEqual(
        status.nativeModules.map((m) => [m.name, m.loaded]),
        (await checkNativeModules()).map((m) => [m.name, m.loaded]),
      );

      const text = await cli.run(['status']);
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, new RegExp(`^A server runs on the state dir ${cli.stateDir} \\(pid ${server.child.pid}\\)`));
      assert.match(text.stdout, new RegExp(`\nAgent endpoint: listening on ${server.mcpUrl} \\(auth on;`));
      if (status.nativeModules.every((m) => m.loaded))
        assert.match(text.stdout, /\nOptional native modules \(as the server found them\): keytar and node-pty loaded\.\n$/);
    } finally {
      await server.stop();
    }
  });
});
