import { createParser } from 'eventsource-parser';

/** The data of each event in a whole text/event-stream body. */
export function sseData(body: string): string[] {
  const data: string[] = [];
  createParser({ onEvent: (event) => data.push(event.data) }).feed(body);
  return data;
}
