/**
 * Issue 20: a voice cloned from a well-known male speaker came back `gender_estimate: "female"` (his speech has a median
 * F0 of 255 Hz). Over the eval speakers whose gender is known (../shared/eval manifest, plus JFK), at least 95% correct.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, createVoice, evalDir, evalFile, type TestApp } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';

interface Entry {
  audio: string;
  speaker: string;
  gender?: 'F' | 'M';
}
const manifest = JSON.parse(readFileSync(path.join(evalDir, 'manifest.json'), 'utf8')) as { vc: Entry[] };
const speakers = new Map<string, { gender: 'female' | 'male'; files: string[] }>([
  ['JFK', { gender: 'male', files: ['asr/whisper_cpp/jfk.wav'] }],
]);
for (const entry of manifest.vc.filter((e) => e.gender)) {
  const speaker = speakers.get(entry.speaker) ?? { gender: entry.gender === 'F' ? 'female' : 'male', files: [] };
  speaker.files.push(entry.audio);
  speakers.set(entry.speaker, speaker);
}

describe('gender estimate of cloned voices', () => {
  let t: TestApp;
  before(async () => {
    await Promise.all([
      modelFile('silero-vad', 'silero_vad.onnx'),
      modelFile('resemblyzer-ge2e', 'ge2e.onnx'),
      modelFile('kokoro-82m', ''),
      modelFile('kokoro-voices', ''),
    ]);
    t = await buildTestApp();
    // The references: the Kokoro voices' embeddings, prepared with the models (as `voxd models pull` does).
    await t.container.operations.synthesis.prepareBuiltinVoices();
  });
  after(async () => t?.close());

  test(`at least 95% right over ${speakers.size} eval speakers of known gender, JFK included`, async () => {
    const wrong: string[] = [];
    for (const [name, speaker] of speakers) {
      const created = await createVoice(t, { name }, speaker.files.map(evalFile));
      if (created.gender_estimate !== speaker.gender) wrong.push(`${name} (${speaker.gender}) as ${created.gender_estimate}`);
    }
    assert.ok(wrong.length <= speakers.size * 0.05, `wrong: ${wrong.join(', ')}`);
    assert.ok(!wrong.some((w) => w.startsWith('JFK')), 'JFK is male');
  });
});
