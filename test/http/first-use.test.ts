/**
 * Issue 20, first use: what depends only on the model files (built-in voices' speaker embeddings and conversion
 * statistics) is prepared with the models, so a fresh server's first cloned-voice speech and first conversion to a
 * built-in voice analyse no built-in voice (they took 92 s and 15 s when they did).
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { BuiltinAnalysisStore } from '../../src/voices/builtin-store.js';
import { buildTestApp, evalDir, makeTempDir, multipartBody } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';
import { worldAddon } from '../helpers/vc-assets.js';

const clip = (name: string): Buffer => readFileSync(path.join(evalDir, 'vc/resemblyzer_librispeech', name));
const target = 'am_michael';

describe('first use: no request analyses a built-in voice', () => {
  test('a fresh server (fresh data dir): first cloned-voice TTS and first conversion to a built-in voice read the prepared analyses', async () => {
    await Promise.all([modelFile('silero-vad', 'silero_vad.onnx'), modelFile('resemblyzer-ge2e', 'ge2e.onnx'), modelFile('kokoro-82m', ''), modelFile('kokoro-voices', ''), worldAddon()]);
    // What `voxd models pull` does for all voices (here the ones these requests use: the cloned voice is a female reader
    // speaking English, blended from American English female voices).
    const setup = await buildTestApp();
    try {
      const kokoro = await setup.container.kokoro.get();
      const voiceIds = [...kokoro.voices().filter((v) => v.languages.includes('en-us') && v.gender === 'female').map((v) => v.id), target];
      await setup.container.operations.synthesis.prepareBuiltinVoices({ voiceIds });
    } finally {
      await setup.close();
    }

    const t = await buildTestApp();
    try {
      const auth = { authorization: `Bearer ${t.key}` };
      const voice = multipartBody({ name: 'Reader 3080', consent: 'true', language: 'en' }, { files: [{ filename: 'a.wav', content: clip('3080-5032-0001.wav') }, { filename: 'b.wav', content: clip('3080-5032-0004.wav') }] });
      const created = await t.app.inject({ method: 'POST', url: '/v1/voices', headers: { ...auth, 'content-type': voice.contentType }, payload: voice.body });
      assert.equal(created.statusCode, 201, created.body);

      let startedAt = performance.now();
      const speech = await t.app.inject({ method: 'POST', url: '/v1/audio/tts', headers: auth, payload: { text: 'Please leave a message after the tone.', voice_id: created.json().voice_id, format: 'wav' } });
      assert.equal(speech.statusCode, 200, speech.body);
      const ttsSeconds = (performance.now() - startedAt) / 1000;

      startedAt = performance.now();
      const form = multipartBody({ target_voice_id: target }, { audio: { filename: 'source.wav', content: clip('2033-164914-0001.wav') } });
      const converted = await t.app.inject({ method: 'POST', url: '/v1/audio/vc', headers: { ...auth, 'content-type': form.contentType }, payload: form.body });
      assert.equal(converted.statusCode, 200, converted.body);
      const vcSeconds = (performance.now() - startedAt) / 1000;

      assert.equal(t.container.voices.builtinAnalysesComputed, 0, 'no built-in voice was analysed by a request');
      const metrics = (await t.app.inject({ method: 'GET', url: '/metrics', headers: auth })).body;
      assert.doesNotMatch(metrics, /^voxd_builtin_voice_analyses_total\{[^}]*\} [1-9]/m);
      process.stdout.write(`first cloned-voice TTS ${ttsSeconds.toFixed(1)} s (models loading included), first conversion to ${target} ${vcSeconds.toFixed(1)} s\n`);
    } finally {
      await t.close();
    }
  });

  test('a stored analysis that fails its sha256 check is not used (it is computed again)', async () => {
    const store = new BuiltinAnalysisStore(makeTempDir('builtin'));
    await store.write('af_heart', 'world-dsp', { analysis: { median: 1 }, files: { envelope: Uint8Array.of(1, 2, 3, 4) } });
    assert.deepEqual((await store.read('af_heart', 'world-dsp'))?.analysis, { median: 1 });
    writeFileSync(path.join(store.dir, 'af_heart', 'world-dsp-envelope'), Uint8Array.of(9, 9, 9, 9));
    assert.equal(await store.read('af_heart', 'world-dsp'), undefined);
  });
});
