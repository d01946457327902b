import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { ConnectionInputError } from './errors.js';
import { loadSet } from '../../../bench/tool-search-set/set.js';
import { customName } from '../server-url.js';
import {
  gatewayToolName,
  gatewayToolNames,
  isCatalogId,
  isPersonalShapedName,
  serverNameOf,
  storeIdOf,
  unlistedCatalogId,
} from './naming.js';

const VALID_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('storeIdOf', () => {
  it('is the sha256 hex of the whole place:<user id>:<root> string', () => {
    assert.equal(storeIdOf('local', 'Crew/alpha'), sha256('place:local:Crew/alpha'));
    assert.equal(storeIdOf('local', ''), sha256('place:local:'));
    assert.equal(
      storeIdOf('token:0123456789abcdef', '_users/alice/Chats/Code/projects/42'),
      sha256('place:token:0123456789abcdef:_users/alice/Chats/Code/projects/42'),
    );
  });

  it('keeps apart every person and place, including ids with colons and slashes', () => {
    // The old sanitizer mapped all of these to one "default" store.
    const ids = [
      storeIdOf('local', 'Crew/alpha'),
      storeIdOf('local', 'Crew/beta'),
      storeIdOf('local', ''),
      storeIdOf('alice', 'Crew/alpha'),
      storeIdOf('https://idp.example/alice', 'Crew/alpha'),
      storeIdOf('token:1', 'Workflow/release'),
      storeIdOf('token:2', 'Workflow/release'),
    ];
    assert.equal(new Set(ids).size, ids.length);
    for (const id of ids) assert.match(id, /^[0-9a-f]{64}$/);
  });

  it('refuses user ids that are empty, unprintable or not well-formed unicode', () => {
    for (const userId of ['', 'a\nb', 'a\0', '\uD800x']) {
      assert.throws(() => storeIdOf(userId, 'Crew/a'), ConnectionInputError, JSON.stringify(userId));
    }
    assert.doesNotThrow(() => storeIdOf('Zoë 😀', 'Crew/a'));
  });

  it('refuses roots not in their one relative spelling', () => {
    for (const root of ['/Crew/a', 'Crew/a/', 'Crew//a', './Crew', 'Crew/../x', '..', 'Crew\\a', 'Crew/\ta']) {
      assert.throws(() => storeIdOf('local', root), /is not a place root/, JSON.stringify(root));
    }
    for (const root of ['', 'Crew/a', 'Crew/a:b', '_users/token:x/Chats/Code/projects/1', 'Workflow/re lease']) {
      assert.doesNotThrow(() => storeIdOf('local', root), JSON.stringify(root));
    }
  });
});

describe('serverNameOf', () => {
  const storeId = storeIdOf('local', 'Crew/alpha');

  it('is u<first 8 hex of the store id>__<catalog id>', () => {
    assert.equal(serverNameOf(storeId, 'gmail'), `u${storeId.slice(0, 8)}__gmail`);
    assert.equal(serverNameOf(storeId, 'mcp-linear-app-2'), `u${storeId.slice(0, 8)}__mcp-linear-app-2`);
  });

  it('gives two people in one place distinct names for the same catalog id', () => {
    assert.notEqual(serverNameOf(storeIdOf('alice', 'Crew/a'), 'gmail'), serverNameOf(storeIdOf('bob', 'Crew/a'), 'gmail'));
  });

  it('validates the catalog id and the store id', () => {
    for (const id of ['', 'Gmail', 'g_mail', 'g.mail', 'a'.repeat(33), 'gmail\n']) {
      assert.equal(isCatalogId(id), false, id);
      assert.throws(() => serverNameOf(storeId, id), /not a valid catalog id/);
    }
    assert.equal(isCatalogId('a'.repeat(32)), true);
    assert.throws(() => serverNameOf('place:local:Crew/alpha', 'gmail'), /not a store id/);
    assert.throws(() => serverNameOf(storeId.toUpperCase(), 'gmail'), /not a store id/);
  });
});

describe('isPersonalShapedName', () => {
  it('recognises anything of the u<8 hex>__ shape, whoever it belongs to', () => {
    for (const name of ['u0123abcd__gmail', 'u0123ABCD__x', 'U0123abcd__gmail', 'u00000000__', 'u12345678__Not-A-Catalog.Id']) {
      assert.equal(isPersonalShapedName(name), true, name);
    }
    for (const name of ['gmail', 'googlegmail', 'u0123abc__gmail', 'u0123abcg__gmail', 'u0123abcd_gmail', 'xu0123abcd__gmail', '']) {
      assert.equal(isPersonalShapedName(name), false, name);
    }
  });
});

