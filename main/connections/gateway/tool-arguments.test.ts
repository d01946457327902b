import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ToolArguments } from './tool-arguments.js';

describe('ToolArguments', () => {
  const check = new ToolArguments();
  const issue = {
    type: 'object',
    properties: {
      owner: { type: 'string' },
      repo: { type: 'string' },
      state: { type: 'string', enum: ['open', 'closed'] },
      labels: { type: 'array', items: { type: 'string' } },
    },
    required: ['owner', 'repo'],
    additionalProperties: false,
  };

  it('says what is wrong with arguments that do not fit, each problem once', () => {
    assert.deepEqual(check.problems(issue, { owner: 7, state: 'done', labels: ['a', 2], extra: true }), [
      'arguments lacks "repo", which is required',
      'arguments has "extra", which the schema does not allow',
      'arguments.owner must be string',
      'arguments.state must be one of ["open","closed"]',
      'arguments.labels.1 must be string',
    ]);
    assert.deepEqual(check.problems(issue, { owner: 'a', repo: 'b', labels: [] }), []);
    assert.deepEqual(
      check.problems(issue, undefined),
      ['arguments lacks "owner", which is required', 'arguments lacks "repo", which is required'],
      'no arguments are an empty object',
    );
  });

  it('reads draft 2020-12 schemas (as zod 4 writes them) and draft-07 ones, with the keywords of each', () => {
    const tuple2020 = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { at: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'number' }], items: false } },
    };
    assert.deepEqual(check.problems(tuple2020, { at: [1, 2] }), []);
    assert.equal(check.problems(tuple2020, { at: [1, 2, 3] }).length, 1);
    const draft7 = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { n: { type: 'integer', exclusiveMinimum: 0 } },
      definitions: { x: { type: 'string' } },
    };
    assert.deepEqual(check.problems(draft7, { n: 1 }), []);
    assert.deepEqual(check.problems(draft7, { n: 0 }), ['arguments.n must be > 0']);
  });

  it('lets through what it cannot judge: unknown keywords and formats, patterns, schemas it cannot compile', () => {
    const odd = {
      type: 'object',
      properties: { when: { type: 'string', format: 'no-such-format', 'x-vendor': 1 }, id: { type: 'string', pattern: '^(a+)+$' } },
    };
    // A pattern that backtracks catastrophically on this string is not run here.
    assert.deepEqual(check.problems(odd, { when: 'tomorrow', id: `${'a'.repeat(25)}!` }), []);
    const broken = { type: 'object', properties: { a: { $ref: '#/definitions/missing' } } };
    assert.deepEqual(check.problems(broken, { a: 1 }), []);
    const unknownDraft = { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object', required: ['a'] };
    assert.deepEqual(check.problems(unknownDraft, {}), ['arguments lacks "a", which is required'], 'an older draft is read as draft-07');
  });

  it('lists at most ten problems, and says how many more', () => {
    const many = { type: 'object', properties: Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`p${i}`, { type: 'number' }])) };
    const problems = check.problems(many, Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`p${i}`, 'x'])));
    assert.equal(problems.length, 11);
    assert.equal(problems.at(-1), 'and 5 more');
  });
});
