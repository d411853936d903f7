/**
 * The Transcribe page names diarized speakers after the key's voice profiles (speaker_voice_ids), in Chromium against
 * the real server: a conversation built here from two eval/vc readers whose profiles were made from their other clips.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { buildConversation, levelled, random, trimmed } from '../../bench/lib/conversations.js';
import { decodeFile } from '../../src/audio/decode.js';
import { encodeWaveform } from '../../src/audio/encode.js';
import { buildTestApp, createVoice, evalDir, evalFile, makeTempDir, type TestApp } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';
import { screenshot, startStudio, unlabelledControls, type Studio } from './browser.js';

const clipPath = (name: string) => path.join(evalDir, 'vc/resemblyzer_librispeech', name);

describe('named speakers on the Transcribe page in Chromium', () => {
  let server: TestApp;
  let studio: Studio;
  let page: Page;
  let consoleErrors: string[];
  const meeting = path.join(makeTempDir('web-named-speakers'), 'meeting.wav');

  before(async () => {
    await Promise.all([
      modelFile('whisper-base', 'ggml-base.bin'),
      modelFile('silero-vad', 'silero_vad.onnx'),
      modelFile('resemblyzer-ge2e', 'ge2e.onnx'),
      modelFile('campplus', 'campplus.onnx'),
      modelFile('pyannote-segmentation-3', 'segmentation-3.0.onnx'),
    ]);
    server = await buildTestApp();
    // Profiles from one clip of each reader; the meeting from another clip of each.
    for (const [name, clip] of [
      ['Alex', '2033-164914-0001.wav'],
      ['Beth', '3080-5032-0001.wav'],
    ] as const) {
      await createVoice(server, { name }, evalFile(`vc/resemblyzer_librispeech/${clip}`));
    }
    const heard = new Map<string, Float32Array[]>();
    for (const [speaker, clip] of [
      ['alex', '2033-164914-0003.wav'],
      ['beth', '3080-5032-0004.wav'],
    ] as const) {
      heard.set(speaker, [levelled(trimmed((await decodeFile(clipPath(clip), { sampleRate: 16000, channels: 1 })).samples))]);
    }
    const conversation = buildConversation(heard, ['alex', 'beth'], random(17), 6);
    writeFileSync(meeting, await encodeWaveform({ samples: conversation.samples, sampleRate: 16000, channels: 1 }, { format: 'wav' }));

    studio = await startStudio(server);
    ({ page, consoleErrors } = await studio.open());
  });
  after(async () => {
    await studio?.close();
    await server?.close();
    assert.deepEqual(consoleErrors, []);
  });

  test('with speaker labelling on, the cloned voices can be picked; the transcript shows each speaker by its profile name', async (t) => {
    await page.getByRole('link', { name: 'Transcribe' }).click();
    const transcribePage = page.getByRole('region', { name: 'Transcribe' });
    await transcribePage.getByLabel('Audio or video file').setInputFiles(meeting);
    await transcribePage.getByLabel('Language').selectOption('en');
    const profiles = transcribePage.getByRole('group', { name: 'Name speakers after voice profiles' });
    assert.equal(await profiles.count(), 0, 'offered only when speakers are labelled');
    await transcribePage.getByLabel('Label speakers').check();
    await profiles.getByLabel('Alex').check();
    await profiles.getByLabel('Beth').check();
    assert.deepEqual(await unlabelledControls(page), []);
    await transcribePage.getByRole('button', { name: 'Transcribe' }).click();

    const speakerLabels = page.locator('.transcript .speaker');
    await speakerLabels.first().waitFor({ timeout: 120_000 });
    const labels = new Set(await speakerLabels.allTextContents());
    assert.ok(
      [...labels].some((label) => /^Alex \(SPEAKER_\d+\)$/.test(label)),
      [...labels].join(', '),
    );
    assert.ok(
      [...labels].some((label) => /^Beth \(SPEAKER_\d+\)$/.test(label)),
      [...labels].join(', '),
    );
    await screenshot(t, page, 'transcribe-named-speakers');
  });
});
