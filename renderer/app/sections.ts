/** The window's sections, in the rail's order; the address's hash names the open one. */
export const SECTIONS = [
  { id: 'connections', label: 'Connections' },
  { id: 'skills', label: 'Skills' },
  { id: 'access', label: 'Agent access' },
  { id: 'server', label: 'Server' },
] as const;

export type SectionId = (typeof SECTIONS)[number]['id'];

export function sectionOf(hash: string): SectionId {
  // After the section, the address may name what is open in it (#skills/deploy).
  const id = hash.replace(/^#/, '').split('/')[0];
  return SECTIONS.find((s) => s.id === id)?.id ?? 'connections';
}
