/** A request the page's API refuses before doing anything: not JSON, so possibly a form posted by another site. */
export class NotJsonError extends Error {
  override readonly name = 'NotJsonError';
}
