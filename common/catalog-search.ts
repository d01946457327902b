/** What the search reads of a catalog entry. */
export interface Searchable {
  id: string;
  name: string;
  description: string;
}

/**
 * Filters and ranks catalog entries for the page's search box (in the page, as the person types)
 * and the API's `?search=`. Case-insensitive over name, description and
 * id; every word of the query must match somewhere. Ranked: name starts with the query, then every
 * word starts a word of the name, then every word is in the name or id, then description matches.
 * Equal ranks keep the given order (built-in before registry). An empty query returns all entries.
 */
export function searchCatalog<T extends Searchable>(entries: readonly T[], query: string | undefined): T[] {
  const phrase = (query ?? '').trim().toLowerCase().replace(/\s+/g, ' ');
  if (!phrase) return [...entries];
  const words = phrase.split(' ');
  const ranked: { entry: T; rank: number; index: number }[] = [];
  entries.forEach((entry, index) => {
    const name = entry.name.toLowerCase();
    const id = entry.id.toLowerCase();
    const haystack = `${name} ${entry.description.toLowerCase()} ${id}`;
    if (!words.every((word) => haystack.includes(word))) return;
    ranked.push({ entry, rank: rankOf(name, id, phrase, words), index });
  });
  return ranked.sort((a, b) => a.rank - b.rank || a.index - b.index).map(({ entry }) => entry);
}

function rankOf(name: string, id: string, phrase: string, words: string[]): number {
  if (name.startsWith(phrase)) return 0;
  const nameWords = name.split(/[^a-z0-9]+/).filter(Boolean);
  if (words.every((word) => nameWords.some((nameWord) => nameWord.startsWith(word)))) return 1;
  if (words.every((word) => name.includes(word) || id.includes(word))) return 2;
  return 3;
}
