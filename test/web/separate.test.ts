/** The studio's Separate page in Chromium: a real eval mixture split into stems, each with a waveform, a mixer and a download. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decodeFile } from '../../src/audio/decode.js';
import { encodeWaveformToFile } from '../../src/audio/encode.js';
import { buildTestApp, evalDir, makeTempDir, type TestApp } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';
import { screenshot, startStudio, type Studio } from './browser.js';

/** The first seconds of an eval mixture (dialogue, music and effects): enough for every stem, quick to separate. */
const excerptSeconds = 4;

describe('Separate page in Chromium', () => {
  let server: TestApp;
  let studio: Studio;
  let mixture: string;

  before(async () => {
    await Promise.all([
      modelFile('dtln', 'model_1.onnx'),
      modelFile('deepfilternet3', 'enc.onnx'),
      modelFile('spleeter-2stems', 'vocals.onnx'),
    ]);
    const full = await decodeFile(path.join(evalDir, 'sep/dnr_mix01/mixture.wav'));
    const excerpt = { ...full, samples: full.samples.subarray(0, excerptSeconds * full.sampleRate * full.channels) };
    mixture = path.join(makeTempDir('web-separate'), 'mixture.wav');
    await encodeWaveformToFile(excerpt, { format: 'wav', sampleRate: full.sampleRate }, mixture);
    server = await buildTestApp();
    studio = await startStudio(server);
  });
  after(async () => {
    await studio?.close();
    await server?.close();
  });

  test('four stems appear with their waveforms; solo, gain, play-all and the position slider drive every stem together; a stem downloads', async (t) => {
    const { page, consoleErrors } = await studio.open();
    await page.getByRole('link', { name: 'Separate' }).click();
    await page.getByLabel('Soundtrack').setInputFiles(mixture);
    for (const stem of ['dialogue', 'music', 'sfx', 'ambience'])
      assert.ok(await page.getByLabel(stem, { exact: true }).isChecked(), `${stem} is picked by default`);
    await page.getByRole('button', { name: 'Separate', exact: true }).click();
    const stems = page.getByRole('list', { name: 'Stems' }).locator('.stem');
    await page.locator('.stem[data-ready="true"]').nth(3).waitFor({ timeout: 120_000 });
    assert.deepEqual(await stems.locator('h4').allTextContents(), ['dialogue', 'music', 'sfx', 'ambience']);
    // Each waveform is drawn from its stem's samples.
    assert.equal(await page.locator('.waveform').count(), 4);
    for (const waveform of await page.locator('.waveform').all()) {
      assert.ok(
        await waveform.evaluate((element) => (element.firstElementChild?.shadowRoot?.querySelectorAll('canvas').length ?? 0) > 0),
        'a canvas is drawn',
      );
    }

    const mediaState = () =>
      page
        .locator('.stem audio')
        .evaluateAll((elements: HTMLAudioElement[]) =>
          elements.map((e) => ({ muted: e.muted, volume: e.volume, time: e.currentTime, paused: e.paused })),
        );
    await page.getByRole('button', { name: 'Solo dialogue' }).click();
    await page.getByLabel('music gain').fill('0.5');
    let state = await mediaState();
    assert.deepEqual(
      state.map((s) => s.muted),
      [false, true, true, true],
      'solo leaves the dialogue alone',
    );
    assert.equal(state[1]!.volume, 0.5);
    await page.getByRole('button', { name: 'Solo dialogue' }).click();
    await page.getByRole('button', { name: 'Mute sfx' }).click();
    assert.deepEqual(
      (await mediaState()).map((s) => s.muted),
      [false, false, true, false],
    );

    await page.getByRole('button', { name: 'Play all' }).click();
    await page.waitForTimeout(1000);
    await page.getByRole('button', { name: 'Pause all' }).click();
    state = await mediaState();
    const times = state.map((s) => s.time);
    assert.ok(state.every((s) => s.paused) && Math.min(...times) > 0.3, `played: ${times.join(', ')}`);
    assert.ok(Math.max(...times) - Math.min(...times) < 0.1, `in sync: ${times.join(', ')}`);
    // The position slider (the keyboard's way to seek) moves every stem.
    await page.getByLabel('Position').fill('2');
    assert.deepEqual(
      (await mediaState()).map((s) => Math.round(s.time * 10) / 10),
      [2, 2, 2, 2],
    );
    await screenshot(t, page, 'separate');
    await page.setViewportSize({ width: 390, height: 900 });
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth), 'the mixer fits a phone');
    await screenshot(t, page, 'separate-phone');

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download dialogue' }).click()]);
    assert.equal(download.suggestedFilename(), 'dialogue.wav');
    const saved = path.join(makeTempDir('web-stem'), 'dialogue.wav');
    await download.saveAs(saved);
    const stem = await decodeFile(saved);
    assert.ok(
      Math.abs(stem.samples.length / stem.sampleRate / stem.channels - excerptSeconds) < 0.01,
      'the stem is as long as the mixture',
    );
    assert.equal(readFileSync(saved).subarray(0, 4).toString(), 'RIFF');
    assert.deepEqual(consoleErrors, []);
    await page.close();
  });
});
