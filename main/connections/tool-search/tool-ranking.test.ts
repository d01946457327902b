import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SAAS_SERVICES, TASK_PHRASES } from '../../../e2e/fixtures/saas-tools.js';
import { searchHint } from './search-hint.js';
import { queryWords, searchTerms } from './search-words.js';
import { ToolRanking } from './tool-ranking.js';

type Entry = { id: string; name: string; description: string; service: string; parameters?: string; readOnly?: boolean };

const tools: Entry[] = SAAS_SERVICES.flatMap((s) =>
  s.tools.map((tool) => ({
    id: `${s.id}/${tool.name}`,
    name: tool.name,
    description: tool.description,
    service: searchHint(s.name, s.description),
  })),
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

  it('meets word forms ("reminders created" is "reminder create") and spells out shorthand on both sides', () => {
    assert.deepEqual(searchTerms('reminders created'), searchTerms('reminder create'));
    assert.deepEqual(searchTerms('deployments'), searchTerms('deploy'));
    assert.deepEqual(searchTerms('listMyIssues'), searchTerms('list my issues'));
    assert.deepEqual(searchTerms('PR repo'), searchTerms('pull request repository'));
  });

  it("widens a query's words one way only, so PR, deploy, add and row keep their meaning", () => {
    const alternatives = (word: string) => queryWords(word).words[0]!.map((a) => a.term);
    assert.ok(alternatives('tickets').includes(searchTerms('issue')[0]!), 'a ticket may be an issue');
    assert.deepEqual(searchTerms('issue'), [searchTerms('issue')[0]], 'but an issue stays an issue');
    for (const [word, not] of [
      ['PR', 'merge'],
      ['deploy', 'release'],
      ['add', 'create'],
      ['row', 'item'],
    ] as const) {
      assert.notDeepEqual(searchTerms(word), searchTerms(not), `${word} is not ${not}`);
    }
    assert.ok(
      queryWords('ticket')
        .words[0]!.slice(1)
        .every((a) => a.weight < 1),
      'a widened word counts less than the word',
    );
  });

  it('ranks by what people ask: the review for "approve", the parameters\' words, the service named, the time said, reading for a question', () => {
    const small = new ToolRanking<Entry>([
      {
        id: 'github/merge_pull_request',
        name: 'merge_pull_request',
        description: 'Merge a pull request',
        service: 'GitHub',
        parameters: 'owner repo pull_number merge_method',
        readOnly: false,
      },
      {
        id: 'github/create_pull_request_review',
        name: 'create_pull_request_review',
        description: 'Create a review on a pull request',
        service: 'GitHub',
        parameters: 'owner repo pull_number body event APPROVE REQUEST_CHANGES COMMENT',
        readOnly: false,
      },
      {
        id: 'github/get_pull_request_reviews',
        name: 'get_pull_request_reviews',
        description: 'Get the reviews on a pull request',
        service: 'GitHub',
        parameters: 'owner repo pull_number',
        readOnly: true,
      },
      {
        id: 'github/get_file_contents',
        name: 'get_file_contents',
        description: 'Get the contents of a file or directory from a GitHub repository',
        service: 'GitHub',
        parameters: 'owner repo path Path to file, e.g. README.md branch',
      },
      {
        id: 'github/update_issue',
        name: 'update_issue',
        description: 'Update an existing issue in a GitHub repository',
        service: 'GitHub',
        parameters: 'owner repo issue_number state open closed',
      },
      {
        id: 'sentry/update_issue',
        name: 'update_issue',
        description: "Update a Sentry issue's status or assignment: resolve, ignore or reopen it.",
        service: 'Sentry',
        parameters: 'issueId status resolved ignored unresolved',
      },
      {
        id: 'slack/set_reminder',
        name: 'set_reminder',
        description: 'Set a reminder for a user',
        service: 'Slack',
        parameters: 'text time',
      },
      {
        id: 'sentry/search_events',
        name: 'search_events',
        description: 'Search events',
        service: 'Sentry',
        parameters: 'query statsPeriod Time period, e.g. 24h',
      },
      { id: 'sentry/search_docs', name: 'search_docs', description: 'Search the documentation', service: 'Sentry', parameters: 'query' },
    ]);
    const top = (query: string) => small.search(query, 1)[0]?.tool.id;
    assert.equal(top("approve Bob's PR with LGTM"), 'github/create_pull_request_review');
    assert.equal(top('who approved the last PR'), 'github/get_pull_request_reviews');
    assert.equal(top('remind me to stretch'), 'slack/set_reminder');
    assert.equal(top('show me the README'), 'github/get_file_contents');
    assert.equal(top("close issue 77 on github as won't fix"), 'github/update_issue');
    assert.equal(top('close the sentry issue'), 'sentry/update_issue');
    assert.equal(top('search what happened yesterday'), 'sentry/search_events');
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
