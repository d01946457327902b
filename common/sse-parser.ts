/** One server-sent event: its type (`message` unless named) and its data lines joined by "\n". */
export interface SseEvent {
  event: string;
  data: string;
}

/**
 * Splits a text/event-stream into events as its chunks arrive (the WHATWG "event stream
 * interpretation"): lines end with CRLF, LF or CR, `:` starts a comment, an empty line dispatches.
 * Only `event` and `data` matter to its readers (a forwarded call, the page's change events); `id`
 * and `retry` serve resumption, which neither uses: a forwarded call fails on a broken stream, and
 * the page fetches everything again when its stream comes back.
 */
export class SseParser {
  private buffer = '';
  private event = '';
  private data: string[] = [];

  /** Feeds decoded text; returns the events it completed. */
  push(text: string): SseEvent[] {
    this.buffer += text;
    const events: SseEvent[] = [];
    let start = 0;
    for (;;) {
      const lf = this.buffer.indexOf('\n', start);
      const cr = this.buffer.indexOf('\r', start);
      const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
      if (end === -1) break;
      // A CR at the very end may be the first half of a CRLF split across chunks: wait for the next one.
      if (end === cr && cr === this.buffer.length - 1) break;
      const line = this.buffer.slice(start, end);
      start = end === cr && this.buffer[cr + 1] === '\n' ? cr + 2 : end + 1;
      const event = this.line(line);
      if (event) events.push(event);
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }

  private line(line: string): SseEvent | undefined {
    if (line === '') {
      if (this.data.length === 0) {
        this.event = '';
        return undefined;
      }
      const event = { event: this.event || 'message', data: this.data.join('\n') };
      this.event = '';
      this.data = [];
      return event;
    }
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    return undefined;
  }
}
