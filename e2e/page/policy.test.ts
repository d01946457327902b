import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { AccessDirectory } from '../../main/places/access-directory.js';
import { callApi } from '../../test/support/control-api.js';
import { enterWorkspace, startHost, type HostFixture } from '../../test/support/host-fixture.js';
import { launchChromium, pageLive, screenshot, skipReason, PAGE_WAIT_MS } from './page-support.js';

// The place header's agent policy in Debian's Chromium against a real headless host.

const skip = skipReason;
if (skip) console.log(`# skipping the page tests: ${skip}`);

describe("the page: a place's agent policy", { skip }, () => {
  let fx: HostFixture;
  let workspace: Awaited<ReturnType<typeof enterWorkspace>>;
  let browser: Browser;
  let page: Page;
  const form = () => page.getByRole('form', { name: 'Agent policy' });
  /** Picks Crew alpha in the live page, and waits until its own policy is drawn (folded): This machine's looks the same. */
  const pickCrewAlpha = async () => {
    await page.getByRole('combobox', { name: 'Place' }).selectOption({ label: 'Crew alpha' });
    await page.getByLabel('What the agents of Crew alpha reach').waitFor({ state: 'attached' });
  };

  before(async () => {
    workspace = await enterWorkspace('pw-page-policy-', ['Crew/alpha']);
    fx = await startHost({}, { WORKSPACE_SECRET_STORE: 'file' });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    page.setDefaultTimeout(PAGE_WAIT_MS);
    await page.goto(await fx.host.loginUrl());
    await pageLive(page);
    await pickCrewAlpha();
  });

  after(async () => {
    await browser?.close();
    await fx?.close();
    await workspace?.leave();
  });

  const fold = () => page.getByText('Agents here reach:', { exact: false });

  it('starts with the connections: the policy is one folded line in the header, and Escape folds it again', async () => {
    await fold().getByText('whole machine', { exact: true }).waitFor();
    assert.equal(await form().isVisible(), false, 'the form is folded');
    const heading = await page.getByRole('heading', { name: 'Connected', level: 2 }).boundingBox();
    assert.ok(heading && heading.y < 300, `Connected starts near the top: ${heading?.y}`);
    await fold().click();
    const select = form().getByRole('combobox', { name: 'What the agents of Crew alpha reach' });
    await select.selectOption('place');
    await select.press('Escape');
    assert.equal(await form().isVisible(), false, 'Escape folds it');
    assert.equal(await page.evaluate(`document.activeElement?.tagName`), 'SUMMARY', 'focus goes back to what opened it');
    await fold().click();
    assert.equal(await select.inputValue(), 'machine', 'what was not saved is gone');
  });

  it('shows the whole machine by default, and the owner sets strict with an extra folder', async () => {
    const select = form().getByRole('combobox', { name: 'What the agents of Crew alpha reach' });
    assert.equal(await select.inputValue(), 'machine');
    assert.equal(await form().getByRole('button', { name: 'Save policy' }).count(), 0, 'nothing to save yet');
    await select.selectOption('strict');
    await form().getByText('Agents reach only this place’s folder').waitFor();
    await form()
      .getByRole('textbox', { name: /Extra folders/ })
      .fill('/srv/shared\n');
    await form().getByRole('button', { name: 'Save policy' }).click();
    await page.getByText('Crew alpha: agents now work under the strict policy.').waitFor();
    await fold().getByText('strict', { exact: true }).waitFor();
    assert.equal(await page.evaluate(`document.activeElement?.tagName`), 'SUMMARY', 'saved, it folds, the keyboard on its line');
    await fold().click();
    const access = JSON.parse(await readFile(join(fx.stateDir, 'access.json'), 'utf8'));
    assert.deepEqual(access.places['Crew/alpha'], { policy: { kind: 'strict', folders: ['/srv/shared'] } });
    await screenshot(page, 'page-policy-strict');
  });

  it('says what is wrong with a folder and keeps the saved policy', async () => {
    await form()
      .getByRole('textbox', { name: /Extra folders/ })
      .fill('relative/folder');
    await form().getByRole('button', { name: 'Save policy' }).click();
    await form()
      .getByRole('alert')
      .filter({ hasText: 'The policy was not changed.' })
      .filter({ hasText: 'must be an absolute path' })
      .waitFor();
    const access = JSON.parse(await readFile(join(fx.stateDir, 'access.json'), 'utf8'));
    assert.deepEqual(access.places['Crew/alpha'].policy, { kind: 'strict', folders: ['/srv/shared'] });
  });

  it('shows the network its commands reach, and how to change the list', async () => {
    await form().getByText('Network of their commands: none.').waitFor();
    await new AccessDirectory(fx.stateDir).setPlaceNetwork('Crew/alpha', ['api.github.com', 'localhost']);
    await page.reload();
    await pageLive(page);
    await pickCrewAlpha();
    await fold().click();
    await form().getByText('Network of their commands: only api.github.com, localhost.').waitFor();
    await form().getByText('persona-mcp-workspace places network Crew/alpha off|HOST…').waitFor();
  });

  it('under strict, shows each credential store sealed; the owner lifts one and seals a path of their own', async () => {
    const seals = page.getByRole('form', { name: 'Sealed from the agents' });
    const ssh = seals.getByRole('checkbox', { name: /~\/\.ssh SSH keys/ });
    assert.equal(await ssh.isChecked(), true, 'sealed by default');
    const boxes = seals.getByRole('checkbox');
    assert.ok((await boxes.count()) >= 14, 'every credential store is listed');
    for (const box of await boxes.all()) assert.equal(await box.isChecked(), true);
    assert.equal(await seals.getByRole('button', { name: 'Save sealed paths' }).count(), 0, 'nothing to save yet');
    await ssh.uncheck();
    await seals.getByRole('textbox', { name: /More paths sealed/ }).fill('~/private\n');
    await seals.getByRole('button', { name: 'Save sealed paths' }).click();
    await page.getByText('Crew alpha: what its agents find sealed was saved.').waitFor();
    await seals.getByRole('button', { name: 'Save sealed paths' }).waitFor({ state: 'detached' });
    const access = JSON.parse(await readFile(join(fx.stateDir, 'access.json'), 'utf8'));
    assert.deepEqual([access.places['Crew/alpha'].policy.unseal, access.places['Crew/alpha'].policy.seal], [['~/.ssh'], ['~/private']]);
    await page.reload();
    await pageLive(page);
    await pickCrewAlpha();
    await fold().click();
    assert.equal(await ssh.isChecked(), false, 'lifted, as saved');
    assert.equal(await seals.getByRole('textbox', { name: /More paths sealed/ }).inputValue(), '~/private');
  });

  it('shows the limits in effect as the server found them, and the owner sets one; a bad value changes nothing', async () => {
    const limits = page.getByRole('form', { name: 'Limits of the commands' });
    const processes = limits.getByRole('spinbutton', { name: 'Processes and threads at once' });
    const inEffect = (await callApi(await fx.host.open(), await fx.host.adminToken(), 'GET', '/mcp/place?workspace_path=Crew/alpha')).json
      .policy.limitsInEffect;
    assert.equal(await processes.getAttribute('placeholder'), `${inEffect.processes.value} (default)`);
    // What this machine does not enforce is said, in the header as in each field, exactly as the server found it.
    const unenforced = (['processes', 'memoryMb', 'tmpMb'] as const).filter((name) => inEffect[name].unenforced);
    for (const name of ['processes', 'memoryMb', 'tmpMb'] as const) {
      const note = limits.locator(`#${name}-note`);
      assert.equal(
        await note.textContent(),
        inEffect[name].unenforced
          ? `Not enforced on this machine: ${inEffect[name].unenforced}.`
          : `In effect: ${inEffect[name].value} (the machine’s default).`,
      );
    }
    assert.equal(await page.getByText('Limits this machine does not enforce for its commands:').count(), unenforced.length ? 1 : 0);

    await processes.fill('3');
    await limits.getByRole('button', { name: 'Save limits' }).click();
    await limits.getByRole('alert').filter({ hasText: 'The limits were not changed.' }).waitFor();
    let access = JSON.parse(await readFile(join(fx.stateDir, 'access.json'), 'utf8'));
    assert.equal(access.places['Crew/alpha'].policy.limits, undefined);

    await processes.fill('128');
    await limits.getByRole('button', { name: 'Save limits' }).click();
    await page.getByText('Crew alpha: the limits of its commands were saved.').waitFor();
    access = JSON.parse(await readFile(join(fx.stateDir, 'access.json'), 'utf8'));
    assert.deepEqual(access.places['Crew/alpha'].policy.limits, { processes: 128 });
    if (!inEffect.processes.unenforced) await limits.getByText('In effect: 128.').waitFor();
    await screenshot(page, 'page-policy-seals-limits');
  });
});
