import { Router, type Response } from 'express';
import * as z from 'zod';
import type { SkillDetail, SkillListing } from '../../common/skills-api.js';
import { createSkill, deleteSkill, readSkillDetail, saveSkillFile } from '../machine/skill-editing.js';
import { listSkills } from '../machine/skills.js';

// The request bodies; the names and the frontmatter are checked by the editing functions, which
// say what is wrong in the words the page shows.
const createBody = z.object({ name: z.string().max(200), description: z.string().max(5_000) }).strict();
/** Under the control plane's JSON limit, with room for escaping. */
const saveBody = z.object({ content: z.string().max(200_000), version: z.string().max(100).optional() }).strict();

/**
 * The page's Skills API: list (valid and invalid, with reasons), read, create from a template, save
 * SKILL.md, delete. Skills are the machine's, so only the person who runs the app manages them.
 */
export function skillsRoutes(skillsDir: string, localOnly: (res: Response) => void): Router {
  const router = Router();
  router.use((_req, res, next) => {
    localOnly(res);
    next();
  });

  router.get('/', async (_req, res) => {
    const listing: SkillListing = { dir: skillsDir, ...(await listSkills(skillsDir)) };
    res.json(listing);
  });

  router.get('/:name', async (req, res) => {
    res.json((await readSkillDetail(skillsDir, req.params.name)) satisfies SkillDetail);
  });

  router.post('/', async (req, res) => {
    res.status(201).json(await createSkill(skillsDir, createBody.parse(req.body)));
  });

  router.put('/:name', async (req, res) => {
    const body = saveBody.parse(req.body);
    res.json(await saveSkillFile(skillsDir, req.params.name, body.content, body.version));
  });

  router.delete('/:name', async (req, res) => {
    await deleteSkill(skillsDir, req.params.name);
    res.status(204).end();
  });

  return router;
}
