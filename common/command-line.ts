/**
 * A command line as a person pastes it from a server's README (`npx -y @scope/server --dir "My
 * Files"`) split into its words the way a POSIX shell splits them: blanks separate words, single
 * quotes keep everything, double quotes keep all but `\"`, `\\`, `` \` `` and `\$`, a backslash outside
 * quotes keeps the next character. Nothing is expanded or run: no variables, globs or pipes.
 * The server shows a local server's command line quoted the same way, so it reads back as it was.
 */
export function splitCommandLine(text: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === '\\' && i + 1 < text.length && '"\\$`'.includes(text[i + 1]!)) word += text[++i];
      else word += c;
    } else if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === "'" || c === '"') {
      quote = c;
      word ??= '';
    } else if (c === '\\' && i + 1 < text.length) {
      word = (word ?? '') + text[++i];
    } else {
      word = (word ?? '') + c;
    }
  }
  if (quote) throw new CommandLineError(`A ${quote === "'" ? 'single' : 'double'} quote is not closed.`);
  if (word !== undefined) words.push(word);
  return words;
}

/** The command line cannot be split; the message says why. */
export class CommandLineError extends Error {
  override readonly name = 'CommandLineError';
}
