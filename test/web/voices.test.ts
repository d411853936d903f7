/** The studio's Voices page in Chromium: clone a voice from two eval clips, rename it, delete it. */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { buildTestApp, evalDir, listen, type TestApp } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';
import { worldAddon } from '../helpers/vc-assets.js';
import { launchChromium, openStudio, screenshot, unlabelledControls, useKey } from './browser.js';

const readers = path.join(evalDir, 'vc/resemblyzer_librispeech');
/** Two clips of one reader (librispeech 3080, per the eval manifest) to clone. */
const referenceClips = ['3080-5032-0001.wav', '3080-5032-0004.wav'].map((name) => path.join(readers, name));

describe('Voices page in Chromium', () => {
  let server: TestApp;
  let browser: Browser;
  let page: Page;
  let consoleErrors: string[];

  before(async () => {
    await Promise.all([modelFile('silero-vad', 'silero_vad.onnx'), modelFile('resemblyzer-ge2e', 'ge2e.onnx'), modelFile('kokoro-82m', ''), modelFile('kokoro-voices', ''), worldAddon()]);
    server = await buildTestApp();
    browser = await launchChromium();
    // One tab through the steps, as a person would go.
    ({ page, consoleErrors } = await openStudio(browser, `http://${await listen(server)}`));
    await useKey(page, server.key);
  });
  after(async () => {
    assert.deepEqual(consoleErrors, []);
    await browser?.close();
    await server?.close();
  });

  test('a voice cloned from two clips needs the consent box, then is listed; renaming and labelling it shows at once', async (t) => {
    await page.getByRole('link', { name: 'Voices' }).click();
    const voicesPage = page.getByRole('region', { name: 'Voices' });
    await voicesPage.getByLabel('Name').fill('Reader 3080');
    await voicesPage.getByLabel('Reference clips').setInputFiles(referenceClips);
    await page.getByText('3080-5032-0001.wav (0.3 MB), 3080-5032-0004.wav (0.2 MB)').waitFor();
    const clone = page.getByRole('button', { name: 'Clone voice' });
    assert.ok(await clone.isDisabled(), 'no cloning without consent');
    await page.getByLabel('The speaker agreed to have their voice cloned.').check();
    // The API refuses a clone without consent=true: the voice being listed shows the page sent it.
    await clone.click();
    const cloned = page.getByRole('list', { name: 'Cloned voices' }).getByRole('listitem');
    await cloned.filter({ hasText: 'Reader 3080' }).waitFor({ timeout: 60_000 });
    assert.match(await cloned.first().textContent() ?? '', /\d+ s of reference audio/);

    await page.getByRole('button', { name: 'Edit Reader 3080' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit voice' });
    await dialog.getByLabel('Name').fill('Reader 3080 (library)');
    await dialog.getByLabel('Labels').fill('accent=american, source=librispeech');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await cloned.filter({ hasText: 'Reader 3080 (library)' }).filter({ hasText: 'accent=american, source=librispeech' }).waitFor();
    assert.deepEqual(await unlabelledControls(page), []);
    await screenshot(t, page, 'voices');
  });

  test('deleting asks for confirmation in a dialog; cancel keeps the voice, confirm removes it', async () => {
    await page.getByRole('link', { name: 'Voices' }).click();
    const cloned = page.getByRole('list', { name: 'Cloned voices' }).getByRole('listitem');
    await page.getByRole('button', { name: 'Delete Reader 3080 (library)' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete voice' });
    await dialog.getByText('This cannot be undone.').waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    assert.equal(await cloned.count(), 1);
    await page.getByRole('button', { name: 'Delete Reader 3080 (library)' }).click();
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('None yet: clone one above.').waitFor();
    const listed = (await (await fetch(`${page.url().split('#')[0]}v1/voices?type=cloned`, { headers: { authorization: `Bearer ${server.key}` } })).json()) as { voices: unknown[] };
    assert.deepEqual(listed.voices, [], 'gone from the API too');
  });
});
