import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SEARCH_HINT_MAX_CHARS, searchHint } from './search-hint.js';

describe('search hint', () => {
  it('starts with the service name, then what the catalog says it does', () => {
    assert.equal(searchHint('Linear', 'Find, create and update Linear issues.'), 'Linear: Find, create and update Linear issues.');
  });

  it('is the service name alone for a server the catalog does not describe', () => {
    assert.equal(searchHint('Issues', undefined), 'Issues');
  });

  it('is cut at a word to fit 100 characters', () => {
    const hint = searchHint(
      'Atlassian',
      'Search, create and update Jira issues and Confluence pages, comments, sprints, boards and many other things besides.',
    );
    assert.ok(hint.length <= SEARCH_HINT_MAX_CHARS, `${hint.length}`);
    assert.match(hint, /^Atlassian: Search, create/);
    assert.match(hint, /[a-z]…$/);
  });
});
