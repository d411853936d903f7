/** Text-to-speech through HTTP with the real engines (Kokoro int8, espeak-ng). */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { decodeFile } from '../../src/audio/decode.js';
import { durationSeconds, rmsDb, type Waveform } from '../../src/audio/waveform.js';
import { resample } from '../../src/audio/resample.js';
import { leadInSeconds } from '../../src/operations/synthesize/service.js';
import { averageEmbedding, cosineSimilarity, SpeakerEncoder } from '../../src/speakers/embedding.js';
import { buildTestApp, createVoice, evalDir, evalFile, makeTempDir, type TestApp } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';
import { worldAddon } from '../helpers/vc-assets.js';

async function decoded(bytes: Buffer, extension: string): Promise<Waveform> {
  const file = path.join(makeTempDir('tts'), `out.${extension}`);
  writeFileSync(file, bytes);
  return decodeFile(file);
}

describe('POST /v1/audio/tts', () => {
  let t: TestApp;
  before(async () => {
    await Promise.all([...['kokoro-82m', 'kokoro-voices', 'silero-vad', 'resemblyzer-ge2e'].map((id) => modelFile(id, '')), worldAddon()]);
    t = await buildTestApp();
  });
  after(async () => t.close());

  const tts = (payload: Record<string, unknown>) =>
    t.app.inject({ method: 'POST', url: '/v1/audio/tts', headers: { authorization: `Bearer ${t.key}` }, payload });

  for (const [language, voice, text] of [
    ['en-us', 'af_heart', 'The weather is lovely today, so we will walk to the market.'],
    ['es', 'ef_dora', 'Buenos días, hoy vamos al mercado con tres amigos.'],
    ['sw', 'espeak-sw', 'Habari ya asubuhi, leo tunakwenda sokoni na marafiki.'],
  ] as const) {
    test(`${language} (${voice}) decodes to non-silent audio of plausible length`, async () => {
      const r = await tts({ text, voice_id: voice, language, format: 'wav' });
      assert.equal(r.statusCode, 200, r.body);
      assert.equal(r.headers['content-type'], 'audio/wav');
      const audio = await decoded(r.rawPayload, 'wav');
      const words = text.split(/\s+/).length;
      const seconds = durationSeconds(audio);
      assert.ok(seconds > words * 0.2 && seconds < words * 0.9, `${seconds} s for ${words} words`);
      assert.ok(rmsDb(audio.samples) > -35, `level ${rmsDb(audio.samples)}`);
    });
  }

  test('mp3 by default; sample_rate honoured; a voice speaks another Kokoro language', async () => {
    const r = await tts({ text: 'Bonjour à tous.', voice_id: 'af_heart', language: 'fr', sample_rate: 16000 });
    assert.equal(r.statusCode, 200, r.body);
    assert.equal(r.headers['content-type'], 'audio/mpeg');
    assert.equal((await decoded(r.rawPayload, 'mp3')).sampleRate, 16000);
  });

  test('unknown emotion / language -> 422 listing the valid ones; unknown voice -> 404', async () => {
    const emotion = await tts({ text: 'Hi.', voice_id: 'af_heart', emotion: 'bored' });
    assert.equal(emotion.statusCode, 422);
    const language = await tts({ text: 'Hi.', voice_id: 'af_heart', language: 'tlh' });
    assert.equal(language.statusCode, 422);
    assert.match(language.json().error.message, /en-us/);
    assert.equal((await tts({ text: 'Hi.', voice_id: 'nobody' })).statusCode, 404);
  });

  test('text with nothing to speak -> 400; words in a script the voice cannot read -> 422, streamed or not; never empty audio', async () => {
    for (const text of ['...', '😀 😀', 'https://example.com/a?b=c']) {
      const r = await tts({ text, voice_id: 'af_heart' });
      assert.equal(r.statusCode, 400, text);
      assert.match(r.json().error.message, /nothing to speak/);
    }
    for (const stream of [false, true]) {
      const r = await tts({ text: 'مرحبا بالعالم', voice_id: 'zf_xiaobei', stream });
      assert.equal(r.statusCode, 422, r.body);
      assert.equal(r.json().error.param, 'text');
    }
  });

  test('streaming sends audio before the whole text is synthesised', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const text = Array.from(
      { length: 6 },
      (_, i) => `This is sentence number ${i + 1} of a longer paragraph that takes a while to speak.`,
    ).join(' ');
    const started = performance.now();
    const response = await fetch(`http://127.0.0.1:${port}/v1/audio/tts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text, voice_id: 'am_michael', stream: true, format: 'mp3' }),
    });
    assert.equal(response.status, 200);
    const reader = response.body!.getReader();
    const chunks: Uint8Array[] = [];
    let firstByteMs = 0;
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      if (chunks.length === 0) firstByteMs = performance.now() - started;
      chunks.push(r.value);
    }
    const totalMs = performance.now() - started;
    assert.ok(firstByteMs < totalMs * 0.6, `first audio at ${firstByteMs.toFixed(0)} ms of ${totalMs.toFixed(0)} ms`);
    const audio = await decoded(Buffer.concat(chunks), 'mp3');
    assert.ok(durationSeconds(audio) > 15, `streamed ${durationSeconds(audio)} s`);
    // A streamed request is measured too, once its last piece is sent.
    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${t.key}` } })).body;
    assert.match(metrics, /voxd_inference_rtf_count\{[^}]*operation="tts"[^}]*engine="kokoro"[^}]*\} [1-9]/);
  });

  test('a response starts its first word after a lead-in, streamed or not (a leading SSML break instead of it), and its word times move with it', async () => {
    /** Seconds to the first 10 ms frame louder than -50 dBFS. */
    const soundStartSeconds = (audio: Waveform): number => {
      const frame = audio.sampleRate / 100;
      for (let start = 0; start + frame <= audio.samples.length; start += frame) {
        if (rmsDb(audio.samples.subarray(start, start + frame)) > -50) return start / audio.sampleRate;
      }
      return Infinity;
    };
    for (const [voice, language] of [
      ['af_aoede', 'en-us'],
      ['espeak-sw', 'sw'],
    ] as const) {
      for (const stream of [false, true]) {
        const r = await tts({ text: 'Put your bags under the seat.', voice_id: voice, language, format: 'wav', stream });
        assert.equal(r.statusCode, 200, r.body);
        const start = soundStartSeconds(await decoded(r.rawPayload, 'wav'));
        assert.ok(start >= leadInSeconds - 0.03 && start < leadInSeconds + 0.1, `${voice}, stream ${stream}: sound starts at ${start} s`);
      }
    }
    // A document that opens with a break starts after the break alone.
    const broken = await tts({
      text: '<speak><break time="500ms"/>Put your bags under the seat.</speak>',
      voice_id: 'af_aoede',
      format: 'wav',
    });
    assert.equal(broken.statusCode, 200, broken.body);
    const afterBreak = soundStartSeconds(await decoded(broken.rawPayload, 'wav'));
    assert.ok(afterBreak >= 0.47 && afterBreak < 0.6, `after a 0.5 s break the sound starts at ${afterBreak} s`);
    const timed = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/tts/with-timestamps',
      headers: { authorization: `Bearer ${t.key}` },
      payload: { text: 'Put your bags under the seat.', voice_id: 'af_aoede', format: 'wav' },
    });
    assert.equal(timed.statusCode, 200, timed.body);
    const first = timed.json<{ words: Array<{ word: string; start: number }> }>().words[0]!;
    // A plosive's closure is silent: the word may start a little before its sound.
    assert.ok(first.start >= leadInSeconds - 0.08 && first.start < leadInSeconds + 0.1, `'${first.word}' starts at ${first.start} s`);
  });

  test('the official OpenAI SDK speech call works', async () => {
    if (!t.app.server.listening) await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const client = new OpenAI({ apiKey: t.key, baseURL: `http://127.0.0.1:${port}/v1` });
    const speech = await client.audio.speech.create({
      model: 'tts-1',
      voice: 'alloy',
      input: 'Hello from an OpenAI client.',
      response_format: 'wav',
      instructions: 'Speak in a cheerful tone.',
    });
    const audio = await decoded(Buffer.from(await speech.arrayBuffer()), 'wav');
    assert.ok(durationSeconds(audio) > 1 && rmsDb(audio.samples) > -35);
  });

  test('a cloned voice speaks English through the closest blend of Kokoro voices + conversion, Swahili through espeak-ng + conversion; preview works', async () => {
    const clips = ['2033-164914-0001.wav', '2033-164914-0003.wav'].map((name) => evalFile(`vc/resemblyzer_librispeech/${name}`));
    const voiceId = (await createVoice(t, { name: 'Reader', language: 'en-us' }, clips)).voice_id;
    const r = await tts({ text: 'Good evening, and welcome to the reading.', voice_id: voiceId, format: 'wav' });
    assert.equal(r.statusCode, 200, r.body);
    assert.equal(r.headers['x-voxd-engine'], 'kokoro+world-dsp');
    assert.ok(rmsDb((await decoded(r.rawPayload, 'wav')).samples) > -35);
    // Metrics name both engines, as the header does.
    assert.match(
      (await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${t.key}` } })).body,
      /voxd_inference_seconds_count\{[^}]*engine="kokoro\+world-dsp"/,
    );
    const preview = await t.app.inject({
      method: 'GET',
      url: `/v1/voices/${voiceId}/preview`,
      headers: { authorization: `Bearer ${t.key}` },
    });
    assert.equal(preview.statusCode, 200);
    assert.equal(preview.headers['content-type'], 'audio/mpeg');

    // A language only espeak-ng speaks: espeak-ng, then voice conversion toward the profile.
    const text = 'Habari ya asubuhi, leo tunakwenda sokoni na marafiki zetu wawili.';
    const cloned = await tts({ text, voice_id: voiceId, language: 'sw', format: 'wav' });
    assert.equal(cloned.statusCode, 200, cloned.body);
    assert.equal(cloned.headers['x-voxd-engine'], 'espeak+world-dsp');
    const plain = await tts({ text, voice_id: 'espeak-sw', format: 'wav' });
    const encoder = await SpeakerEncoder.load(await modelFile('resemblyzer-ge2e', 'ge2e.onnx'));
    const embed = async (w: Waveform) => encoder.embedUtterance(await resample(w, 16000));
    const reference = averageEmbedding(
      await Promise.all(
        ['2033-164914-0001.wav', '2033-164914-0003.wav'].map(async (name) =>
          embed(await decodeFile(path.join(evalDir, 'vc/resemblyzer_librispeech', name))),
        ),
      ),
    );
    const [convertedAudio, plainAudio] = [await decoded(cloned.rawPayload, 'wav'), await decoded(plain.rawPayload, 'wav')];
    assert.ok(rmsDb(convertedAudio.samples) > -35);
    // Same words, same timing: conversion keeps the duration.
    assert.ok(Math.abs(durationSeconds(convertedAudio) - durationSeconds(plainAudio)) < 0.05);
    const [toConverted, toPlain] = [
      cosineSimilarity(await embed(convertedAudio), reference),
      cosineSimilarity(await embed(plainAudio), reference),
    ];
    assert.ok(
      toConverted > toPlain + 0.05,
      `similarity to the profile: converted ${toConverted.toFixed(3)}, plain espeak ${toPlain.toFixed(3)}`,
    );
    await encoder.close();
  });
});
