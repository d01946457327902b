import { Router, type Response } from 'express';
import { createSkillBody, saveSkillBody, type SkillDetail, type SkillListing } from '../../common/api/skills.js';
import { createSkill, deleteSkill, readSkillDetail, saveSkillFile } from '../machine/skill-editing.js';
import { listSkills } from '../machine/skills.js';

/**
 * The page's Skills API: list (valid and invalid, with reasons), read, create from a template, save
 * SKILL.md, delete. Skills are the machine's, so only the person who runs the app manages them.
 * The skills folder's watch tells the page of changes; `changed` tells of a skill that made the folder.
 */
export function skillsRoutes(skillsDir: string, localOnly: (res: Response) => void, changed: () => void): Router {
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
    res.status(201).json(await createSkill(skillsDir, createSkillBody.parse(req.body)));
    // The folder may be new: no watch heard this.
    changed();
  });

  router.put('/:name', async (req, res) => {
    const body = saveSkillBody.parse(req.body);
    res.json(await saveSkillFile(skillsDir, req.params.name, body.content, body.version));
  });

  router.delete('/:name', async (req, res) => {
    await deleteSkill(skillsDir, req.params.name);
    res.status(204).end();
  });

  return router;
}
