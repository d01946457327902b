import { Tokenizer, TokenParser } from '@streamparser/json';

/** Space, tab, LF and CR: all JSON allows around a value. */
const JSON_WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/** The text was not one JSON value, or held more tokens than allowed; the message says which. */
export class JsonStreamError extends Error {
  override readonly name = 'JsonStreamError';
  constructor(
    message: string,
    readonly tooManyTokens = false,
  ) {
    super(message);
  }
}

/**
 * Parses one JSON value from UTF-8 bytes as they arrive, so that reading a body never holds its
 * bytes, its text and its value at once (`JSON.parse` needs the whole text beside its result): a
 * large string is kept only as it will be in the value. Counts the tokens as it goes and stops at
 * `maxTokens`, since what a parsed value costs beyond its bytes is about one heap object per token.
 * Same results as `JSON.parse` (a `"__proto__"` key stays an own property), but invalid UTF-8 is
 * refused rather than replaced.
 */
export class JsonStream {
  tokens = 0;
  // Strings gather in a 64 KiB buffer and join the value piece by piece: no second whole copy at the end.
  private readonly tokenizer = new Tokenizer({ stringBufferSize: 64 * 1024 });
  private readonly parser = new TokenParser({ paths: ['$'], keepStack: false });
  private value: { parsed: unknown } | undefined;
  private failure: Error | undefined;

  constructor(private readonly maxTokens: number) {
    this.tokenizer.onToken = (token) => {
      if (++this.tokens > this.maxTokens) throw new JsonStreamError(`more than ${this.maxTokens} tokens`, true);
      this.parser.write(token);
    };
    this.parser.onValue = ({ value }) => {
      this.value = { parsed: value };
    };
    // The parser's errors go through the tokenizer, which stops at the first.
    this.parser.onError = (error) => this.tokenizer.error(error);
    this.tokenizer.onError = (error) => {
      this.failure ??= error;
    };
    // Each side ends the other: the parser once the value is whole, the tokenizer at the last byte.
    this.parser.onEnd = () => {
      if (!this.tokenizer.isEnded) this.tokenizer.end();
    };
    this.tokenizer.onEnd = () => {
      if (!this.parser.isEnded) this.parser.end();
    };
  }

  write(bytes: Uint8Array): void {
    if (!this.tokenizer.isEnded) this.tokenizer.write(bytes);
    else if (!this.failure && bytes.some((byte) => !JSON_WHITESPACE.has(byte)))
      this.failure = new Error('unexpected data after the JSON value');
    this.throwIfFailed();
  }

  /** The value, once every byte was written. */
  end(): unknown {
    if (!this.tokenizer.isEnded) this.tokenizer.end();
    this.throwIfFailed();
    if (!this.value) throw new JsonStreamError('the body holds no JSON value');
    return this.value.parsed;
  }

  private throwIfFailed(): void {
    if (this.failure instanceof JsonStreamError) throw this.failure;
    if (this.failure) throw new JsonStreamError(this.failure.message);
  }
}
