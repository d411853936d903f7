/** The microphone in the studio (recording, and live transcription over the realtime socket), through Chromium's fake capture device playing an eval clip. */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, evalDir, type TestApp } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';
import { screenshot, startStudio, type Studio } from './browser.js';

/** "Mr. Quilter is the apostle of the middle classes and we are glad to welcome his gospel." (5.9 s) */
const clip = path.join(evalDir, 'asr/pv_leopard/test.wav');

describe('the microphone in Chromium', () => {
  let server: TestApp;
  let studio: Studio;

  before(async () => {
    await Promise.all([modelFile('whisper-base', 'ggml-base.bin'), modelFile('silero-vad', 'silero_vad.onnx')]);
    server = await buildTestApp();
    // Its own browser: the fake microphone plays the clip (in a loop) to every page that asks for one, without a prompt.
    studio = await startStudio(server, [
      '--use-fake-ui-for-media-stream',
      '--use-fake-device-for-media-stream',
      `--use-file-for-fake-audio-capture=${clip}`,
    ]);
  });
  after(async () => {
    await studio?.close();
    await server?.close();
  });

  test('a recording on the Transcribe page transcribes to the words spoken into the microphone', async (t) => {
    const { page, consoleErrors } = await studio.open();
    await page.getByRole('link', { name: 'Transcribe' }).click();
    const region = page.getByRole('region', { name: 'Transcribe' });
    await region.getByRole('button', { name: 'Record', exact: true }).click();
    await region.getByRole('status').filter({ hasText: 'Recording from the microphone' }).waitFor();
    await page.waitForTimeout(6500);
    await region.getByRole('button', { name: 'Stop recording' }).click();
    await region.getByText(/^recording\.webm \(0\.\d MB\)$/).waitFor();
    await page.getByRole('button', { name: 'Transcribe', exact: true }).click();
    const transcript = page.locator('.transcript');
    await transcript.waitFor({ timeout: 90_000 });
    const text = (await transcript.textContent()) ?? '';
    assert.match(text, /apostle of the middle classes/i);
    const played = page.getByLabel('Uploaded audio');
    assert.ok(await played.evaluate((element: HTMLAudioElement) => element.src.startsWith('blob:')), 'the recording can be played back');
    await screenshot(t, page, 'transcribe-microphone');
    assert.deepEqual(consoleErrors, []);
    await page.close();
  });

  test('the Convert page records too', async () => {
    const { page, consoleErrors } = await studio.open({ key: null });
    await page.getByRole('link', { name: 'Convert' }).click();
    const region = page.getByRole('region', { name: 'Convert' });
    await region.getByRole('button', { name: 'Record', exact: true }).click();
    await page.waitForTimeout(1000);
    await region.getByRole('button', { name: 'Stop recording' }).click();
    await region.getByText(/^recording\.webm \(0\.\d MB\)$/).waitFor();
    assert.deepEqual(consoleErrors, []);
    await page.close();
  });

  test('live mode streams the microphone over the realtime socket: turns appear as they are spoken, Stop finishes the last one', async (t) => {
    const { page, consoleErrors } = await studio.open();
    await page.getByRole('link', { name: 'Transcribe' }).click();
    await page.getByRole('region', { name: 'Transcribe' }).getByLabel('Language', { exact: true }).selectOption('en');
    await page.getByRole('button', { name: 'Start live transcription' }).click();
    await page.getByRole('status').filter({ hasText: 'Listening' }).waitFor();
    // The clip once and a bit: the fake microphone loops it with hardly a pause, so Stop ends the turn.
    await page.waitForTimeout(7000);
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    const live = page.getByLabel('Live transcript');
    await live
      .locator('.segment.final', { hasText: /apostle of the middle classes/i })
      .first()
      .waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'Start live transcription' }).waitFor({ timeout: 20_000 });
    assert.equal(await live.locator('.segment.partial').count(), 0, 'every turn left is final');
    await screenshot(t, page, 'transcribe-live');
    assert.deepEqual(consoleErrors, []);
    await page.close();
  });

  test('a key the realtime socket refuses (no transcribe scope) is reported on the live panel', async () => {
    const { page, consoleErrors } = await studio.open({ key: await server.keyWith(['tts']) });
    await page.getByRole('link', { name: 'Transcribe' }).click();
    await page.getByRole('button', { name: 'Start live transcription' }).click();
    await page
      .locator('#live-error', { hasText: 'The live session could not be opened: check the API key (it needs the transcribe scope).' })
      .waitFor();
    await page.getByRole('button', { name: 'Start live transcription' }).waitFor();
    // What Chromium logs for the refused upgrade.
    assert.ok(
      consoleErrors.every((error) => /WebSocket connection to .* failed/.test(error)),
      consoleErrors.join('\n'),
    );
    await page.close();
  });
});
