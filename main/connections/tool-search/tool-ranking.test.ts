import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SAAS_SERVICES, TASK_PHRASES } from '../../../e2e/fixtures/saas-tools.js';
import { searchHint } from './search-hint.js';
import { searchTerms } from './search-words.js';
import { ToolRanking } from './tool-ranking.js';

type Entry = { id: string; name: string; description: string; service: string };

const tools: Entry[] = SAAS_SERVICES.flatMap((s) =>
  s.tools.map((tool) => ({ id: `${s.id}/${tool.name}`, name: tool.name, description: tool.description, service: searchHint(s.name, s.description) })),
);

describe('tool ranking', () => {
  const ranking = new ToolRanking(tools);

  it('indexes the fixture: 5 services, 150 tools', () => {
    assert.equal(ranking.size, 150);
  });

  it('puts the right tool in the top 3 for at least 27 of the 30 task phrases', () => {
    const misses: string[] = [];
    for (const [phrase, expected] of TASK_PHRASES) {
      const top = ranking.search(phrase, 3).map((r) => r.tool.id);
      if (!top.some((id) => expected.includes(id))) misses.push(`${phrase} -> ${top.join(', ')}`);
    }
    assert.equal(TASK_PHRASES.length, 30);
    assert.ok(misses.length <= 3, `${30 - misses.length}/30 in the top 3; missed:\n${misses.join('\n')}`);
  });

  it('folds synonyms and word forms, so "tickets" meets "issue" and "created" meets "create"', () => {
    assert.deepEqual(searchTerms('tickets created'), searchTerms('issue create'));
    assert.deepEqual(searchTerms('listMyIssues'), searchTerms('list my issues'));
  });

  it('leaves out tools that share no word with the query, and answers nothing for an empty query', () => {
    assert.deepEqual(ranking.search('zzzz qqqq', 5), []);
    assert.deepEqual(ranking.search('', 5), []);
    assert.ok(ranking.search('Sentry', 200).every((r) => r.tool.id.startsWith('sentry/')));
  });

  it('ranks by the service name when the query names one', () => {
    const top = ranking.search('GitLab create issue', 1)[0]!;
    assert.equal(top.tool.id, 'gitlab/create_issue');
  });
});
