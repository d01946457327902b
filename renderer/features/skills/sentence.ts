/** A reason from the skill rules ("the frontmatter has no …") as a sentence of its own. */
export function sentence(reason: string): string {
  const text = reason.charAt(0).toUpperCase() + reason.slice(1);
  return /[.!?]$/.test(text) ? text : `${text}.`;
}