describe('unlistedCatalogId', () => {
  it('is a slug of the name the person gave', () => {
    assert.equal(unlistedCatalogId('GitHub', new Set()), 'github');
    assert.equal(unlistedCatalogId('  Jira (Acme) ', new Set()), 'jira-acme');
    assert.equal(unlistedCatalogId('Café Décor', new Set()), 'cafe-decor');
    assert.equal(unlistedCatalogId('Google Calendar', new Set()), 'google-calendar');
    assert.equal(unlistedCatalogId('日本語', new Set()), 'server');
    const long = unlistedCatalogId('The Very Long Name Of An Internal Tooling Server', new Set());
    assert.ok(isCatalogId(long), long);
    assert.equal(long, 'the-very-long-name-of-an');
  });

  it("takes the first id that is neither in the catalog nor already the person's in the place", () => {
    assert.equal(unlistedCatalogId('Linear', new Set(['linear'])), 'linear-2');
    assert.equal(unlistedCatalogId('Linear', new Set(['linear', 'linear-2'])), 'linear-3');
    const full = 'a'.repeat(32);
    assert.equal(unlistedCatalogId(full, new Set([full])), `${'a'.repeat(30)}-2`);
  });
});

describe('gatewayToolNames', () => {
  const storeId = storeIdOf('local', 'Crew/alpha');
  const server = serverNameOf(storeId, 'linear');
  const other = serverNameOf(storeIdOf('alice', 'Crew/alpha'), 'linear');
  const prefix = `u${storeId.slice(0, 8)}__`;
  /** The stem of a changed tool part: what comes before its tag. */
  const toolPart = (name: string) => name.slice(name.indexOf('__', prefix.length) + 2);

  it('uses <server>__<tool> as it is when that is a valid name of at most 64 characters', () => {
    assert.equal(gatewayToolName(server, 'list_issues'), `${server}__list_issues`);
    assert.equal(gatewayToolName(server, 'Get-Issue_2'), `${server}__Get-Issue_2`);
    const longest = 'x'.repeat(64 - server.length - 2);
    assert.equal(gatewayToolName(server, longest), `${server}__${longest}`);
  });

  it("shortens the connection's id before the tool's own name, only as far as each tool needs", () => {
    const long = serverNameOf(storeId, 'github-enterprise-cloud-eu-west');
    const tools = ['get_me', 'get_pull_request_review_comments', 'list_code_scanning_alerts_for_org'];
    const names = gatewayToolNames(long, tools);
    assert.equal(names[0], `${long}__get_me`, 'fits whole');
    for (const [i, name] of names.entries()) {
      assert.ok(name.length <= 64, name);
      assert.equal(toolPart(name), tools[i], 'the tool keeps its own name');
    }
    assert.match(names[1]!, new RegExp(`^${prefix}github-enter-[0-9a-f]{6}__get_pull_request_review_comments$`));
    assert.equal(names[1]!.length, 64, 'the id keeps as much as fits');
    assert.equal(gatewayToolNames(long, tools).join(), names.join(), 'deterministic');
  });

  it('cuts a tool name only when even the shortest id does not fit, never two tools to one stem', () => {
    const tools = [
      'get_pull_request_review_comments_for_the_latest_commit',
      'get_pull_request_review_comments_for_the_latest_commit_v2',
      'get_pull_request_reviews_with_their_comments_and_authors',
      'get_pull_request_status_of_every_check_on_the_head_commit',
      'get_pull_request',
    ];
    const names = gatewayToolNames(server, tools);
    assert.equal(names[4], `${server}__get_pull_request`);
    const stems = names.slice(0, 4).map((name) => {
      assert.ok(name.length <= 64, name);
      assert.match(name, new RegExp(`^${prefix}l-[0-9a-f]{6}__[A-Za-z0-9_]+-[0-9a-f]{6}$`));
      return toolPart(name).slice(0, -7);
    });
    assert.equal(new Set(stems).size, 4, stems.join(' '));
    assert.ok(
      stems.every((stem) => stem.startsWith('get_')),
      stems.join(' '),
    );
    // The same tools listed in another order get the same names.
    const reversed = gatewayToolNames(server, [...tools].reverse()).reverse();
    assert.deepEqual(reversed, names);
  });

  it('tags names that are invalid, and never maps two that sanitize the same to one name', () => {
    const dotted = gatewayToolName(server, 'issues.list');
    assert.match(dotted, new RegExp(`^${prefix}l-[0-9a-f]{6}__issues_list-[0-9a-f]{6}$`));
    const tools = ['a.b', 'a b', 'a/b', 'a:b', 'a\u00e9b', 'a😀b', 'a_b', 'a\u0000b'];
    const names = gatewayToolNames(server, tools);
    assert.equal(new Set(names).size, names.length);
    assert.equal(names[6], `${server}__a_b`, 'the valid one stays plain');
    for (const name of names) assert.match(name, VALID_TOOL_NAME);
  });

  it('changes a kept part that ends like a tag, so that it never meets a changed one', () => {
    const hashed = gatewayToolName(server, 'a.b');
    const lookalike = toolPart(hashed); // "a_b-<6 hex>", itself a valid tool name
    const name = gatewayToolName(server, lookalike);
    assert.notEqual(name, hashed);
    assert.equal(gatewayToolName(server, 'deploy-DEADBE'), `${server}__deploy-DEADBE`);
    const taggedId = serverNameOf(storeId, 'foo-abcdef');
    assert.match(gatewayToolName(taggedId, 'x'), new RegExp(`^${prefix}foo-abcdef-[0-9a-f]{6}__x$`));
  });

  it('keeps servers apart, even when one catalog id extends another', () => {
    const base = serverNameOf(storeId, 'foo');
    const longer = serverNameOf(storeId, 'foo-bar');
    const pairs: [string, string][] = [
      [base, '-bar__x'],
      [longer, 'x'],
      [base, 'bar__x'],
      [server, 'same'],
      [other, 'same'],
      [server, 'z'.repeat(70)],
      [other, 'z'.repeat(70)],
      [serverNameOf(storeId, 'a'.repeat(32)), 'y'.repeat(40)],
      [serverNameOf(storeId, `${'a'.repeat(31)}b`), 'y'.repeat(40)],
    ];
    const names = pairs.map(([s, t]) => gatewayToolName(s, t));
    assert.equal(new Set(names).size, names.length, names.join('\n'));
  });

  it('gives distinct valid names to many random tool names', () => {
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const alphabet = [...'abAB09_-.: /é😀\uD800', '\u0000'];
    const seen = new Map<string, string>();
    for (const s of [server, other, serverNameOf(storeId, 'a-rather-long-catalog-id-here')]) {
      const tools = new Set<string>();
      for (let i = 0; i < 3000; i++) {
        const length = Math.floor(random() * 90);
        let tool = '';
        for (let c = 0; c < length; c++) tool += alphabet[Math.floor(random() * alphabet.length)];
        tools.add(tool);
      }
      const list = [...tools];
      gatewayToolNames(s, list).forEach((name, i) => {
        const key = `${s}\0${list[i]}`;
        assert.match(name, VALID_TOOL_NAME);
        const earlier = seen.get(name);
        assert.ok(earlier === undefined || earlier === key, `${JSON.stringify(key)} and ${JSON.stringify(earlier)} both map to ${name}`);
        seen.set(name, key);
      });
    }
  });

  it('accepts only connection server names', () => {
    for (const bad of ['gmail', 'u0123ABCD__gmail', 'u0123abcd__Gmail', 'u0123abcd__a__b']) {
      assert.throws(() => gatewayToolName(bad, 'tool'), ConnectionInputError, bad);
    }
  });
});

