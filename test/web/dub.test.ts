/**
 * The studio's Dub page in Chromium: a two-speaker video over music dubbed as a job (progress by stage), then the original
 * and the dub A/B, the dubbed video, who spoke for whom, the lines and the downloads; consent is asked for before cloning.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, makeTempDir, type TestApp } from '../helpers/app.js';
import { clipSeconds, dubbingClip } from '../helpers/dubbing.js';
import { durationOf, failedResource, screenshot, startStudio, type Studio } from './browser.js';

describe('Dub page in Chromium', () => {
  let server: TestApp;
  let studio: Studio;
  let dir: string;
  let video: string;

  before(async () => {
    dir = makeTempDir('web-dub');
    ({ video } = await dubbingClip(dir));
    server = await buildTestApp();
    server.container.jobWorker.start();
    studio = await startStudio(server);
  });
  after(async () => {
    await studio?.close();
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('without consent the page says why and points at the box; with it, the dub plays A/B and downloads', async (t) => {
    const { page, consoleErrors } = await studio.open();
    await page.getByRole('link', { name: 'Dub' }).click();
    await page.getByLabel('Recording or video to dub').setInputFiles(video);
    await page.getByRole('button', { name: 'Dub', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'consent' }).waitFor();
    assert.equal(await page.getByLabel(/agreed to having their voices cloned/).getAttribute('aria-invalid'), 'true');

    await page.getByLabel(/agreed to having their voices cloned/).check();
    // The job's progress shows while it runs (seen whenever that is: the upload may take a while on a busy machine).
    const progressShown = page
      .getByRole('status')
      .filter({ hasText: /Job (queued|running)/ })
      .waitFor({ timeout: 900_000 })
      .then(
        () => true,
        () => false,
      );
    await page.getByRole('button', { name: 'Dub', exact: true }).click();
    const heading = page.getByRole('heading', { name: /^Dubbed from en into en/ });
    // The dub, or the error the page shows instead (said at once rather than after the test's timeout).
    const outcome = await Promise.race([
      heading.waitFor({ timeout: 500_000 }).then(() => 'dubbed'),
      page
        .getByRole('alert')
        .waitFor({ timeout: 500_000 })
        .then(async () => `error: ${await page.getByRole('alert').textContent()}`),
    ]);
    if (outcome !== 'dubbed') await screenshot(t, page, 'dub-failed');
    assert.equal(outcome, 'dubbed');
    const afterASecond = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 1000));
    assert.ok(await Promise.race([progressShown, afterASecond]), 'the job showed its progress');

    const voices = page.getByRole('table', { name: 'Voices' }).locator('tbody tr');
    assert.equal(await voices.count(), 2, 'a voice per speaker');
    assert.match((await voices.first().textContent()) ?? '', /SPEAKER_\d.*cloned for this dub, deleted after/);
    assert.ok((await page.getByRole('list', { name: 'Dubbed lines' }).locator('li').count()) >= 2);
    const dubbedSeconds = await durationOf(page.getByLabel('Dubbed audio'));
    assert.ok(Math.abs(dubbedSeconds - clipSeconds) < 0.2, `the dub lasts ${dubbedSeconds} s`);
    assert.equal(await page.getByLabel('Dubbed video').count(), 1);

    // A/B: the original plays, then the dub takes over from the same moment.
    await page.getByLabel('Original audio').evaluate((audio: HTMLAudioElement) => audio.play());
    await page.waitForTimeout(700);
    await page.getByRole('button', { name: 'Switch A/B' }).click();
    const sides = await page
      .locator('.ab audio')
      .evaluateAll((elements: HTMLAudioElement[]) => elements.map((e) => ({ paused: e.paused, time: e.currentTime })));
    assert.ok(sides[0]!.paused && !sides[1]!.paused, JSON.stringify(sides));
    assert.ok(Math.abs(sides[0]!.time - sides[1]!.time) < 0.3, JSON.stringify(sides));
    await page.getByLabel('Dubbed audio').evaluate((audio: HTMLAudioElement) => audio.pause());

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download subtitles (SRT)' }).click(),
    ]);
    assert.match(download.suggestedFilename(), /\.srt$/);
    const saved = path.join(dir, 'dub.srt');
    await download.saveAs(saved);
    await screenshot(t, page, 'dub');
    assert.ok(
      consoleErrors.every((error) => failedResource.test(error)),
      consoleErrors.join('\n'),
    );
    await page.close();
  });
});
