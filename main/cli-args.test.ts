import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { COMMAND_TABLE, didYouMean, helpText, optionsOf, parseCommand, USAGE, UsageError } from './cli-args.js';
import { PRODUCT_NAME } from './version.js';

describe('parseCommand', () => {
  it('serves by default, with the flags given', () => {
    assert.deepEqual(parseCommand([]), { kind: 'serve', flags: {} });
    assert.deepEqual(parseCommand(['--port', '9200', '--host', '0.0.0.0']), { kind: 'serve', flags: { port: 9200, host: '0.0.0.0' } });
    assert.deepEqual(parseCommand(['--no-auth']), { kind: 'serve', flags: { auth: false } });
    assert.deepEqual(parseCommand(['--client-metadata-url', 'https://a.example/c.json']), {
      kind: 'serve',
      flags: { clientMetadataUrl: 'https://a.example/c.json' },
    });
    assert.deepEqual(parseCommand(['-h']), { kind: 'help', topic: [] });
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

  it('parses connections add --command: the program, its arguments after --, variables from secrets and hosts', () => {
    assert.deepEqual(
      parseCommand([
        'connections',
        'add',
        '--workspace-path',
        'Crew/a',
        '--command',
        'npx',
        '--name',
        'Play',
        '--env',
        'API_KEY=PLAY_KEY',
        '--host',
        'cdn.example.com',
        '--',
        '-y',
        '@scope/pkg',
      ]),
      {
        kind: 'connections-add',
        workspacePath: 'Crew/a',
        local: { command: 'npx', args: ['-y', '@scope/pkg'], env: { API_KEY: 'PLAY_KEY' }, hosts: ['cdn.example.com'], name: 'Play' },
      },
    );
    // No --host: the hosts its launcher installs from are filled in when it is added.
    assert.deepEqual(parseCommand(['connections', 'add', '--command', 'uvx', '--', 'mcp-server-git']), {
      kind: 'connections-add',
      workspacePath: '',
      local: { command: 'uvx', args: ['mcp-server-git'], env: {} },
    });
    assert.throws(
      () => parseCommand(['connections', 'add', '--command', 'npx', '--url', 'https://a.example']),
      /one of --catalog ID, --url URL or --command/,
    );
    assert.throws(() => parseCommand(['connections', 'add', '--command', 'npx', '--env', 'NOVALUE']), /VAR=SECRET/);
    assert.throws(() => parseCommand(['connections', 'add', '--command', 'npx', '--header', 'X', '--secret', 'S']), /--env VAR=SECRET/);
    assert.throws(() => parseCommand(['connections', 'add', '--url', 'https://a.example', '--env', 'A=B']), /go with --command/);
  });

  it('parses connections import and clients connect', () => {
    assert.deepEqual(parseCommand(['connections', 'import', '--workspace-path', 'Crew/a']), {
      kind: 'connections-import',
      workspacePath: 'Crew/a',
      items: [],
      all: false,
      json: false,
    });
    assert.deepEqual(parseCommand(['connections', 'import', 'abc', 'def']), {
      kind: 'connections-import',
      workspacePath: '',
      items: ['abc', 'def'],
      all: false,
      json: false,
    });
    assert.throws(() => parseCommand(['connections', 'import', '--all', 'abc']), /--all or the IDs/);
    assert.deepEqual(parseCommand(['clients', 'connect', 'cursor', '--workspace-path', 'Crew/a', '--oauth', '--project']), {
      kind: 'clients-connect',
      client: 'cursor',
      workspacePath: 'Crew/a',
      auth: 'oauth',
      scope: 'project',
      replace: false,
    });
    assert.throws(() => parseCommand(['clients', 'connect', 'emacs']), /claude-desktop, cursor, vscode, claude-code/);
  });

  it('parses places network: show, off, or the hosts', () => {
    assert.deepEqual(parseCommand(['places', 'network', 'Crew/a']), { kind: 'places-network', place: 'Crew/a', json: false });
    assert.deepEqual(parseCommand(['places', 'network', 'Crew/a', 'off']), {
      kind: 'places-network',
      place: 'Crew/a',
      hosts: [],
      json: false,
    });
    assert.deepEqual(parseCommand(['places', 'network', '.', 'api.github.com', '*.npmjs.org']), {
      kind: 'places-network',
      place: '.',
      hosts: ['api.github.com', '*.npmjs.org'],
      json: false,
    });
  });

  it('parses places limits: show, set some (MiB, M or G), one or all back to the defaults', () => {
    assert.deepEqual(parseCommand(['places', 'limits', 'Crew/a']), { kind: 'places-limits', place: 'Crew/a', json: false });
    assert.deepEqual(parseCommand(['places', 'limits', 'Crew/a', 'processes=512', 'memory=4G', 'tmp=256M']), {
      kind: 'places-limits',
      place: 'Crew/a',
      limits: { processes: 512, memoryMb: 4096, tmpMb: 256 },
      json: false,
    });
    assert.deepEqual(parseCommand(['places', 'limits', '.', 'memory=300', 'tmp=default']), {
      kind: 'places-limits',
      place: '.',
      limits: { memoryMb: 300, tmpMb: undefined },
      json: false,
    });
    assert.deepEqual(parseCommand(['places', 'limits', 'Crew/a', 'default']), {
      kind: 'places-limits',
      place: 'Crew/a',
      limits: { processes: undefined, memoryMb: undefined, tmpMb: undefined },
      json: false,
    });
    assert.throws(
      () => parseCommand(['places', 'limits', 'Crew/a', 'cpus=2']),
      /"cpus=2" is not a limit: write processes=N, memory=SIZE or tmp=SIZE/,
    );
    assert.throws(() => parseCommand(['places', 'limits', 'Crew/a', 'processes=1G']), /processes=1G: give a whole number/);
    assert.throws(() => parseCommand(['places', 'limits', 'Crew/a', 'memory=2T']), /memory=2T: give a size in MiB, or like 512M or 4G/);
    assert.throws(() => parseCommand(['places', 'limits', 'Crew/a', 'default', 'tmp=1M']), /give default alone/);
  });

  it('parses places seal and unseal: show, seal paths or stores, lift stores or paths', () => {
    assert.deepEqual(parseCommand(['places', 'seal', 'Crew/a']), {
      kind: 'places-seal',
      place: 'Crew/a',
      unseal: false,
      paths: [],
      json: false,
    });
    assert.deepEqual(parseCommand(['places', 'seal', '.', '/srv/keys', '~/.ssh']), {
      kind: 'places-seal',
      place: '.',
      unseal: false,
      paths: ['/srv/keys', '~/.ssh'],
      json: false,
    });
    assert.deepEqual(parseCommand(['places', 'unseal', 'Crew/a', 'browser profiles']), {
      kind: 'places-seal',
      place: 'Crew/a',
      unseal: true,
      paths: ['browser profiles'],
      json: false,
    });
    assert.throws(() => parseCommand(['places', 'unseal', 'Crew/a']), /places unseal needs a PLACE .* and the credential stores/);
  });

  it('parses places policy: show, or set with extra folders', () => {
    assert.deepEqual(parseCommand(['places', 'policy', 'Crew/a']), { kind: 'places-policy', place: 'Crew/a', folders: [], json: false });
    assert.deepEqual(parseCommand(['places', 'policy', '.', 'strict', '--folder', '/srv/a', '--folder', 'b']), {
      kind: 'places-policy',
      place: '.',
      policy: 'strict',
      folders: ['/srv/a', 'b'],
      json: false,
    });
  });

  it('parses tool search for a token and a place: show, or set', () => {
    assert.deepEqual(parseCommand(['token', 'tool-search', 'abc']), { kind: 'token-tool-search', id: 'abc', json: false });
    assert.deepEqual(parseCommand(['token', 'tool-search', 'abc', 'off']), {
      kind: 'token-tool-search',
      id: 'abc',
      mode: 'off',
      json: false,
    });
    assert.deepEqual(parseCommand(['places', 'tool-search', '.', 'on']), {
      kind: 'places-tool-search',
      place: '.',
      mode: 'on',
      json: false,
    });
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
      [['places', 'network'], /places network needs a PLACE/],
      [['places', 'network', 'Crew/a', 'off', 'a.com'], /give off alone/],
      [['places', 'policy'], /needs a PLACE/],
      [['places', 'policy', 'Crew/a', 'place', 'extra'], /needs a PLACE/],
      [['places', 'policy', 'Crew/a', '--folder', '/srv'], /--folder goes with a policy/],
    ];
    for (const [argv, message] of cases) {
      assert.throws(
        () => parseCommand(argv),
        (e: unknown) => e instanceof UsageError && message.test(e.message),
        argv.join(' '),
      );
    }
  });

  it('parses an own OAuth app for connections edit, its secret from stdin', () => {
    assert.deepEqual(parseCommand(['connections', 'edit', 'u1__x', '--client-id', 'my-app', '--client-secret-stdin']), {
      kind: 'connections-edit',
      workspacePath: '',
      name: 'u1__x',
      edit: { own_app: { client_id: 'my-app' } },
      clientSecretFromStdin: true,
    });
    assert.deepEqual(parseCommand(['connections', 'edit', 'u1__x', '--no-own-app']), {
      kind: 'connections-edit',
      workspacePath: '',
      name: 'u1__x',
      edit: { own_app: null },
      clientSecretFromStdin: false,
    });
    assert.throws(() => parseCommand(['connections', 'edit', 'u1__x', '--client-id', 'a', '--no-own-app']), /does not go with --client-id/);
    assert.throws(() => parseCommand(['connections', 'edit', 'u1__x', '--client-secret-stdin']), /goes with --client-id/);
  });

  it('parses client credentials for connections edit, the secret or private key from stdin', () => {
    assert.deepEqual(parseCommand(['connections', 'edit', 'u1__x', '--client-credentials', 'robot', '--client-secret-stdin']), {
      kind: 'connections-edit',
      workspacePath: '',
      name: 'u1__x',
      edit: {},
      clientSecretFromStdin: true,
      credentials: { clientId: 'robot' },
    });
    assert.deepEqual(
      parseCommand([
        'connections',
        'edit',
        'u1__x',
        '--client-credentials',
        'robot',
        '--private-key-stdin',
        '--signing-algorithm',
        'RS256',
      ]),
      {
        kind: 'connections-edit',
        workspacePath: '',
        name: 'u1__x',
        edit: {},
        clientSecretFromStdin: false,
        credentials: { clientId: 'robot', privateKeyFromStdin: { algorithm: 'RS256' } },
      },
    );
    assert.deepEqual(parseCommand(['connections', 'edit', 'u1__x', '--no-client-credentials']), {
      kind: 'connections-edit',
      workspacePath: '',
      name: 'u1__x',
      edit: { client_credentials: null },
      clientSecretFromStdin: false,
    });
    const refused: [string[], RegExp][] = [
      [['--client-credentials', 'robot'], /exactly one of --client-secret-stdin or --private-key-stdin/],
      [['--client-credentials', 'robot', '--client-secret-stdin', '--private-key-stdin'], /exactly one of/],
      [['--client-credentials', 'robot', '--client-secret-stdin', '--client-id', 'app'], /does not go with --client-id/],
      [['--client-credentials', 'robot', '--client-secret-stdin', '--no-client-credentials'], /does not go with/],
      [['--private-key-stdin'], /goes with --client-credentials/],
      [['--client-credentials', 'robot', '--client-secret-stdin', '--signing-algorithm', 'ES256'], /goes with --private-key-stdin/],
      [['--client-credentials', 'robot', '--private-key-stdin', '--signing-algorithm', 'HS256'], /one of ES256, /],
    ];
    for (const [args, message] of refused)
      assert.throws(() => parseCommand(['connections', 'edit', 'u1__x', ...args]), message, args.join(' '));
  });

  it('parses secrets set, replacing a secret the place has only with --replace', () => {
    assert.deepEqual(parseCommand(['secrets', 'set', 'KEY']), { kind: 'secrets-set', workspacePath: '', name: 'KEY', replace: false });
    assert.deepEqual(parseCommand(['secrets', 'set', 'KEY', '--replace', '--workspace-path', 'Crew/a']), {
      kind: 'secrets-set',
      workspacePath: 'Crew/a',
      name: 'KEY',
      replace: true,
    });
    assert.throws(() => parseCommand(['secrets', 'remove', 'KEY', '--replace']), /--replace/);
  });

  it('parses the sign-in answers and the clients commands', () => {
    assert.deepEqual(parseCommand(['approve']), { kind: 'approve-list', json: false });
    assert.deepEqual(parseCommand(['approve', '--json']), { kind: 'approve-list', json: true });
    assert.deepEqual(parseCommand(['approve', 'ABCD-EFGH']), { kind: 'approve', code: 'ABCD-EFGH' });
    assert.deepEqual(parseCommand(['approve', 'ABCD-EFGH', '--workspace-path', 'Crew/a']), {
      kind: 'approve',
      code: 'ABCD-EFGH',
      workspacePath: 'Crew/a',
    });
    assert.deepEqual(parseCommand(['deny', 'ABCD-EFGH']), { kind: 'deny', code: 'ABCD-EFGH' });
    assert.deepEqual(parseCommand(['clients', 'list', '--json']), { kind: 'clients-list', json: true });
    assert.deepEqual(parseCommand(['clients', 'revoke', '0123456789abcdef']), { kind: 'clients-revoke', id: '0123456789abcdef' });
    const bad: Array<[string[], RegExp]> = [
      [['deny'], /needs the code/],
      [['deny', 'A', '--workspace-path', 'x'], /no place/],
      [['approve', 'A', 'B'], /one code/],
      [['approve', '--workspace-path', 'x'], /goes with a code/],
      [['clients'], /list, revoke/],
      [['clients', 'revoke'], /exactly one client ID/],
    ];
    for (const [argv, message] of bad) {
      assert.throws(
        () => parseCommand(argv),
        (e: unknown) => e instanceof UsageError && message.test(e.message),
        argv.join(' '),
      );
    }
  });
});

describe('help and typos', () => {
  // Every command line of the usage, as its words: "token create", "places unseal", "approve", ...
  const usageLines = USAGE.slice(0, USAGE.indexOf('\n\n'))
    .split('\n')
    .filter((line) => line.includes(`${PRODUCT_NAME} `));
  const commands = usageLines.flatMap((line) =>
    [...line.matchAll(new RegExp(`${PRODUCT_NAME}((?: [a-z][a-z-]*)+)`, 'g'))].map((match) => ({
      line,
      words: match[1]!.trim().split(' ').slice(0, 2),
    })),
  );

  it('answers --help, -h and help on every command and subcommand with its usage lines', () => {
    assert.ok(commands.length > 30, `found ${commands.length} commands in the usage`);
    // "help" itself answers with everything.
    for (const { line, words } of commands.filter((command) => command.words[0] !== 'help')) {
      for (const argv of [
        [...words, '--help'],
        [...words, 'ARG', '--name', 'x', '-h'],
        ['help', ...words],
      ]) {
        const command = parseCommand(argv);
        assert.equal(command.kind, 'help', argv.join(' '));
        const text = helpText((command as { topic: string[] }).topic);
        assert.ok(text.includes(line), `${argv.join(' ')} shows ${JSON.stringify(line)}`);
        assert.ok(text.length < USAGE.length / 3, `${argv.join(' ')} shows only its own lines`);
      }
    }
    assert.equal(helpText([]), USAGE);
    assert.deepEqual(parseCommand(['help', '--help']), { kind: 'help', topic: [] });
    assert.deepEqual(parseCommand(['connections', 'add', '--command', 'npx', '--', '--help']), {
      kind: 'connections-add',
      workspacePath: '',
      local: { command: 'npx', args: ['--help'], env: {} },
    });
  });

  it('names the command a typo meant, and none where nothing is near', () => {
    const cases: Array<[string[], RegExp]> = [
      [['tokn', 'list'], /Unknown command "tokn"\. Did you mean "token"\?/],
      [['conections', 'list'], /Did you mean "connections"\?/],
      [['token', 'lst'], /"token" has no command "lst"\. Did you mean "list"\? It has: create, list, revoke, tool-search\./],
      [['places', 'sael', 'Crew/a'], /Did you mean "seal"\?/],
      [['secrets', 'lsit'], /Did you mean "list"\?/],
      [['help', 'tokne'], /Did you mean "token"\?/],
      [['bogus'], /^Unknown command "bogus"\. Run with --help/],
    ];
    for (const [argv, message] of cases) {
      assert.throws(
        () => helpText((parseCommand(argv) as { topic: string[] }).topic),
        (e: unknown) => e instanceof UsageError && message.test(e.message),
        argv.join(' '),
      );
    }
    assert.equal(didYouMean('li', ['list', 'limits']), '', 'two choices start with it: neither');
    assert.equal(didYouMean('polciy', ['policy', 'network']), ' Did you mean "policy"?');
  });
});

describe('the command table (help, did you mean and completion read it)', () => {
  it('holds every command, its subcommands, options and choices as USAGE writes them', () => {
    const spec = (words: string) => COMMAND_TABLE.find((s) => s.words.join(' ') === words);
    assert.deepEqual(
      spec('token create')?.options.map((o) => `${o.name}${o.takesValue ? ' VALUE' : ''}`),
      ['--name VALUE', '--expires VALUE', '--workspace-path VALUE'],
    );
    assert.deepEqual(spec('completion')?.choices, ['bash', 'zsh', 'fish']);
    assert.deepEqual(spec('clients connect')?.choices, ['claude-desktop', 'cursor', 'vscode', 'claude-code']);
    assert.ok(spec('places unseal'), 'a second command on the same usage line');
    assert.deepEqual(
      spec('approve')?.options.map((o) => o.name),
      ['--json', '--workspace-path'],
      'both of its usage lines',
    );
    assert.deepEqual(spec('secrets set')?.options, [
      { name: '--workspace-path', takesValue: true },
      { name: '--replace', takesValue: false },
    ]);
    assert.ok(optionsOf(spec('')!).some((o) => o.name === '--version'));
  });

  it('says of each option what the parser does: a value follows it, or none does', () => {
    for (const spec of COMMAND_TABLE) {
      for (const option of optionsOf(spec)) {
        if (option.name === '--help' || option.name === '--config' || option.name === '--version') continue;
        // Last, with no value: the parser wants one exactly where the table says so.
        const argv = [...spec.words, option.name];
        const refusal = (() => {
          try {
            parseCommand(argv);
            return '';
          } catch (error) {
            return (error as Error).message;
          }
        })();
        assert.doesNotMatch(refusal, /Unknown option/, `${argv.join(' ')}: ${refusal}`);
        assert.equal(/argument missing/.test(refusal), option.takesValue, `${argv.join(' ')}: ${refusal}`);
      }
    }
  });

  it('parses --json on every command that lists or shows, and status, completion and uninstall', () => {
    assert.deepEqual(parseCommand(['secrets', 'list', '--json']), { kind: 'secrets-list', workspacePath: '', json: true });
    assert.deepEqual(parseCommand(['token', 'tool-search', 'abc', '--json']), { kind: 'token-tool-search', id: 'abc', json: true });
    assert.deepEqual(parseCommand(['places', 'policy', '.', '--json']), { kind: 'places-policy', place: '.', folders: [], json: true });
    assert.deepEqual(parseCommand(['places', 'network', '.', '--json']), { kind: 'places-network', place: '.', json: true });
    assert.deepEqual(parseCommand(['places', 'limits', '.', '--json']), { kind: 'places-limits', place: '.', json: true });
    assert.deepEqual(parseCommand(['places', 'seal', '.', '--json']), {
      kind: 'places-seal',
      place: '.',
      unseal: false,
      paths: [],
      json: true,
    });
    assert.deepEqual(parseCommand(['places', 'tool-search', '.', '--json']), { kind: 'places-tool-search', place: '.', json: true });
    assert.deepEqual(parseCommand(['status', '--json']), { kind: 'status', json: true });
    assert.deepEqual(parseCommand(['completion', 'zsh']), { kind: 'completion', shell: 'zsh' });
    assert.deepEqual(parseCommand(['uninstall', '--yes']), { kind: 'uninstall', yes: true });
    assert.throws(() => parseCommand(['completion', 'tcsh']), /completion needs one shell: bash, zsh, fish/);
    assert.throws(() => parseCommand(['secrets', 'set', 'K', '--json']), /Unknown option '--json'/);
    // Every command whose usage names --json takes it.
    const withJson = COMMAND_TABLE.filter((spec) => spec.options.some((o) => o.name === '--json'));
    assert.ok(withJson.length >= 14, withJson.map((spec) => spec.words.join(' ')).join(', '));
  });
});
