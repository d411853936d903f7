/** The studio's Voices and Convert pages in Chromium: clone a voice from two eval clips, rename it, convert a clip to it, delete it. */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { buildTestApp, evalDir, type TestApp } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';
import { worldAddon } from '../helpers/vc-assets.js';
import { durationOf, rmsOf, screenshot, startStudio, unlabelledControls, type Studio } from './browser.js';

const readers = path.join(evalDir, 'vc/resemblyzer_librispeech');
/** Two clips of one reader (librispeech 3080, per the eval manifest) to clone; a clip of another reader (2033) to convert. */
const referenceClips = ['3080-5032-0001.wav', '3080-5032-0004.wav'].map((name) => path.join(readers, name));
const sourceClip = path.join(readers, '2033-164914-0001.wav');
const sourceSeconds = 6.74;

describe('Voices and Convert pages in Chromium', () => {
  let server: TestApp;
  let studio: Studio;
  let page: Page;
  let consoleErrors: string[];

  before(async () => {
    await Promise.all([
      modelFile('silero-vad', 'silero_vad.onnx'),
      modelFile('resemblyzer-ge2e', 'ge2e.onnx'),
      modelFile('kokoro-82m', ''),
      modelFile('kokoro-voices', ''),
      worldAddon(),
    ]);
    server = await buildTestApp();
    studio = await startStudio(server);
    // One tab through the three steps, as a person would go from Voices to Convert and back.
    ({ page, consoleErrors } = await studio.open());
  });
  after(async () => {
    await studio?.close();
    await server?.close();
    assert.deepEqual(consoleErrors, []);
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
    assert.match((await cloned.first().textContent()) ?? '', /\d+ s of reference audio/);

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

  test('a clip of another reader converted to the cloned voice plays back as long as the source, not silent, with the similarity figures', async (t) => {
    await page.getByRole('link', { name: 'Convert' }).click();
    await page.getByLabel('Recording to re-voice').setInputFiles(sourceClip);
    const target = page.getByLabel('Target voice');
    await target.selectOption({ label: 'Reader 3080 (library)' });
    await page.getByRole('button', { name: 'Convert', exact: true }).click();
    const converted = page.getByLabel('Converted audio');
    await converted.waitFor({ timeout: 120_000 });
    assert.ok(Math.abs((await durationOf(converted)) - sourceSeconds) < 0.1, 'as long as the source');
    const rms = await rmsOf(converted);
    assert.ok(rms > 0.01, `rms ${rms}`);
    assert.ok(Math.abs((await durationOf(page.getByLabel('Source audio'))) - sourceSeconds) < 0.05);
    const toTarget = Number.parseFloat((await page.locator('.similarity-target').textContent()) ?? '');
    const sourceToTarget = Number(/source: ([\d.-]+)/.exec((await page.locator('.similarity-target').textContent()) ?? '')?.[1]);
    assert.ok(toTarget > sourceToTarget, `closer to the target (${toTarget}) than the source was (${sourceToTarget})`);
    assert.match((await page.locator('.f0').textContent()) ?? '', /^-?\d\.\d\d$/);

    // A/B: the converted side takes over from where the source is.
    const source = page.getByLabel('Source audio');
    await source.evaluate((element: HTMLAudioElement) => element.play());
    await page.waitForTimeout(500);
    await page.getByRole('button', { name: 'Switch A/B' }).click();
    const sides = await page
      .locator('.ab audio')
      .evaluateAll((elements: HTMLAudioElement[]) => elements.map((e) => ({ paused: e.paused, time: e.currentTime })));
    assert.ok(sides[0]!.paused && !sides[1]!.paused && sides[1]!.time > 0.2, JSON.stringify(sides));
    await page
      .locator('.ab audio')
      .nth(1)
      .evaluate((element: HTMLAudioElement) => element.pause());
    assert.equal(await page.getByRole('link', { name: 'Download converted' }).getAttribute('download'), 'converted.wav');
    await screenshot(t, page, 'convert');
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
    const listed = (await (
      await fetch(`${page.url().split('#')[0]}v1/voices?type=cloned`, { headers: { authorization: `Bearer ${server.key}` } })
    ).json()) as { voices: unknown[] };
    assert.deepEqual(listed.voices, [], 'gone from the API too');
    // The Convert page's picker follows.
    assert.equal(await page.getByLabel('Target voice').locator('option', { hasText: 'Reader 3080' }).count(), 0);
  });
});
