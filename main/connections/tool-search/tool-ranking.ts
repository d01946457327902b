/** A tool as tool search sees it: plain words, no protocol types. */
export interface SearchableTool {
  /** The tool's own name (without its connection's prefix), e.g. `create_issue`. */
  name: string;
  description: string;
  /** The service it belongs to: its name and what it does. */
  service: string;
}

export interface RankedTool<T> {
  tool: T;
  score: number;
}

// How much a word counts by where it appears: a tool's name says most about what it does.
const FIELD_WEIGHTS = { name: 3, service: 1.5, description: 1 } as const;
// Okapi BM25's constants; b below the usual 0.75, as short tools ("Delete a block") would otherwise outrank the right one.
const K1 = 1.2;
const B = 0.5;

const STOP_WORDS = new Set(
  'a an and are as at be by can do does for from how i in into is it its me my of on or our please show some that the their them there this to us we what when where which who why will with you your'.split(' '),
);

/**
 * Words that mean the same to someone looking for a tool, each folded into one. Both the tools and
 * the query go through this, so "ticket" finds issues and "make" finds create.
 */
const SYNONYMS: Record<string, string> = {
  ticket: 'issue', bug: 'issue', story: 'issue',
  make: 'create', new: 'create', add: 'create', file: 'create', raise: 'create', open: 'create', post: 'create', write: 'create',
  edit: 'update', change: 'update', modify: 'update', rename: 'update', move: 'transition',
  remove: 'delete', erase: 'delete',
  fetch: 'get', read: 'get', view: 'get', retrieve: 'get', details: 'get', detail: 'get',
  find: 'search', lookup: 'search', look: 'search', query: 'search', filter: 'search',
  doc: 'document', docs: 'document', wiki: 'page', article: 'page',
  exception: 'error', crash: 'error', crashes: 'error', errors: 'error', failure: 'error',
  repo: 'repository', repos: 'repository', repositories: 'repository',
  pr: 'merge', mr: 'merge', pull: 'merge',
  sprint: 'cycle', sprints: 'cycle', iteration: 'cycle',
  member: 'user', members: 'user', people: 'user', person: 'user', teammate: 'user', account: 'user',
  reply: 'comment',
  tag: 'label', tags: 'label',
  row: 'item', entry: 'item', entries: 'item', record: 'item',
  ci: 'pipeline', build: 'pipeline', rerun: 'retry', restart: 'retry', logs: 'log',
  deploy: 'release', deployment: 'release', version: 'release',
  assigned: 'assign', assignee: 'assign',
};

/** The words of a text: split at punctuation, `snake_case` and `camelCase`, stop words dropped, folded and stemmed. */
export function searchTerms(text: string): string[] {
  const words = text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0 && !STOP_WORDS.has(word));
  return words.map((word) => {
    const base = stem(word);
    return stem(SYNONYMS[word] ?? SYNONYMS[base] ?? word);
  });
}

/** A light suffix stripper: enough for "issues", "created", "assigning" to meet their base word. */
function stem(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  let w = word;
  if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us')) w = w.slice(0, -1);
  if (w.endsWith('ing') && w.length > 5) w = w.slice(0, -3);
  else if (w.endsWith('ed') && w.length > 4) w = w.slice(0, -2);
  if (w.endsWith('e') && w.length > 3) w = w.slice(0, -1);
  return w;
}

interface IndexedTool<T> {
  tool: T;
  /** Weighted count of each term over the fields. */
  frequencies: Map<string, number>;
  length: number;
}

/**
 * Ranks tools against a few words with BM25 over their name, service and description. Built once
 * per set of tools; searching costs a pass over the tools that share a word with the query.
 */
export class ToolRanking<T extends SearchableTool> {
  private readonly indexed: IndexedTool<T>[];
  private readonly postings = new Map<string, IndexedTool<T>[]>();
  private readonly averageLength: number;

  constructor(tools: readonly T[]) {
    this.indexed = tools.map((tool) => {
      const frequencies = new Map<string, number>();
      let length = 0;
      for (const field of ['name', 'service', 'description'] as const) {
        for (const term of searchTerms(tool[field])) {
          frequencies.set(term, (frequencies.get(term) ?? 0) + FIELD_WEIGHTS[field]);
          length += FIELD_WEIGHTS[field];
        }
      }
      return { tool, frequencies, length };
    });
    for (const entry of this.indexed) {
      for (const term of entry.frequencies.keys()) {
        let list = this.postings.get(term);
        if (!list) this.postings.set(term, (list = []));
        list.push(entry);
      }
    }
    this.averageLength = this.indexed.reduce((sum, entry) => sum + entry.length, 0) / Math.max(1, this.indexed.length);
  }

  get size(): number {
    return this.indexed.length;
  }

  /** The best `limit` tools for the query, best first; tools sharing no word with it are left out. */
  search(query: string, limit: number): RankedTool<T>[] {
    const scores = new Map<IndexedTool<T>, number>();
    const n = this.indexed.length;
    for (const term of new Set(searchTerms(query))) {
      const list = this.postings.get(term);
      if (!list) continue;
      const idf = Math.log(1 + (n - list.length + 0.5) / (list.length + 0.5));
      for (const entry of list) {
        const tf = entry.frequencies.get(term)!;
        const norm = tf + K1 * (1 - B + (B * entry.length) / this.averageLength);
        scores.set(entry, (scores.get(entry) ?? 0) + (idf * tf * (K1 + 1)) / norm);
      }
    }
    return [...scores]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([entry, score]) => ({ tool: entry.tool, score }));
  }
}
