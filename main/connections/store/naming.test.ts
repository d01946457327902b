import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { ConnectionInputError } from './errors.js';
import { gatewayToolName, isCatalogId, isPersonalShapedName, serverNameOf, storeIdOf } from './naming.js';

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

describe('gatewayToolName', () => {
  const server = serverNameOf(storeIdOf('local', 'Crew/alpha'), 'linear');
  const other = serverNameOf(storeIdOf('alice', 'Crew/alpha'), 'linear');

  it('uses <server>__<tool> as it is when that is a valid name of at most 64 characters', () => {
    assert.equal(gatewayToolName(server, 'list_issues'), `${server}__list_issues`);
    assert.equal(gatewayToolName(server, 'Get-Issue_2'), `${server}__Get-Issue_2`);
    const longest = 'x'.repeat(64 - server.length - 2);
    assert.equal(gatewayToolName(server, longest), `${server}__${longest}`);
  });

  it('sanitizes, cuts and tags names that are invalid or too long, deterministically', () => {
    const dotted = gatewayToolName(server, 'issues.list');
    assert.match(dotted, new RegExp(`^${server}__issues_list-[0-9a-f]{8}$`));
    assert.equal(gatewayToolName(server, 'issues.list'), dotted, 'same input, same name');

    const long = gatewayToolName(server, 'x'.repeat(64 - server.length - 1));
    assert.equal(long.length, 64);
    assert.ok(long.startsWith(`${server}__xxx`));
    assert.match(long, /-[0-9a-f]{8}$/);
  });

  it('never maps two tools that differ only in characters that sanitize the same to one name', () => {
    const names = ['a.b', 'a b', 'a/b', 'a:b', 'a\u00e9b', 'a😀b', 'a_b', 'a\u0000b'].map((tool) => gatewayToolName(server, tool));
    assert.equal(new Set(names).size, names.length);
    assert.equal(names[6], `${server}__a_b`, 'the valid one stays plain');
    for (const name of names) assert.match(name, VALID_TOOL_NAME);
  });

  it('keeps very long names that share their first 64 characters apart', () => {
    const prefix = 'y'.repeat(80);
    const names = ['', 'a', 'b', 'a'.repeat(500)].map((tail) => gatewayToolName(server, prefix + tail));
    assert.equal(new Set(names).size, names.length);
    for (const name of names) assert.equal(name.length, 64);
  });

  it('keeps unicode apart, down to lone surrogates that UTF-8 would merge', () => {
    const tools = ['café', 'cafe\u0301', 'cafè', '日本語', '日本人', '\uD800', '\uD801', '\uDC00', '😀', '😁'];
    const names = tools.map((tool) => gatewayToolName(server, tool));
    assert.equal(new Set(names).size, names.length);
    for (const name of names) assert.match(name, VALID_TOOL_NAME);
    // One code point, one "_": an emoji is not two.
    assert.match(gatewayToolName(server, '😀'), new RegExp(`^${server}___-[0-9a-f]{8}$`));
  });

  it('hashes a plain join that looks like a hashed name, so the two never meet', () => {
    const hashed = gatewayToolName(server, 'a.b');
    const lookalike = hashed.slice(server.length + 2); // "a_b-<8 hex>", itself a valid tool name
    const name = gatewayToolName(server, lookalike);
    assert.notEqual(name, hashed);
    assert.match(name, /-[0-9a-f]{8}$/);
    // A tag-like tail that is not 8 lowercase hex digits is an ordinary name.
    assert.equal(gatewayToolName(server, 'deploy-DEADBEEF'), `${server}__deploy-DEADBEEF`);
    assert.equal(gatewayToolName(server, 'deploy-abc'), `${server}__deploy-abc`);
  });

  it('keeps servers apart, even when one catalog id extends another', () => {
    const base = serverNameOf(storeIdOf('local', 'Crew/alpha'), 'foo');
    const longer = serverNameOf(storeIdOf('local', 'Crew/alpha'), 'foo-bar');
    const pairs: [string, string][] = [
      [base, '-bar__x'],
      [longer, 'x'],
      [base, 'bar__x'],
      [server, 'same'],
      [other, 'same'],
      [server, 'z'.repeat(70)],
      [other, 'z'.repeat(70)],
    ];
    const names = pairs.map(([s, t]) => gatewayToolName(s, t));
    assert.equal(new Set(names).size, names.length);
  });

  it('gives distinct valid names to many random tool names', () => {
    let seed = 42;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const alphabet = [...'abAB09_-.: /é😀\uD800', '\u0000'];
    const seen = new Map<string, string>();
    for (const s of [server, other]) {
      for (let i = 0; i < 5000; i++) {
        const length = Math.floor(random() * 90);
        let tool = '';
        for (let c = 0; c < length; c++) tool += alphabet[Math.floor(random() * alphabet.length)];
        const key = `${s}\0${tool}`;
        const name = gatewayToolName(s, tool);
        assert.match(name, VALID_TOOL_NAME);
        const earlier = seen.get(name);
        assert.ok(earlier === undefined || earlier === key, `${JSON.stringify(key)} and ${JSON.stringify(earlier)} both map to ${name}`);
        seen.set(name, key);
      }
    }
  });

  it('accepts only connection server names', () => {
    for (const bad of ['gmail', 'u0123ABCD__gmail', 'u0123abcd__Gmail', 'u0123abcd__a__b']) {
      assert.throws(() => gatewayToolName(bad, 'tool'), ConnectionInputError, bad);
    }
  });
});
