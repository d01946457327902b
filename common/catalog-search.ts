/** What the search reads of a catalog entry. */
export interface Searchable {
  id: string;
  name: string;
  description: string;
}

/**
 * Filters and ranks catalog entries for the page's search box (in the page, as the person types)
 * and the API's `?search=`. Case-insensitive over name, description and id; every word of the
 * query must start a word somewhere ("hang" finds "Hangouts", not "changes"). Ranked: name starts
 * with the query, then every word starts a word of the name, then of the name or id, then of the
 * description.
 * Equal ranks keep the given order (built-in before registry). An empty query returns all entries.
 */
export function searchCatalog<T extends Searchable>(entries: readonly T[], query: string | undefined): T[] {
  const phrase = (query ?? '').trim().toLowerCase().replace(/\s+/g, ' ');
  const words = wordsOf(phrase);
  if (!words.length) return [...entries];
  const ranked: { entry: T; rank: number; index: number }[] = [];
  entries.forEach((entry, index) => {
    const name = entry.name.toLowerCase();
    const nameWords = wordsOf(name);
    const idWords = [...nameWords, ...wordsOf(entry.id.toLowerCase())];
    const allWords = [...idWords, ...wordsOf(entry.description.toLowerCase())];
    if (!startsAll(allWords, words)) return;
    const rank = name.startsWith(phrase) ? 0 : startsAll(nameWords, words) ? 1 : startsAll(idWords, words) ? 2 : 3;
    ranked.push({ entry, rank, index });
  });
  return ranked.sort((a, b) => a.rank - b.rank || a.index - b.index).map(({ entry }) => entry);
}

const wordsOf = (text: string): string[] => text.split(/[^\p{L}\p{N}]+/u).filter(Boolean);

/** Whether every query word starts one of the words. */
const startsAll = (words: string[], query: string[]): boolean => query.every((q) => words.some((w) => w.startsWith(q)));
