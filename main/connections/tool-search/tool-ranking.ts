import { queryWords, searchTerms, takesTime, TIME } from './search-words.js';

/** A tool as tool search sees it: plain words, no protocol types. */
export interface SearchableTool {
  /** The tool's own name (without its connection's prefix), e.g. `create_issue`. */
  name: string;
  description: string;
  /** The service it belongs to: the connection's name, then what the catalog says it does. */
  service: string;
  /** Its parameters' names, descriptions and allowed values (see parameterText). */
  parameters?: string;
  /** Whether it only reads: the upstream's readOnlyHint, else its name's first word (get, list, search, ...). */
  readOnly?: boolean;
}

export interface RankedTool<T> {
  tool: T;
  score: number;
}

type Field = 'name' | 'service' | 'description' | 'parameters';
const FIELDS: readonly Field[] = ['name', 'service', 'description', 'parameters'];
// How much a word counts by where it appears: a tool's name says most about what it does; its
// parameters say what it works on, and often in words its description leaves out.
const FIELD_WEIGHTS: Record<Field, number> = { name: 3, service: 1, description: 1, parameters: 0.5 };
// Okapi BM25's constants; b below the usual 0.75, as short tools ("Delete a block") would otherwise outrank the right one.
const K1 = 1.2;
const B = 0.5;
/** A tool of a service the query names counts this much more. */
const NAMED_SERVICE = 1.5;
/** A reading tool counts this much more for a question ("who approved ..."), a changing one for an order ("approve ..."). */
const INTENT = 1.2;
const READING_VERBS = new Set(
  [
    'get',
    'list',
    'search',
    'find',
    'read',
    'retrieve',
    'query',
    'fetch',
    'download',
    'whoami',
    'lookup',
    'describe',
    'show',
    'check',
    'analyze',
    'count',
  ].map((w) => searchTerms(w)[0]!),
);

interface IndexedTool<T> {
  tool: T;
  /** Each term's count in each field, then (once all tools are read) its weighted BM25 sum over the fields. */
  frequencies: Map<string, Record<Field, number>>;
  lengths: Record<Field, number>;
  termScores: Map<string, number>;
  /** The terms of its service's name, which a query may name. */
  serviceName: Set<string>;
  reads: boolean;
}

/**
 * Ranks tools against a few words: BM25 over each field (name, service, description, parameters),
 * weighted and summed, with the query's words widened to the words tools use for them
 * (search-words.ts). Tools of a service the query names, and tools that read when the query asks
 * (or change when it orders), count more. Built once per set of tools; a search scores only the
 * tools that share a term with the query.
 */
export class ToolRanking<T extends SearchableTool> {
  private readonly indexed: IndexedTool<T>[];
  private readonly postings = new Map<string, IndexedTool<T>[]>();

  constructor(tools: readonly T[]) {
    this.indexed = tools.map((tool) => {
      const frequencies = new Map<string, Record<Field, number>>();
      const lengths = { name: 0, service: 0, description: 0, parameters: 0 };
      for (const field of FIELDS) {
        for (const term of searchTerms(tool[field] ?? '')) {
          let counts = frequencies.get(term);
          if (!counts) frequencies.set(term, (counts = { name: 0, service: 0, description: 0, parameters: 0 }));
          counts[field] += 1;
          lengths[field] += 1;
        }
      }
      if (takesTime(searchTerms(tool.parameters ?? ''))) {
        frequencies.set(TIME, { name: 0, service: 0, description: 0, parameters: 1 });
        lengths.parameters += 1;
      }
      const serviceName = new Set(searchTerms(tool.service.split(':')[0]!));
      const reads = tool.readOnly ?? READING_VERBS.has(searchTerms(tool.name)[0] ?? '');
      return { tool, frequencies, lengths, termScores: new Map<string, number>(), serviceName, reads };
    });
    for (const entry of this.indexed) {
      for (const term of entry.frequencies.keys()) {
        let list = this.postings.get(term);
        if (!list) this.postings.set(term, (list = []));
        list.push(entry);
      }
    }
    const count = Math.max(1, this.indexed.length);
    const averages = { name: 0, service: 0, description: 0, parameters: 0 };
    for (const field of FIELDS) averages[field] = Math.max(1, this.indexed.reduce((sum, entry) => sum + entry.lengths[field], 0) / count);
    // What a term is worth in a tool does not depend on the query: computed once.
    for (const entry of this.indexed) {
      for (const [term, counts] of entry.frequencies) {
        let sum = 0;
        for (const field of FIELDS) {
          const tf = counts[field];
          if (tf > 0) sum += (FIELD_WEIGHTS[field] * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * entry.lengths[field]) / averages[field]));
        }
        entry.termScores.set(term, sum);
      }
      entry.frequencies.clear();
    }
  }

  get size(): number {
    return this.indexed.length;
  }

  /** The best `limit` tools for the query, best first; tools sharing no word with it are left out. */
  search(query: string, limit: number): RankedTool<T>[] {
    const { words, asks } = queryWords(query);
    const scores = new Map<IndexedTool<T>, number>();
    const named = new Set<string>();
    for (const alternatives of words) {
      // A word counts once per tool, by the best of what it may mean there.
      const best = new Map<IndexedTool<T>, number>();
      for (const { term, weight } of alternatives) {
        const list = this.postings.get(term);
        if (!list) continue;
        const idf = Math.log(1 + (this.indexed.length - list.length + 0.5) / (list.length + 0.5));
        for (const entry of list) {
          if (weight === 1 && entry.serviceName.has(term)) named.add(term);
          const score = weight * idf * entry.termScores.get(term)!;
          if (score > (best.get(entry) ?? 0)) best.set(entry, score);
        }
      }
      for (const [entry, score] of best) scores.set(entry, (scores.get(entry) ?? 0) + score);
    }
    const ranked: RankedTool<T>[] = [];
    for (const [entry, score] of scores) {
      let final = score;
      if (named.size && [...named].some((term) => entry.serviceName.has(term))) final *= NAMED_SERVICE;
      if (asks !== undefined && entry.reads === asks) final *= INTENT;
      ranked.push({ tool: entry.tool, score: final });
    }
    return ranked.sort((a, b) => b.score - a.score).slice(0, limit);
  }
}
