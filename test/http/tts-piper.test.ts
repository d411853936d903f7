/** Text-to-speech through HTTP with a Piper voice installed (joe, US English): routing by voice and language, listings. */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decodeFile } from '../../src/audio/decode.js';
import { resample } from '../../src/audio/resample.js';
import { durationSeconds, rmsDb, type Waveform } from '../../src/audio/waveform.js';
import type { ApiKeyRecord } from '../../src/core/records.js';
import { SynthesisService } from '../../src/operations/synthesize/service.js';
import { averageEmbedding, cosineSimilarity, SpeakerEncoder } from '../../src/speakers/embedding.js';
import { buildTestApp, createVoice, evalDir, makeTempDir, type TestApp } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';
import { joeModelId, joeVoiceId } from '../helpers/tts.js';
import { worldAddon } from '../helpers/vc-assets.js';

async function decoded(bytes: Buffer, extension: string): Promise<Waveform> {
  const file = path.join(makeTempDir('tts-piper'), `out.${extension}`);
  writeFileSync(file, bytes);
  return decodeFile(file);
}

describe('POST /v1/audio/tts with a Piper voice installed', () => {
  let t: TestApp;
  before(async () => {
    // joe is pulled before the app starts: the engine loads the voices installed then.
    await Promise.all([
      ...[joeModelId, 'kokoro-82m', 'kokoro-voices', 'misaki-lexicon', 'silero-vad', 'resemblyzer-ge2e'].map((id) => modelFile(id, '')),
      worldAddon(),
    ]);
    t = await buildTestApp();
  });
  after(async () => t?.close());

  const tts = (payload: Record<string, unknown>) =>
    t.app.inject({ method: 'POST', url: '/v1/audio/tts', headers: { authorization: `Bearer ${t.key}` }, payload });

  test('voice_id of a Piper voice: Piper speaks, at its own rate, in its own language by default', { timeout: 120_000 }, async () => {
    const text = 'Please remember to bring your umbrella, because it may rain this afternoon.';
    const r = await tts({ text, voice_id: joeVoiceId, format: 'wav' });
    assert.equal(r.statusCode, 200, r.body);
    assert.equal(r.headers['x-voxd-engine'], 'piper');
    assert.equal(r.headers['x-voxd-warnings'], undefined);
    const audio = await decoded(r.rawPayload, 'wav');
    assert.equal(audio.sampleRate, 22050);
    const words = text.split(/\s+/).length;
    assert.ok(
      durationSeconds(audio) > words * 0.2 && durationSeconds(audio) < words * 0.7,
      `${durationSeconds(audio)} s for ${words} words`,
    );
    assert.ok(rmsDb(audio.samples) > -35, `level ${rmsDb(audio.samples)}`);
    // A bare language code is the voice's own.
    const english = await tts({ text: 'Good morning.', voice_id: joeVoiceId, language: 'en', format: 'wav' });
    assert.equal(english.statusCode, 200, english.body);
    assert.equal(english.headers['x-voxd-engine'], 'piper');
  });

  test('streamed: Piper speaks, chunk by chunk', { timeout: 120_000 }, async () => {
    const text = 'The library opens early in the morning. It closes late on Fridays. It is closed on Sundays.';
    const r = await tts({ text, voice_id: joeVoiceId, stream: true, format: 'wav', sample_rate: 16000 });
    assert.equal(r.statusCode, 200, r.body);
    assert.equal(r.headers['x-voxd-engine'], 'piper');
    const audio = await decoded(r.rawPayload, 'wav');
    assert.equal(audio.sampleRate, 16000);
    assert.ok(durationSeconds(audio) > 3, `${durationSeconds(audio)} s`);
  });

  test("a language joe does not speak goes to the engine that does, with a warning; Kokoro's voices stay Kokoro's", {
    timeout: 120_000,
  }, async () => {
    const german = await tts({ text: 'Guten Morgen.', voice_id: joeVoiceId, language: 'de', format: 'wav' });
    assert.equal(german.statusCode, 200, german.body);
    assert.equal(german.headers['x-voxd-engine'], 'espeak');
    assert.match(String(german.headers['x-voxd-warnings']), new RegExp(`${joeVoiceId} has no model for 'de'`));
    for (const language of ['en', 'en-us']) {
      const kokoro = await tts({ text: 'Good morning.', voice_id: 'af_heart', language, format: 'wav' });
      assert.equal(kokoro.statusCode, 200, kokoro.body);
      assert.equal(kokoro.headers['x-voxd-engine'], 'kokoro');
    }
  });

  test('GET /v1/voices lists the Piper voice; capabilities name the engine; setup does not pull Piper voices', {
    timeout: 30_000,
  }, async () => {
    const auth = { authorization: `Bearer ${t.key}` };
    const voices = (await t.app.inject({ method: 'GET', url: '/v1/voices?type=builtin', headers: auth })).json().voices as Array<{
      voice_id: string;
      engine: string;
      languages: string[];
      description: string;
    }>;
    const joe = voices.find((v) => v.voice_id === joeVoiceId);
    assert.deepEqual(joe && [joe.engine, joe.languages, joe.description], ['piper', ['en-us'], 'Piper neural voice']);
    const english = (await t.app.inject({ method: 'GET', url: '/v1/voices?language=en-us', headers: auth })).json().voices as Array<{
      voice_id: string;
    }>;
    assert.ok(english.some((v) => v.voice_id === joeVoiceId));
    assert.equal(english[0]!.voice_id, 'af_heart');
    const capabilities = (await t.app.inject({ method: 'GET', url: '/v1/capabilities' })).json().tts as {
      engines: Array<{ engine: string }>;
      default_voices: Record<string, string>;
    };
    assert.deepEqual(
      capabilities.engines.map((e) => e.engine),
      ['kokoro', 'piper', 'espeak'],
    );
    assert.equal(capabilities.default_voices['en-us'], 'af_heart');
    assert.ok(!t.container.neededModels().some((id) => id.startsWith('piper-')), t.container.neededModels().join(', '));
  });

  test('capabilities: neural_languages lists every language a neural voice speaks here or once pulled', { timeout: 30_000 }, async () => {
    const { neural_languages: neural } = (await t.app.inject({ method: 'GET', url: '/v1/capabilities' })).json().tts as {
      neural_languages: Array<{ language: string; installed: boolean; voices: string[] }>;
    };
    const entry = (language: string) => neural.find((n) => n.language === language);
    assert.deepEqual(
      neural.map((n) => n.language),
      [...new Set(neural.map((n) => n.language))].sort(),
      'one entry per language, sorted',
    );
    for (const n of neural) assert.deepEqual(Object.keys(n), ['language', 'installed', 'voices']);
    // Installed: Kokoro's nine languages, with its voices, best first; US English with joe after Kokoro's voices.
    const installed = neural.filter((n) => n.installed).map((n) => n.language);
    for (const language of ['en-us', 'en-gb', 'es', 'fr', 'it', 'pt-br', 'hi', 'ja', 'zh'])
      assert.ok(installed.includes(language), language);
    assert.equal(entry('en-us')?.voices[0], 'af_heart');
    assert.equal(entry('en-us')?.voices.at(-1), joeVoiceId);
    assert.equal(entry('fr')?.voices[0], 'ff_siwis');
    // Pullable: each language of the Piper catalogue with no installed neural voice, its catalog models best first.
    assert.deepEqual(entry('de-de'), {
      language: 'de-de',
      installed: false,
      voices: [
        'piper-de_DE-thorsten-high',
        'piper-de_DE-thorsten-medium',
        'piper-de_DE-thorsten_emotional-medium',
        'piper-de_DE-karlsson-low',
        'piper-de_DE-kerstin-low',
        'piper-de_DE-pavoque-low',
        'piper-de_DE-ramona-low',
        'piper-de_DE-thorsten-low',
        'piper-de_DE-eva_k-x_low',
      ],
    });
    const models = new Set(t.container.models.catalog.map((spec) => spec.id));
    for (const n of neural.filter((n) => !n.installed))
      assert.ok(n.voices.length > 0 && n.voices.every((id) => models.has(id)), n.language);
    // 9 Kokoro languages and the catalogue's 34 regional languages, three of which (en-us, en-gb, pt-br) Kokoro has.
    assert.equal(neural.length, 40);
    assert.equal(new Set(neural.map((n) => n.language.split('-')[0])).size, 32);
    // The espeak-ng languages are not neural.
    assert.equal(entry('af'), undefined);
  });

  test("a cloned voice in a Piper language speaks in the closest installed Piper voice, converted to the profile; joe's embedding is kept", {
    timeout: 300_000,
  }, async () => {
    const clips = ['3080-5032-0001.wav', '3080-5032-0004.wav'].map((name) => path.join(evalDir, 'vc/resemblyzer_librispeech', name));
    const voiceId = (
      await createVoice(
        t,
        { name: 'Reader', language: 'en-us' },
        clips.map((clip) => ({ filename: path.basename(clip), content: readFileSync(clip) })),
      )
    ).voice_id;
    // Built-in analyses include the Piper voices': joe's embedding is computed once (at start, or here) and then read.
    const { synthesis } = t.container.operations;
    await synthesis.prepareBuiltinVoices({ voiceIds: [joeVoiceId] });
    assert.equal(await synthesis.prepareBuiltinVoices(), 0, 'every neural voice, joe included, analysed and kept');
    // English is Kokoro's here; the same service with the engines after Kokoro (as on a host without Kokoro) routes it to Piper.
    const engines = t.container.synthesizers;
    // Which voices' embeddings the plan compares with the profile's.
    const compared: string[] = [];
    const voices = t.container.voices;
    const watchedVoices = new Proxy(voices, {
      get: (target, property) =>
        property === 'speakerEmbedding'
          ? (id: string, ...rest: [ApiKeyRecord]) => {
              compared.push(id);
              return target.speakerEmbedding(id, ...rest);
            }
          : Reflect.get(target, property, target),
    });
    const piperFirst = new SynthesisService({
      scheduler: t.container.scheduler,
      metrics: t.container.metrics,
      voices: watchedVoices,
      dictionaries: t.container.dictionaries,
      engines: ['piper', 'espeak-ng'].map((id) => () => engines.get(id)!.get()),
      converter: () => t.container.converter.get(),
    });
    const apiKey = (await t.container.apiKeys.verify(t.key))!;
    const text = 'Good evening, and welcome to the reading of the new book tonight.';
    const computedBefore = t.container.voices.builtinAnalysesComputed;
    const result = await piperFirst.synthesize(
      { text, voice_id: voiceId, format: 'wav' },
      { requestId: 'piper-clone', apiKey, signal: new AbortController().signal, inputs: new Map(), log: t.app.log },
    );
    assert.deepEqual(compared, [voiceId, joeVoiceId], 'the profile is compared with each installed Piper voice of its language');
    assert.equal(t.container.voices.builtinAnalysesComputed, computedBefore, "joe's kept embedding was read, not computed again");
    assert.equal(result.kind, 'audio');
    if (result.kind !== 'audio') return;
    assert.equal(result.headers?.['x-voxd-engine'], 'piper+world-dsp');
    assert.equal(result.headers?.['x-voxd-warnings'], undefined);
    const plain = await tts({ text, voice_id: joeVoiceId, format: 'wav' });
    assert.equal(plain.statusCode, 200, plain.body);
    const [convertedAudio, plainAudio] = [await decoded(result.bytes, 'wav'), await decoded(plain.rawPayload, 'wav')];
    assert.ok(rmsDb(convertedAudio.samples) > -35, `level ${rmsDb(convertedAudio.samples)}`);
    // joe's speech, converted: the same words at about the same pace (Piper draws durations at random: noise_w).
    const paceRatio = durationSeconds(convertedAudio) / durationSeconds(plainAudio);
    assert.ok(paceRatio > 0.8 && paceRatio < 1.25, `converted ${durationSeconds(convertedAudio)} s, joe ${durationSeconds(plainAudio)} s`);
    const encoder = await SpeakerEncoder.load(await modelFile('resemblyzer-ge2e', 'ge2e.onnx'));
    const embed = async (w: Waveform) => encoder.embedUtterance(await resample(w, 16000));
    const reference = averageEmbedding(await Promise.all(clips.map(async (clip) => embed(await decodeFile(clip)))));
    const [toConverted, toPlain] = [
      cosineSimilarity(await embed(convertedAudio), reference),
      cosineSimilarity(await embed(plainAudio), reference),
    ];
    await encoder.close();
    assert.ok(toConverted > toPlain + 0.05, `similarity to the profile: converted ${toConverted.toFixed(3)}, joe ${toPlain.toFixed(3)}`);
  });
});
