/** Claude Code shows at most this much of a deferred tool's hint. */
export const SEARCH_HINT_MAX_CHARS = 100;

/**
 * The words a client's tool search matches a connection's tools by: the service's name first, then
 * what the catalog says it does, cut at a word to fit.
 */
export function searchHint(service: string, description: string | undefined): string {
  const full = description ? `${service}: ${description}` : service;
  if (full.length <= SEARCH_HINT_MAX_CHARS) return full;
  const cut = full.slice(0, SEARCH_HINT_MAX_CHARS - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > service.length ? cut.slice(0, space) : cut).replace(/[\s,;:.]+$/, '')}…`;
}
