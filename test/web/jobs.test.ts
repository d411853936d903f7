/** Jobs in the studio: a long transcription run as a job with a progress bar fed by the job's events; the Jobs page lists, cancels and downloads results. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { longSpeech } from '../helpers/jobs.js';
import { modelFile } from '../helpers/models.js';
import { screenshot, startStudio, type Studio } from './browser.js';

describe('jobs in Chromium', () => {
  let server: TestApp;
  let studio: Studio;
  let page: Page;
  let consoleErrors: string[];

  before(async () => {
    await Promise.all([
      modelFile('whisper-base', 'ggml-base.bin'),
      modelFile('silero-vad', 'silero_vad.onnx'),
      modelFile('kokoro-82m', ''),
      modelFile('kokoro-voices', ''),
    ]);
    server = await buildTestApp();
    // The in-process job worker, as `voxd serve` runs it.
    server.container.startBackground();
    studio = await startStudio(server);
    ({ page, consoleErrors } = await studio.open());
  });
  after(async () => {
    await studio?.close();
    await server?.close();
    assert.deepEqual(consoleErrors, []);
  });

  test('a transcription run as a job shows its progress, then the transcript; the Jobs page lists it as succeeded', async (t) => {
    await page.getByRole('link', { name: 'Transcribe' }).click();
    // About 33 s of speech: long enough for several progress events.
    await page.getByLabel('Audio or video file').setInputFiles(await longSpeech(3));
    await page.getByRole('region', { name: 'Transcribe' }).getByLabel('Run as a job').check();
    // Every value the progress bar shows, as the page draws it.
    await page.evaluate(() => {
      const seen: number[] = [];
      Object.assign(window, { progressSeen: seen });
      new MutationObserver(() => {
        const bar = document.querySelector<HTMLProgressElement>('#transcribe-heading ~ form .job-progress progress');
        if (bar?.hasAttribute('value') && seen.at(-1) !== bar.value) seen.push(bar.value);
      }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['value'] });
    });
    await page.getByRole('button', { name: 'Transcribe', exact: true }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Job (queued|running)/ })
      .first()
      .waitFor();
    await screenshot(t, page, 'transcribe-job-progress');
    const transcript = page.locator('.transcript');
    await transcript.waitFor({ timeout: 120_000 });
    assert.match((await transcript.textContent()) ?? '', /ask not what your country can do for you/i);
    const seen = await page.evaluate(() => (window as unknown as { progressSeen: number[] }).progressSeen);
    assert.ok(
      seen.some((fraction) => fraction > 0 && fraction < 1),
      `progress shown: ${seen.join(', ')}`,
    );
    assert.deepEqual(
      seen,
      [...seen].sort((a, b) => a - b),
      'progress only grows',
    );
    assert.equal(await page.locator('.job-progress').count(), 0, 'the bar goes once the job is over');

    await page.getByRole('link', { name: 'Jobs' }).click();
    const job = page.getByRole('list', { name: 'Jobs' }).getByRole('listitem').first();
    await job.filter({ hasText: 'transcribe' }).filter({ hasText: 'succeeded' }).filter({ hasText: 'speech-3.wav' }).waitFor();
    // Its result stays available from the list (as the JSON the synchronous call answers).
    const [download] = await Promise.all([page.waitForEvent('download'), job.getByRole('button', { name: /^Download result/ }).click()]);
    assert.match(download.suggestedFilename(), /^job_[0-9a-f]{32}\.json$/);
    assert.match(
      (JSON.parse(readFileSync(await download.path(), 'utf8')) as { text: string }).text,
      /ask not what your country can do for you/i,
    );
  });

  test('a running job is cancelled from the Jobs page; the page that started it shows that it was', async (t) => {
    await page.getByRole('link', { name: 'Transcribe' }).click();
    const transcribe = page.getByRole('region', { name: 'Transcribe' });
    // About 90 s of speech: still running when the cancel arrives. "Run as a job" is still ticked.
    await transcribe.getByLabel('Audio or video file').setInputFiles(await longSpeech(8));
    await page.getByRole('button', { name: 'Transcribe', exact: true }).click();
    await transcribe
      .getByRole('status')
      .filter({ hasText: /^Job running/ })
      .waitFor({ timeout: 30_000 });

    await page.getByRole('link', { name: 'Jobs' }).click();
    await page.getByRole('button', { name: 'Refresh' }).click();
    const job = page.getByRole('list', { name: 'Jobs' }).getByRole('listitem').filter({ hasText: 'speech-8.wav' });
    await job.getByRole('progressbar').waitFor();
    await screenshot(t, page, 'jobs');
    await job.getByRole('button', { name: /^Cancel/ }).click();
    // The list is read again while a job is active: the cancelled status shows without a click.
    await job.filter({ hasText: 'cancelled' }).waitFor({ timeout: 30_000 });
    assert.equal(await job.getByRole('button', { name: /^Cancel/ }).count(), 0);

    await page.getByRole('link', { name: 'Transcribe' }).click();
    await page.locator('#transcribe-error', { hasText: 'The job was cancelled.' }).waitFor();
    assert.equal(await transcribe.locator('.job-progress').count(), 0);
  });

  test('a job whose result is a file (speech made with async=true through the API) downloads it from the Jobs page', async () => {
    const accepted = await server.app.inject({
      method: 'POST',
      url: '/v1/audio/tts',
      headers: { authorization: `Bearer ${server.key}` },
      payload: { text: 'Results of jobs can be fetched later.', voice_id: 'af_heart', format: 'wav', async: true },
    });
    assert.equal(accepted.statusCode, 202, accepted.body);
    await page.getByRole('link', { name: 'Jobs' }).click();
    const job = page.getByRole('list', { name: 'Jobs' }).getByRole('listitem').filter({ hasText: 'tts' });
    // Read again every 2 s while the job is active: it turns succeeded without a click.
    const download = job.getByRole('button', { name: /^Download result/ });
    await download.waitFor({ timeout: 60_000 });
    const [file] = await Promise.all([page.waitForEvent('download'), download.click()]);
    assert.match(file.suggestedFilename(), /\.wav$/);
    assert.equal(
      readFileSync(await file.path())
        .subarray(0, 4)
        .toString(),
      'RIFF',
    );
  });
});