describe('the names of 156 real tools of eight servers added as unlisted connections', () => {
  const set = loadSet();
  const storeId = storeIdOf('local', '_users/alice/Chats/Code/projects/42');

  for (const named of [true, false]) {
    it(
      named
        ? 'named as the person named them: every name whole'
        : 'added with no name, by their real URLs: cut only where no other fit exists',
      () => {
        const ids = new Set<string>();
        const all: string[] = [];
        for (const service of set) {
          const catalogId = unlistedCatalogId(named ? service.name : customName(new URL(service.url)), ids);
          ids.add(catalogId);
          const server = serverNameOf(storeId, catalogId);
          const tools = service.tools.map((t) => t.name);
          const names = gatewayToolNames(server, tools);
          names.forEach((name, i) => {
            assert.match(name, VALID_TOOL_NAME);
            const tool = tools[i]!;
            if (`${server}__${tool}`.length <= 64) assert.equal(name, `${server}__${tool}`, 'whole when it fits');
            // The tool keeps its own name whenever the shortest connection part (8 characters) leaves room.
            else if (tool.length <= 64 - 11 - 2 - Math.min(8, catalogId.length)) assert.ok(name.endsWith(`__${tool}`), name);
            else assert.fail(`${tool} had to be cut: ${name}`);
          });
          if (named)
            assert.ok(
              names.every((name, i) => name === `${server}__${tools[i]}`),
              service.name,
            );
          all.push(...names);
        }
        assert.equal(all.length, 156);
        assert.equal(new Set(all).size, all.length, 'no two tools share a name');
      },
    );
  }
});
