import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseSkillFile } from './skill-file.js';

// A YAML mistake in SKILL.md's frontmatter is told in plain words with the file's line, not the parser's text.

const reasonOf = (frontmatter: string) => {
  const parsed = parseSkillFile(`---\n${frontmatter}\n---\nBody\n`, 'deploy');
  assert.equal(parsed.ok, false);
  return parsed.ok ? '' : parsed.reason;
};

describe('YAML errors in plain words', () => {
  it('says a colon in a value needs quotes, on the file’s line (the frontmatter starts on line 2)', () => {
    assert.equal(
      reasonOf('name: deploy\ndescription: Use this: when shipping'),
      'the frontmatter is not valid YAML on line 3: a value holds a colon followed by a space, which YAML reads as a new field. Put the whole value in quotes',
    );
  });

  it('names a field written twice, a tab, and an unclosed quote, each with its line', () => {
    assert.match(reasonOf('name: deploy\ndescription: a\ndescription: b'), /on line 4: this field is written twice\. Keep one of them$/);
    assert.match(reasonOf('name: deploy\n\tdescription: b'), /on line 3: a tab is used to indent\. Indent with spaces$/);
    assert.match(reasonOf('name: deploy\ndescription: "unclosed'), /on line \d: a quote or bracket is opened and never closed$/);
  });

  it('never shows the parser’s column or its raw text for the errors it knows', () => {
    for (const bad of ['name: deploy\ndescription: [unclosed', 'name: @deploy\ndescription: x', 'name: deploy\ndescription: "x" y']) {
      const reason = reasonOf(bad);
      assert.doesNotMatch(reason, /column|at line|:\s*$/, reason);
      assert.match(reason, /on line \d: /);
    }
  });
});
