// A YAML parser's error in plain words, with the line of the file it is on: the skill editor and
// the skills list show it to people who may not know YAML's rules.

const WORDS: Record<string, string> = {
  BLOCK_AS_IMPLICIT_KEY: 'a value holds a colon followed by a space, which YAML reads as a new field. Put the whole value in quotes',
  MULTILINE_IMPLICIT_KEY: 'a field name runs over more than one line. Put each field on one line as "name: value"',
  DUPLICATE_KEY: 'this field is written twice. Keep one of them',
  MISSING_CHAR: 'a quote or bracket is opened and never closed',
  TAB_AS_INDENT: 'a tab is used to indent. Indent with spaces',
  BAD_INDENT: 'the indentation is off, or a bracket is not closed',
  BAD_SCALAR_START: 'a value starts with a character YAML keeps for itself (such as @ or `). Put the whole value in quotes',
  UNEXPECTED_TOKEN: 'there is text YAML does not expect here. If part of a value is in quotes, put the whole value in quotes',
  BAD_DQ_ESCAPE: 'a backslash in double quotes starts an unknown escape. Use single quotes, or write \\\\ for a backslash',
  MULTIPLE_DOCS: 'the frontmatter holds a second "---". Keep one block of fields between the two "---" lines',
  BAD_ALIAS: 'a value starts with * or &, which YAML reads as a reference. Put the whole value in quotes',
};

interface YamlErrorLike {
  code?: string;
  linePos?: Array<{ line: number; col: number }>;
  message?: string;
}

/**
 * What is wrong, in words, and where: `firstLine` is the file's line number of the YAML's first line.
 * An error the table does not know keeps the parser's first sentence, without its column.
 */
export function yamlErrorWords(error: unknown, firstLine: number): { line?: number; words: string } {
  const e = (error ?? {}) as YamlErrorLike;
  const words =
    (e.code && WORDS[e.code]) ??
    (e.message ?? 'YAML cannot read it')
      .split('\n')[0]!
      .replace(/ at line \d+, column \d+:?$/, '')
      .replace(/\.$/, '');
  return e.linePos?.[0] ? { line: e.linePos[0].line + firstLine - 1, words } : { words };
}
