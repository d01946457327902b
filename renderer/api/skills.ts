import { queryOptions } from '@tanstack/react-query';
import type { SkillDetail, SkillListing } from '../../common/skills-api.js';
import { api } from './client';

// Query options and calls of the Skills screen (main/http/skills-routes.ts).

const SKILLS_POLL_MS = 1500;

export const skillsQuery = queryOptions({
  queryKey: ['skills'],
  queryFn: () => api<SkillListing>('GET', '/skills'),
  // Skills are also added and changed on disk by hand: look again every 1.5 s while the screen is
  // open (a local folder read), so a change shows within 2 s, and when the window comes back.
  refetchInterval: SKILLS_POLL_MS,
  refetchOnWindowFocus: 'always',
});

export function skillQuery(name: string) {
  return queryOptions({
    queryKey: ['skills', name],
    queryFn: () => api<SkillDetail>('GET', `/skills/${encodeURIComponent(name)}`),
    refetchInterval: SKILLS_POLL_MS,
    refetchOnWindowFocus: 'always',
  });
}

export const createSkill = (name: string, description: string) => api<SkillDetail>('POST', '/skills', { name, description });

export const saveSkill = (name: string, content: string, version: string) => api<SkillDetail>('PUT', `/skills/${encodeURIComponent(name)}`, { content, version });

export const deleteSkill = (name: string) => api<void>('DELETE', `/skills/${encodeURIComponent(name)}`);

/** Opens the skill's folder in the file manager: the desktop window only (a browser cannot). */
export function folderOpener(): ((name: string) => Promise<void>) | undefined {
  const desktop = window.personaDesktop;
  return desktop?.openSkillFolder ? (name) => desktop.openSkillFolder(name) : undefined;
}
