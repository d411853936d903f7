/**
 * First use (issues 20 and 32): what the first requests need of the built-in voices (their speaker embeddings) is
 * prepared with the models, and what they need of a cloned voice (the converter's statistics) with the profile, so a fresh server's first cloned-voice speech analyses no built-in voice; what only a
 * conversion to a built-in voice needs (the converter's statistics of it) is computed by the first such conversion and
 * kept beside the models for every later one, in this process and the next. Their latencies: bench/first-use.ts.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { BuiltinAnalysisStore } from '../../src/voices/builtin-store.js';
import { buildTestApp, createVoice, evalDir, makeTempDir, multipartBody, type TestApp } from '../helpers/app.js';
import { modelFile, modelsDirWithoutDerived } from '../helpers/models.js';
import { worldAddon } from '../helpers/vc-assets.js';

const clip = (name: string): Buffer => readFileSync(path.join(evalDir, 'vc/resemblyzer_librispeech', name));
const target = 'am_michael';

async function convertTo(t: TestApp, voiceId: string): Promise<void> {
  const form = multipartBody({ target_voice_id: voiceId }, { audio: { filename: 'source.wav', content: clip('2033-164914-0001.wav') } });
  const converted = await t.app.inject({
    method: 'POST',
    url: '/v1/audio/vc',
    headers: { authorization: `Bearer ${t.key}`, 'content-type': form.contentType },
    payload: form.body,
  });
  assert.equal(converted.statusCode, 200, converted.body);
}

describe('first use: built-in voices are analysed once, never twice', () => {
  test('a fresh server (fresh data dir): the first cloned-voice TTS reads the prepared embeddings; the first conversion to a built-in voice computes its statistics once and keeps them', async () => {
    await Promise.all([
      modelFile('silero-vad', 'silero_vad.onnx'),
      modelFile('resemblyzer-ge2e', 'ge2e.onnx'),
      modelFile('kokoro-82m', ''),
      modelFile('kokoro-voices', ''),
      worldAddon(),
    ]);
    // What `voxd models pull` does for the default language's voices (here the ones these requests use: the cloned voice
    // is a female reader speaking English, blended from American English female voices).
    const modelsDir = modelsDirWithoutDerived();
    const setup = await buildTestApp({ VOXD_MODELS_DIR: modelsDir });
    try {
      const kokoro = await setup.container.synthesizers.get('kokoro-82m')!.get();
      const voiceIds = [
        ...kokoro
          .voices()
          .filter((v) => v.languages.includes('en-us') && v.gender === 'female')
          .map((v) => v.id),
        target,
      ];
      assert.equal(await setup.container.operations.synthesis.prepareBuiltinVoices({ voiceIds }), voiceIds.length);
      assert.equal(await setup.container.operations.synthesis.prepareBuiltinVoices({ voiceIds }), 0, 'a second run analyses nothing');
    } finally {
      await setup.close();
    }

    const t = await buildTestApp({ VOXD_MODELS_DIR: modelsDir });
    try {
      const auth = { authorization: `Bearer ${t.key}` };
      const created = await createVoice(t, { name: 'Reader 3080', language: 'en' }, [
        { filename: 'a.wav', content: clip('3080-5032-0001.wav') },
        { filename: 'b.wav', content: clip('3080-5032-0004.wav') },
      ]);
      // Made with the profile: its first speech, converted to it, does not analyse its clips first.
      assert.ok((await t.container.store.voices.get(created.voice_id))?.analysis['world-dsp'], 'conversion statistics made at creation');
      const speech = await t.app.inject({
        method: 'POST',
        url: '/v1/audio/tts',
        headers: auth,
        payload: { text: 'Please leave a message after the tone.', voice_id: created.voice_id, format: 'wav' },
      });
      assert.equal(speech.statusCode, 200, speech.body);
      assert.equal(t.container.voices.builtinAnalysesComputed, 0, 'the cloned-voice TTS analysed no built-in voice');

      await convertTo(t, target);
      assert.equal(t.container.voices.builtinAnalysesComputed, 1, `the first conversion to ${target} computed its statistics`);
      await convertTo(t, target);
      assert.equal(t.container.voices.builtinAnalysesComputed, 1, 'the second one read them');
      const metrics = (await t.app.inject({ method: 'GET', url: '/metrics', headers: auth })).body;
      assert.match(metrics, /^voxd_builtin_voice_analyses_total\{analysis="world-dsp"\} 1$/m);
      assert.doesNotMatch(metrics, /^voxd_builtin_voice_analyses_total\{analysis="speaker"\} [1-9]/m);

      // Outside the default language, the first cloned speech in a language analyses that language's voices, once.
      const kokoro = await t.container.synthesizers.get('kokoro-82m')!.get();
      const spanish = kokoro.voices().filter((v) => v.languages.includes('es'));
      const speakSpanish = () =>
        t.app.inject({
          method: 'POST',
          url: '/v1/audio/tts',
          headers: auth,
          payload: { text: 'Por favor, deje su mensaje.', voice_id: created.voice_id, language: 'es', format: 'wav' },
        });
      assert.equal((await speakSpanish()).statusCode, 200);
      assert.equal(t.container.voices.builtinAnalysesComputed, 1 + spanish.length, 'the Spanish voices were analysed');
      assert.equal((await speakSpanish()).statusCode, 200);
      assert.equal(t.container.voices.builtinAnalysesComputed, 1 + spanish.length, 'and kept');
    } finally {
      await t.close();
    }

    const restarted = await buildTestApp({ VOXD_MODELS_DIR: modelsDir });
    try {
      await convertTo(restarted, target);
      assert.equal(restarted.container.voices.builtinAnalysesComputed, 0, 'a restarted server reads what the first conversion kept');
    } finally {
      await restarted.close();
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
