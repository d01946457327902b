import { queryOptions } from '@tanstack/react-query';
import { skillDetail, skillListing } from '../../common/api/skills.js';
import { api } from './client';

// Query options and calls of the Skills screen (main/http/skills-routes.ts). Skills are also added
// and changed on disk by hand: the server's change events say when.

export const skillsQuery = queryOptions({
  queryKey: ['skills'],
  queryFn: () => api('GET', '/skills', skillListing),
});

export function skillQuery(name: string) {
  return queryOptions({
    queryKey: ['skills', name],
    queryFn: () => api('GET', `/skills/${encodeURIComponent(name)}`, skillDetail),
  });
}

export const createSkill = (name: string, description: string) => api('POST', '/skills', skillDetail, { name, description });

export const saveSkill = (name: string, content: string, version: string) =>
  api('PUT', `/skills/${encodeURIComponent(name)}`, skillDetail, { content, version });

export const deleteSkill = (name: string) => api('DELETE', `/skills/${encodeURIComponent(name)}`, null);

/** Opens the skill's folder in the file manager: the desktop window only (a browser cannot). */
export function folderOpener(): ((name: string) => Promise<void>) | undefined {
  const desktop = window.personaDesktop;
  return desktop?.openSkillFolder ? (name) => desktop.openSkillFolder(name) : undefined;
}
