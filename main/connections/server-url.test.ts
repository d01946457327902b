import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isCatalogId } from './store/naming.js';
import { customId, customName } from './server-url.js';

describe('names of a server added by URL', () => {
  it('come from host, port and path, so two servers on one host differ', () => {
    assert.equal(customId(new URL('https://mcp.example.com/mcp')), 'custom-mcp-example-com-mcp');
    assert.equal(customId(new URL('http://127.0.0.1:8080/a/mcp')), 'custom-127-0-0-1-8080-a-mcp');
    assert.notEqual(customId(new URL('https://tools.example.com/one/mcp')), customId(new URL('https://tools.example.com/two/mcp')));
    assert.equal(customName(new URL('https://mcp.example.com/mcp')), 'mcp.example.com');
    assert.equal(customName(new URL('https://tools.example.com/one/mcp/')), 'tools.example.com/one/mcp');
  });

  it('stay catalog ids when long, keeping two long paths apart by a hash of the whole URL', () => {
    const a = customId(new URL('https://a-very-long-host-name.example.com/services/alpha/mcp'));
    const b = customId(new URL('https://a-very-long-host-name.example.com/services/beta/mcp'));
    for (const id of [a, b]) assert.ok(isCatalogId(id) && !id.endsWith('-'), id);
    assert.notEqual(a, b);
    assert.match(a, /^custom-a-very-long-host-n-[0-9a-f]{6}$/);
  });
});
