import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { searchCatalog } from './catalog-search.js';

function entry(id: string, name: string, description: string, source: 'built-in' | 'registry' = 'built-in') {
  return { id, name, description, source };
}

const entries = [
  entry('cloudflare-docs', 'Cloudflare Docs', 'Search Cloudflare developer documentation.'),
  entry('notion', 'Notion', 'Read and write pages and databases, including docs.'),
  entry('docs-hub', 'Docs Hub', 'A documentation portal.', 'registry'),
  entry('kb', 'Knowledge Base', 'Company wiki.', 'registry'),
  entry('acme-docs', 'Acme', 'Product manuals.', 'registry'),
];

const ids = (query: string | undefined) => searchCatalog(entries, query).map((e) => e.id);

describe('searchCatalog', () => {
  it('returns every entry, in the given order, for an empty or blank query', () => {
    assert.deepEqual(
      ids(undefined),
      entries.map((e) => e.id),
    );
    assert.deepEqual(
      ids('   '),
      entries.map((e) => e.id),
    );
  });

  it('ranks a name that starts with the query first, then a word of the name, then the id, then the description', () => {
    assert.deepEqual(ids('docs'), ['docs-hub', 'cloudflare-docs', 'acme-docs', 'notion']);
  });

  it('is case-insensitive and matches the id', () => {
    assert.deepEqual(ids('KB'), ['kb']);
    assert.deepEqual(ids('ACME-DOCS'), ['acme-docs']);
  });

  it('requires every word to match somewhere, in any order', () => {
    assert.deepEqual(ids('cloudflare documentation'), ['cloudflare-docs']);
    assert.deepEqual(ids('documentation cloudflare'), ['cloudflare-docs']);
    assert.deepEqual(ids('cloudflare wiki'), []);
  });

  it('matches the starts of words only, so a word inside another finds nothing', () => {
    const words = [
      entry('webflow', 'Webflow', 'Publish changes to sites.'),
      entry('hangouts', 'Hangouts', 'Chat.'),
      entry('sentry', 'Sentry', 'Errors.'),
    ];
    assert.deepEqual(
      searchCatalog(words, 'hang').map((e) => e.id),
      ['hangouts'],
    );
    assert.deepEqual(
      searchCatalog(words, 'chan').map((e) => e.id),
      ['webflow'],
    );
    assert.deepEqual(
      searchCatalog(words, 'entry').map((e) => e.id),
      [],
    );
  });

  it('ranks a name match before a description match whatever the order given', () => {
    const both = [entry('docs-portal', 'Portal', 'Linear docs.'), entry('linear', 'Linear', 'Issues.')];
    assert.deepEqual(
      searchCatalog(both, 'linear').map((e) => e.id),
      ['linear', 'docs-portal'],
    );
  });

  it('keeps the given order among equally ranked matches (the service gives built-in first)', () => {
    const tied = [entry('b', 'Tracker', 'Issues.'), entry('a', 'Tracker', 'Issues.', 'registry'), entry('c', 'Tracker', 'Issues.')];
    assert.deepEqual(
      searchCatalog(tied, 'tracker').map((e) => e.id),
      ['b', 'a', 'c'],
    );
  });
});
