import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ListingTooLargeError, MAX_LISTING, UpstreamListing } from './upstream-listing.js';
import type { UpstreamTool } from './upstream-connection.js';

const tool = (name: string, extra: Partial<UpstreamTool> = {}): UpstreamTool => ({ name, inputSchema: { type: 'object' }, ...extra });

describe('an upstream listing', () => {
  it('makes names, titles and descriptions inert, also inside the schemas and annotations, leaving schema data as it was', () => {
    const listing = new UpstreamListing();
    listing.add([
      tool('ansi\x1b[31m', {
        title: 'T\x1b[1mitle\r\n',
        description: 'D\x1b]0;x\x07one\r\ntwo',
        inputSchema: {
          type: 'object',
          properties: { a: { type: 'string', title: 'A\x1b[0m', description: 'a\x1b[2J', default: 'keep\x1b[0m', enum: ['e\x1b[0m'] } },
        },
        outputSchema: { type: 'object', description: 'out\x07' },
        annotations: { title: 'An\x1b[5mnotation', readOnlyHint: true },
      }),
    ]);
    assert.deepEqual(listing.tools, [
      {
        name: 'ansi',
        title: 'Title',
        description: 'Done\ntwo',
        inputSchema: {
          type: 'object',
          properties: { a: { type: 'string', title: 'A', description: 'a', default: 'keep\x1b[0m', enum: ['e\x1b[0m'] } },
        },
        outputSchema: { type: 'object', description: 'out' },
        annotations: { title: 'Annotation', readOnlyHint: true },
      },
    ]);
  });

  it("keeps the first tool of each name after cleaning, and the upstream's own name for calls", () => {
    const listing = new UpstreamListing();
    listing.add([tool('echo\x1b[0m', { description: 'first' }), tool('echo', { description: 'second' })]);
    listing.add([tool('\x1b[0m'), tool('add')]);
    assert.deepEqual(
      listing.tools.map((t) => [t.name, t.description]),
      [
        ['echo', 'first'],
        ['add', undefined],
      ],
    );
    assert.equal(listing.upstreamName('echo'), 'echo\x1b[0m');
    assert.equal(listing.upstreamName('add'), 'add');
    assert.equal(listing.upstreamName('missing'), undefined);
  });

  it("refuses a listing that takes more than a place's tools/list can carry, counting across pages", () => {
    const listing = new UpstreamListing();
    const page = Array.from({ length: 40 }, (_, i) => tool(`t${i}`, { description: 'd'.repeat(8_000) }));
    listing.add(page.slice(0, 20));
    assert.throws(
      () => listing.add(page.slice(20).concat(page.map((t) => ({ ...t, name: `${t.name}b` })))),
      (error: unknown) => {
        assert.ok(error instanceof ListingTooLargeError);
        assert.ok(error.count < 70 && error.count * 8_000 < MAX_LISTING, String(error.count));
        assert.match(error.message, /more than 512 KB/);
        return true;
      },
    );
  });
});
