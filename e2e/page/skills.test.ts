import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startHost, textOf, type HostFixture } from '../../test/support/host-fixture.js';
import { launchChromium, pageLive, pageUntil, screenshot, skipReason as skip, tabUntil, PAGE_WAIT_MS } from './page-support.js';

// The Skills screen in Debian's Chromium against a real headless host and a real skills folder:
// what the page does is checked on disk and through an MCP client of the same host.

if (skip) console.log(`# skipping the page tests: ${skip}`);

const DEPLOY = `---
name: deploy
description: Deploy the app to staging, then to production.
license: MIT
---
# Deploy steps

Run **scripts/run.sh** first.

- Check the build
- Ship it

<script>document.title = 'pwned'</script>
<img src="https://example.invalid/x.png" onerror="document.title = 'pwned'">

See the [Runbook](https://example.invalid/runbook) and [the script](scripts/run.sh).

![Flow diagram](https://example.invalid/flow.png)
`;

describe('the page: skills', { skip }, () => {
  let fx: HostFixture;
  let dir: string;
  let skillsDir: string;
  let browser: Browser;
  let page: Page;

  const shot = (name: string) => screenshot(page, `page-skills-${name}`);
  const installed = () => page.getByRole('region', { name: 'Installed' });
  const notLoaded = () => page.getByRole('region', { name: 'Not loaded' });
  const skill = (name: string) => page.getByRole('region', { name, exact: true });
  const put = async (path: string, content: string) => {
    await mkdir(dirname(join(skillsDir, path)), { recursive: true });
    await writeFile(join(skillsDir, path), content);
  };

  before(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), 'pw-page-skills-')));
    skillsDir = join(dir, 'skills');
    await put('deploy/SKILL.md', DEPLOY);
    await put('deploy/scripts/run.sh', 'echo deploy\n');
    await put('deploy/references/checklist.md', '# Checklist\n');
    await put('pdf-tools/SKILL.md', '---\nname: pdf-tools\ndescription: Fill and merge PDF forms.\n---\nUse pdftk.\n');
    await put('broken/SKILL.md', '---\nname: other\ndescription: Misnamed.\n---\n');
    fx = await startHost({}, { WORKSPACE_SKILLS_DIR: skillsDir });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    page.setDefaultTimeout(PAGE_WAIT_MS);
    await page.goto(await fx.host.loginUrl());
    await pageLive(page);
    await page.getByRole('link', { name: 'Skills' }).click();
    await page.getByRole('heading', { name: 'Skills', level: 1 }).waitFor();
  });

  after(async () => {
    await browser?.close();
    await fx?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('lists the skills, flags an invalid one with its reason, and searches', async () => {
    await installed().getByRole('button', { name: 'View deploy' }).waitFor();
    assert.deepEqual(await installed().locator('.name').allTextContents(), ['deploy', 'pdf-tools']);
    await installed().getByText('Fill and merge PDF forms.').waitFor();
    const broken = notLoaded().getByRole('listitem').filter({ hasText: 'broken' });
    await broken.getByText('Invalid', { exact: true }).waitFor();
    await broken.getByText('Name "other" does not match its folder "broken"; rename one so they are the same.').waitFor();
    await page.getByText(skillsDir, { exact: true }).waitFor();
    await shot('list');

    const search = page.getByRole('searchbox', { name: 'Search skills' });
    await search.fill('PDF');
    await installed().getByRole('button', { name: 'View deploy' }).waitFor({ state: 'detached' });
    await installed().getByRole('button', { name: 'View pdf-tools' }).waitFor();
    assert.equal(await notLoaded().count(), 0, 'the invalid folder does not match "PDF"');
    await shot('search');
    await search.fill('zzzz-nothing');
    await installed().getByText('No skill matches “zzzz-nothing”. Try another word.').waitFor();
    await search.fill('');
  });

  it('shows a loading failure with Retry, and the empty list with what to do', async () => {
    await page.route('**/api/skills', (route) =>
      route.fulfill({ status: 500, contentType: 'application/json', body: JSON.stringify({ error: { message: 'Disk on fire.' } }) }),
    );
    await page.reload();
    const failure = installed().getByRole('alert').filter({ hasText: 'The skills could not be loaded. Disk on fire.' });
    await failure.waitFor({ timeout: 15_000 }); // after React Query's one retry
    await shot('error');
    await page.unroute('**/api/skills');
    await page.route('**/api/skills', (route) =>
      route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ dir: skillsDir, skills: [], invalid: [] }) }),
    );
    await failure.getByRole('button', { name: 'Retry' }).click();
    await installed().getByText(`No skills yet. Create one from a template, or put a skill folder in ${skillsDir}.`).waitFor();
    await shot('empty');
    await page.unroute('**/api/skills');
    await page.reload();
    await installed().getByRole('button', { name: 'View deploy' }).waitFor();
  });

  it('shows a skill: SKILL.md rendered without its raw HTML, and the bundled files', async () => {
    await installed().getByRole('button', { name: 'View deploy' }).click();
    const view = skill('deploy');
    await focusIs(page, `document.activeElement?.textContent`, 'deploy', 'focus moves to the skill');
    await view.getByText('Deploy the app to staging, then to production.').waitFor();
    const body = view.getByRole('article', { name: 'Instructions' });
    await body.getByRole('heading', { name: 'Deploy steps', level: 3 }).waitFor();
    assert.equal(await body.locator('strong').textContent(), 'scripts/run.sh');
    assert.deepEqual(await body.getByRole('listitem').allTextContents(), ['Check the build', 'Ship it']);
    assert.equal(await body.getByRole('link', { name: 'Runbook' }).getAttribute('rel'), 'noopener noreferrer');
    assert.equal(await body.getByRole('link', { name: 'the script' }).count(), 0, 'a path in the skill is text, not a link into the page');
    await body.getByText('the script').waitFor();
    await body.getByText('[picture: Flow diagram]').waitFor();
    assert.equal(await body.locator('script, img, [onerror]').count(), 0, 'raw HTML is dropped and pictures are not fetched');
    assert.notEqual(await page.title(), 'pwned');
    await view.getByText('MIT').waitFor();
    const files = view.getByRole('region', { name: 'Bundled files' });
    assert.deepEqual(await files.getByRole('listitem').allTextContents(), ['references/checklist.md', 'scripts/run.sh']);
    assert.equal(await view.getByRole('button', { name: 'Open folder' }).count(), 0, 'a browser cannot open folders');
    await shot('view');
    await view.getByRole('button', { name: '← All skills' }).click();
    await focusIs(page, `document.activeElement?.getAttribute('aria-label')`, 'View deploy', 'back where it was');
  });

  it('creates a skill from the template, which an MCP client sees at once', async () => {
    await page.getByRole('button', { name: 'New skill' }).first().click();
    const form = page.getByRole('form', { name: 'New skill' });
    const name = form.getByRole('textbox', { name: 'Name' });
    await name.fill('Release Notes');
    await form.getByText('Use lowercase letters, digits and single hyphens').waitFor();
    assert.equal(await name.getAttribute('aria-invalid'), 'true');
    await name.fill('deploy');
    await form.getByText('A skill named deploy already exists. Pick another name.').waitFor();
    await name.fill('release-notes');
    await form.getByRole('textbox', { name: 'Description' }).fill('Write release notes from the git log.');
    await shot('create');
    await form.getByRole('button', { name: 'Create skill' }).click();

    const view = skill('release-notes');
    await view.getByRole('article', { name: 'Instructions' }).getByRole('heading', { name: 'Release notes', level: 3 }).waitFor();
    await page.getByRole('status').filter({ hasText: 'release-notes was created from the template.' }).waitFor();
    assert.match(
      await readFile(join(skillsDir, 'release-notes', 'SKILL.md'), 'utf8'),
      /^---\nname: release-notes\ndescription: Write release notes from the git log\.\n---\n/,
    );
    await shot('created');

    const { client } = await fx.connect(await fx.token());
    const catalog = await client.readResource({ uri: 'resource://skills' });
    assert.match((catalog.contents[0] as { text: string }).text, /^release-notes: Write release notes from the git log\.$/m);
    const loaded = await client.callTool({ name: 'skill', arguments: { name: 'release-notes' } });
    assert.notEqual(loaded.isError, true, textOf(loaded));
    assert.match(textOf(loaded), /# Release notes/);
  });

  it('edits SKILL.md with the frontmatter checked as it is typed, and saves it to disk', async () => {
    const view = skill('release-notes');
    await view.getByRole('button', { name: 'Edit' }).click();
    const editor = view.getByRole('textbox', { name: 'SKILL.md' });
    const save = view.getByRole('button', { name: 'Save' });
    await view.getByText('The frontmatter follows the Agent Skills rules.').waitFor();
    assert.equal(await save.isDisabled(), true, 'nothing to save yet');

    const original = await editor.inputValue();
    await editor.fill(original.replace(/^description: .*\n/m, ''));
    await view.getByText('The frontmatter has no "description". Save is off until this is fixed.').waitFor();
    assert.equal(await save.isDisabled(), true);
    assert.equal(await editor.getAttribute('aria-invalid'), 'true');
    await shot('edit-invalid');

    const fixed = original
      .replace(/^description: .*$/m, 'description: Write release notes from merged pull requests.')
      .replace('## Steps', '## Steps\n\n1. Read the merged pull requests.');
    await editor.fill(fixed);
    await view.getByText('The frontmatter follows the Agent Skills rules.').waitFor();
    await shot('edit-valid');
    await save.click();
    await page.getByRole('status').filter({ hasText: 'release-notes is saved.' }).waitFor();
    await view.getByText('Write release notes from merged pull requests.').first().waitFor();
    await view.getByRole('article', { name: 'Instructions' }).getByText('Read the merged pull requests.').waitFor();
    assert.equal(await readFile(join(skillsDir, 'release-notes', 'SKILL.md'), 'utf8'), fixed);
    await focusIs(page, `document.activeElement?.textContent`, 'Edit', 'focus comes back to Edit');
    await shot('edit-saved');
  });

  it('never saves over a change made on disk while editing, and keeps the text typed', async () => {
    const view = skill('release-notes');
    await view.getByRole('button', { name: 'Edit' }).click();
    const editor = view.getByRole('textbox', { name: 'SKILL.md' });
    const mine = (await editor.inputValue()).replace(
      '1. Read the merged pull requests.',
      '1. Read the merged pull requests and their labels.',
    );
    await editor.fill(mine);
    // Meanwhile an agent changes the file.
    const file = join(skillsDir, 'release-notes', 'SKILL.md');
    const theirs = (await readFile(file, 'utf8')).replace('## Steps', '## Steps\n\n0. Added by an agent.');
    await writeFile(file, theirs);
    await view.getByRole('button', { name: 'Save' }).click();
    await view.getByRole('alert').filter({ hasText: 'changed on disk after you opened it' }).waitFor();
    assert.equal(await readFile(file, 'utf8'), theirs, 'the agent’s change is kept');
    assert.equal(await editor.inputValue(), mine, 'the text typed is still there');
    await shot('edit-conflict');
    await view.getByRole('button', { name: 'Cancel' }).click();
  });

  it('fixes an invalid skill from the list', async () => {
    await skill('release-notes').getByRole('button', { name: '← All skills' }).click();
    await notLoaded().getByRole('button', { name: 'Fix broken' }).click();
    const view = skill('broken');
    await view.getByText('Agents do not see this skill. Name "other" does not match its folder "broken"', { exact: false }).waitFor();
    await shot('invalid-view');
    await view.getByRole('button', { name: 'Edit' }).click();
    const editor = view.getByRole('textbox', { name: 'SKILL.md' });
    await editor.fill((await editor.inputValue()).replace('name: other', 'name: broken'));
    await view.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'broken is saved.' }).waitFor();
    await view.getByRole('button', { name: '← All skills' }).click();
    await installed().getByRole('button', { name: 'View broken' }).waitFor();
    assert.equal(await notLoaded().count(), 0);
  });

  it('deletes a skill after an inline Yes, and No keeps it', async () => {
    await installed().getByRole('button', { name: 'View release-notes' }).click();
    const view = skill('release-notes');
    await view.getByRole('button', { name: 'Delete' }).click();
    const confirm = view.getByRole('group', { name: 'Delete release-notes?' });
    await confirm.waitFor();
    await focusIs(page, `document.activeElement?.textContent`, 'No', 'focus goes to the safe choice');
    await shot('delete-confirm');
    await confirm.getByRole('button', { name: 'No' }).click();
    assert.ok(existsSync(join(skillsDir, 'release-notes', 'SKILL.md')));
    await view.getByRole('button', { name: 'Delete' }).click();
    await view.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByRole('status').filter({ hasText: 'release-notes was deleted, with its folder.' }).waitFor();
    await installed().getByRole('button', { name: 'View deploy' }).waitFor();
    assert.equal(await installed().getByRole('button', { name: 'View release-notes' }).count(), 0);
    assert.equal(existsSync(join(skillsDir, 'release-notes')), false, 'the folder is gone from disk');
    await focusIs(page, `document.activeElement?.id`, 'skills-heading', 'focus stays on the list');
    await shot('deleted');
  });

  it('creates a skill with the keyboard only, with focus always visible', async () => {
    await page.reload();
    await installed().getByRole('button', { name: 'View deploy' }).waitFor();
    await tabUntil(page, `document.activeElement?.textContent === 'New skill'`, 40);
    assert.notEqual(await page.evaluate(`getComputedStyle(document.activeElement).outlineStyle`), 'none', 'focus is drawn');
    await page.keyboard.press('Enter');
    await focusIs(page, `document.activeElement?.id`, 'new-skill-heading');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(`document.activeElement?.getAttribute('placeholder')`), 'pdf-tools', 'the name comes first');
    await page.keyboard.type('kb-skill');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(`document.activeElement?.tagName`), 'TEXTAREA');
    await page.keyboard.type('Made without a mouse.');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(`document.activeElement?.textContent`), 'Create skill');
    assert.notEqual(await page.evaluate(`getComputedStyle(document.activeElement).outlineStyle`), 'none', 'focus is drawn');
    await shot('keyboard-create');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'kb-skill was created from the template.' }).waitFor();
    await focusIs(page, `document.activeElement?.id`, 'skill-heading');
    assert.match(await readFile(join(skillsDir, 'kb-skill', 'SKILL.md'), 'utf8'), /description: Made without a mouse\./);
    // On to Edit, type, and save with Ctrl+S, still without a mouse.
    await tabUntil(page, `document.activeElement?.textContent === 'Edit'`, 10);
    await page.keyboard.press('Enter');
    await focusIs(page, `document.activeElement?.tagName`, 'TEXTAREA');
    await page.keyboard.press('ControlOrMeta+End');
    await page.keyboard.type('\nKeyboard line.\n');
    await page.keyboard.press('Control+S');
    await page.getByRole('status').filter({ hasText: 'kb-skill is saved.' }).waitFor();
    assert.match(await readFile(join(skillsDir, 'kb-skill', 'SKILL.md'), 'utf8'), /Keyboard line\.\n$/);
    await shot('keyboard-saved');
  });

  it('follows a dark system theme', async () => {
    await page.emulateMedia({ colorScheme: 'dark' });
    assert.equal(await page.evaluate(`getComputedStyle(document.body).backgroundColor`), 'rgb(21, 23, 27)');
    await shot('dark');
    await skill('kb-skill').getByRole('button', { name: '← All skills' }).click();
    await installed().getByRole('button', { name: 'View deploy' }).waitFor();
    await shot('dark-list');
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('renders GitHub-flavoured Markdown: a table and a task list, still without raw HTML', async () => {
    await put(
      'tables/SKILL.md',
      '---\nname: tables\ndescription: Has a table.\n---\n| Step | Who |\n| --- | --- |\n| Build | <b onclick="x">anyone</b> |\n\n- [x] Green build\n- [ ] Changelog\n\n~~old~~ way\n',
    );
    await page.goto(`${new URL(page.url()).origin}/#skills/tables`);
    const body = skill('tables').getByRole('article', { name: 'Instructions' });
    const table = body.getByRole('table');
    await table.waitFor();
    assert.deepEqual(await table.getByRole('columnheader').allTextContents(), ['Step', 'Who']);
    assert.deepEqual(await table.getByRole('cell').allTextContents(), ['Build', 'anyone']);
    assert.equal(await body.locator('b, [onclick]').count(), 0, 'raw HTML in a cell is dropped');
    assert.equal(await body.getByText('| Step |', { exact: false }).count(), 0, 'no raw pipes');
    const boxes = body.getByRole('checkbox');
    assert.equal(await boxes.count(), 2);
    assert.equal(await body.getByRole('checkbox', { name: 'Done', exact: true }).isChecked(), true);
    assert.equal(await body.getByRole('checkbox', { name: 'Not done' }).isChecked(), false);
    assert.equal(await boxes.first().isDisabled(), true, 'the file decides, not a click');
    assert.equal(await body.locator('del').textContent(), 'old');
    await shot('gfm');
  });

  it('keeps the open skill in the address: it survives a reload, and Back goes to the list', async () => {
    assert.equal(new URL(page.url()).hash, '#skills/tables');
    await page.reload();
    await skill('tables').getByRole('table').waitFor();
    await skill('tables').getByRole('button', { name: '← All skills' }).click();
    assert.equal(new URL(page.url()).hash, '#skills');
    await installed().getByRole('button', { name: 'View tables' }).waitFor();
    await page.goBack();
    await skill('tables').getByRole('table').waitFor();
    await page.goForward();
    await installed().getByRole('button', { name: 'View tables' }).waitFor();
  });

  it('opens a skill from a click on its name', async () => {
    await installed().getByText('pdf-tools', { exact: true }).click();
    await skill('pdf-tools').getByText('Use pdftk.').waitFor();
    assert.equal(new URL(page.url()).hash, '#skills/pdf-tools');
    await skill('pdf-tools').getByRole('button', { name: '← All skills' }).click();
  });

  it('shows changes on disk within 2 seconds while the screen is open, with no focus change or reload', async () => {
    await put('fresh/SKILL.md', '---\nname: fresh\ndescription: Made by hand on disk.\n---\nFirst words.\n');
    const started = Date.now();
    await installed().getByText('Made by hand on disk.').waitFor({ timeout: 2_000 });
    await installed().getByText('fresh', { exact: true }).click();
    await skill('fresh').getByText('First words.').waitFor();
    await put('fresh/SKILL.md', '---\nname: fresh\ndescription: Made by hand on disk.\n---\nSecond words.\n');
    await skill('fresh').getByText('Second words.').waitFor({ timeout: 2_000 });
    assert.ok(Date.now() - started < 10_000);
    await skill('fresh').getByRole('button', { name: '← All skills' }).click();
  });

  it('says a YAML mistake in the editor in plain words with its line', async () => {
    await installed().getByText('fresh', { exact: true }).click();
    const view = skill('fresh');
    await view.getByRole('button', { name: 'Edit' }).click();
    const editor = view.getByRole('textbox', { name: 'SKILL.md' });
    await editor.fill('---\nname: fresh\ndescription: Use it: when fresh\n---\nBody\n');
    const problem = view.getByText(
      'The frontmatter is not valid YAML on line 3: a value holds a colon followed by a space, which YAML reads as a new field. Put the whole value in quotes. Save is off until this is fixed.',
    );
    await problem.waitFor();
    assert.equal(await view.getByText('column', { exact: false }).count(), 0);
    await shot('edit-yaml-error');
    // Changed text: Escape keeps it (it would be lost); Cancel leaves.
    await editor.press('Escape');
    assert.equal(await editor.isVisible(), true);
    await view.getByRole('button', { name: 'Cancel' }).click();
    await view.getByRole('button', { name: 'Edit' }).click();
    await view.getByRole('textbox', { name: 'SKILL.md' }).press('Escape');
    await view.getByRole('textbox', { name: 'SKILL.md' }).waitFor({ state: 'detached' });
    await view.getByRole('button', { name: '← All skills' }).click();
  });
});

/** Waits (briefly) until the page expression about the focused element gives `expected`: focus moves in an effect after a render. */
async function focusIs(page: Page, expression: string, expected: string, message = `focus: ${expression} is ${expected}`): Promise<void> {
  try {
    await pageUntil(page, `${expression} === ${JSON.stringify(expected)}`);
  } catch {
    assert.fail(`${message} (it is ${JSON.stringify(await page.evaluate(expression))})`);
  }
}
