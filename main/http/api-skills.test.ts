import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { startHost, textOf, type HostFixture } from '../../test/support/host-fixture.js';
import { callApi } from '../../test/support/control-api.js';

describe('the page API: skills', () => {
  let fx: HostFixture;
  let dir: string;
  let skillsDir: string;
  let controlUrl: string;
  let adminToken: string;
  const api = (method: string, path: string, body?: unknown, token = adminToken) => callApi(controlUrl, token, method, path, body);
  const skillMd = (name: string, description: string) => `---\nname: ${name}\ndescription: ${description}\n---\n# ${name}\n`;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pw-api-skills-'));
    skillsDir = join(dir, 'skills');
    await mkdir(join(skillsDir, 'deploy', 'scripts'), { recursive: true });
    await writeFile(join(skillsDir, 'deploy', 'SKILL.md'), skillMd('deploy', 'Deploy the app.'));
    await writeFile(join(skillsDir, 'deploy', 'scripts', 'run.sh'), 'echo deploy\n');
    await mkdir(join(skillsDir, 'broken'));
    await writeFile(join(skillsDir, 'broken', 'SKILL.md'), skillMd('other', 'Misnamed.'));
    fx = await startHost({}, { WORKSPACE_SKILLS_DIR: skillsDir, WORKSPACE_JWT_SECRET: 'skills-api-test-secret' });
    controlUrl = await fx.host.open();
    adminToken = await fx.host.adminToken();
  });
  after(async () => {
    await fx.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('lists valid skills and invalid folders with the reason', async () => {
    const { status, json } = await api('GET', '/skills');
    assert.equal(status, 200);
    assert.equal(json.dir, skillsDir);
    assert.deepEqual(json.skills, [{ name: 'deploy', description: 'Deploy the app.', dir: join(skillsDir, 'deploy') }]);
    assert.deepEqual(json.invalid, [
      {
        folder: 'broken',
        dir: join(skillsDir, 'broken'),
        reason: 'name "other" does not match its folder "broken"; rename one so they are the same',
      },
    ]);
  });

  it('shows one skill: SKILL.md as written and its bundled files', async () => {
    const { status, json } = await api('GET', '/skills/deploy');
    assert.equal(status, 200);
    const { version, ...detail } = json;
    assert.deepEqual(detail, {
      name: 'deploy',
      dir: join(skillsDir, 'deploy'),
      content: skillMd('deploy', 'Deploy the app.'),
      files: ['scripts/run.sh'],
      unlistedFiles: 0,
    });
    assert.equal(typeof version, 'string');
    const missing = await api('GET', '/skills/nope');
    assert.equal(missing.status, 404);
    assert.match(missing.json.error.message, /There is no skill named "nope"/);
  });

  it('creates a skill from the template, which an MCP client sees at once', async () => {
    const created = await api('POST', '/skills', { name: 'release-notes', description: 'Write release notes from the git log.' });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.name, 'release-notes');
    assert.equal(created.json.content, await readFile(join(skillsDir, 'release-notes', 'SKILL.md'), 'utf8'));

    const { client } = await fx.connect(await fx.token());
    const resource = await client.readResource({ uri: 'resource://skills' });
    assert.equal(
      (resource.contents[0] as { text: string }).text,
      'deploy: Deploy the app.\nrelease-notes: Write release notes from the git log.',
    );
    const loaded = await client.callTool({ name: 'skill', arguments: { name: 'release-notes' } });
    assert.notEqual(loaded.isError, true, textOf(loaded));
    assert.match(textOf(loaded), /# Release notes/);
  });

  it('refuses a taken name, a bad name and a bad body, saying what to do', async () => {
    const taken = await api('POST', '/skills', { name: 'deploy', description: 'Again.' });
    assert.equal(taken.status, 409);
    assert.match(taken.json.error.message, /A skill named "deploy" already exists. Pick another name/);
    const badName = await api('POST', '/skills', { name: 'Bad Name', description: 'x' });
    assert.equal(badName.status, 400);
    assert.match(badName.json.error.message, /lowercase letters, digits and single hyphens/);
    assert.equal((await api('POST', '/skills', { name: 'no-description' })).status, 400);
    assert.equal((await api('POST', '/skills', { name: 'x', description: 'x', extra: 1 })).status, 400);
    assert.deepEqual((await readdir(skillsDir)).sort(), ['broken', 'deploy', 'release-notes']);
  });

  it('saves SKILL.md, refusing frontmatter that breaks the rules without touching the file', async () => {
    const next = skillMd('deploy', 'Deploy the app to staging.');
    const saved = await api('PUT', '/skills/deploy', { content: next });
    assert.equal(saved.status, 200, saved.text);
    assert.equal(saved.json.content, next);
    assert.equal(await readFile(join(skillsDir, 'deploy', 'SKILL.md'), 'utf8'), next);

    const bad = await api('PUT', '/skills/deploy', { content: '---\nname: deploy\n---\nNo description.\n' });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.message, 'SKILL.md was not saved: the frontmatter has no "description".');
    assert.equal(await readFile(join(skillsDir, 'deploy', 'SKILL.md'), 'utf8'), next);

    // Saving from a stale copy (the file changed since it was read) is refused, and the file kept.
    const stale = await api('PUT', '/skills/deploy', { content: skillMd('deploy', 'Mine.'), version: 'an-old-version' });
    assert.equal(stale.status, 409);
    assert.match(stale.json.error.message, /changed on disk after you opened it/);
    assert.equal(await readFile(join(skillsDir, 'deploy', 'SKILL.md'), 'utf8'), next);
    const current = (await api('GET', '/skills/deploy')).json.version;
    assert.equal((await api('PUT', '/skills/deploy', { content: next, version: current })).status, 200);

    const fixed = await api('PUT', '/skills/broken', { content: skillMd('broken', 'Fixed now.') });
    assert.equal(fixed.status, 200);
    assert.deepEqual((await api('GET', '/skills')).json.invalid, []);
    assert.equal((await api('PUT', '/skills/ghost', { content: skillMd('ghost', 'x') })).status, 404);
  });

  it('says so when a request is too large or not JSON, changing nothing', async () => {
    const before = await readFile(join(skillsDir, 'deploy', 'SKILL.md'), 'utf8');
    const huge = await api('PUT', '/skills/deploy', { content: skillMd('deploy', 'x') + 'é'.repeat(150_000) });
    assert.equal(huge.status, 413);
    assert.match(huge.json.error.message, /larger than the 256kb the API accepts/);
    const response = await fetch(`${controlUrl}/api/skills/deploy`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json' },
      body: '{"content": ',
    });
    assert.equal(response.status, 400);
    assert.match(((await response.json()) as { error: { message: string } }).error.message, /not valid JSON/);
    assert.equal(await readFile(join(skillsDir, 'deploy', 'SKILL.md'), 'utf8'), before);
  });

  it('deletes a skill folder, and nothing outside the skills folder', async () => {
    const escape = await api('DELETE', `/skills/${encodeURIComponent('../skills')}`);
    assert.equal(escape.status, 400);
    assert.match(escape.json.error.message, /is not a skill folder name/);
    assert.equal((await api('DELETE', '/skills/release-notes')).status, 204);
    assert.deepEqual((await readdir(skillsDir)).sort(), ['broken', 'deploy']);
    assert.equal((await api('DELETE', '/skills/release-notes')).status, 404);
  });

  it('keeps skills to the person who runs the app', async () => {
    const person = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('alice')
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode('skills-api-test-secret'));
    for (const [method, path, body] of [
      ['GET', '/skills'],
      ['GET', '/skills/deploy'],
      ['POST', '/skills', { name: 'sneaky', description: 'x' }],
      ['PUT', '/skills/deploy', { content: skillMd('deploy', 'Hijacked.') }],
      ['DELETE', '/skills/deploy'],
    ] as const) {
      const answer = await api(method, path, body, person);
      assert.equal(answer.status, 401, `${method} ${path}`);
      assert.match(answer.json.error.message, /agent tokens and JWTs work on the MCP endpoint only/);
    }
    assert.deepEqual((await readdir(skillsDir)).sort(), ['broken', 'deploy']);
    assert.match(await readFile(join(skillsDir, 'deploy', 'SKILL.md'), 'utf8'), /staging/);
  });
});
