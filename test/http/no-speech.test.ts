/**
 * No words that were not said (issue 38, point 7): a minute of music, of sound effects and of room noise (eval
 * separation stems, looped) through the server gives an empty transcript, while speech framed by the same music keeps
 * its words. bench/hallucinations.ts measures the wider set.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decodeFile } from '../../src/audio/decode.js';
import { encodeWaveform } from '../../src/audio/encode.js';
import { buildTestApp, evalDir, multipartBody, type TestApp } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';

const sampleRate = 16000;

/** A stem of eval/sep, mono 16 kHz, repeated to `seconds` and scaled by `gain`. */
async function looped(relative: string, seconds: number, gain = 1): Promise<Float32Array> {
  const source = (await decodeFile(path.join(evalDir, relative), { channels: 1, sampleRate })).samples;
  const out = new Float32Array(seconds * sampleRate);
  for (let i = 0; i < out.length; i++) out[i] = source[i % source.length]! * gain;
  return out;
}

describe('transcription of non-speech', () => {
  let t: TestApp;
  let sfx01: Float32Array;
  before(async () => {
    sfx01 = (await decodeFile(path.join(evalDir, 'sep/dnr_mix01/sfx.wav'), { channels: 1, sampleRate })).samples;
    await Promise.all([modelFile('whisper-base', 'ggml-base.bin'), modelFile('silero-vad', 'silero_vad.onnx')]);
    t = await buildTestApp();
  });
  after(async () => t.close());

  const transcribe = async (samples: Float32Array) => {
    const form = multipartBody(
      { language: 'en' },
      { audio: { filename: 'a.wav', content: await encodeWaveform({ samples, sampleRate, channels: 1 }, { format: 'wav' }) } },
    );
    const r = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/transcribe',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': form.contentType },
      payload: form.body,
    });
    assert.equal(r.statusCode, 200, r.body);
    return r.json() as { text: string; warnings: string[] };
  };

  test('60 s of music, of sound effects and of room noise: no text', async () => {
    const room = await looped('sep/dnr_mix02/sfx.wav', 60, 0.1);
    for (let i = 0, brown = 0; i < room.length; i++) {
      brown = 0.98 * brown + 0.02 * (Math.random() * 2 - 1);
      room[i]! += brown * 0.3;
    }
    for (const [name, samples] of [
      ['music', await looped('sep/dnr_mix03/music.wav', 60)],
      ['sound effects', await looped('sep/dnr_mix02/sfx.wav', 60)],
      ['room noise', room],
    ] as const) {
      const body = await transcribe(samples);
      assert.equal(body.text, '', `${name} gave: ${body.text}`);
    }
  });

  test("a minute of eval/sep dnr_mix01's music: no caption such as 'Music' (Silero takes its onset for speech)", async () => {
    for (const [name, samples] of [
      ['music', await looped('sep/dnr_mix01/music.wav', 60)],
      ['music over effects', (await looped('sep/dnr_mix01/music.wav', 60)).map((v, i) => v + sfx01[i % sfx01.length]!)],
    ] as const) {
      const body = await transcribe(samples);
      assert.equal(body.text, '', `${name} gave: ${body.text}`);
    }
  });

  test("dnr_mix01's mixture (dialogue over music and effects) keeps its words", async () => {
    const mixture = (await decodeFile(path.join(evalDir, 'sep/dnr_mix01/mixture.wav'), { channels: 1, sampleRate })).samples;
    const body = await transcribe(mixture);
    assert.match(
      body.text,
      /^He was not an ill.?(dis|s)posed young man\. Unless to be rather cold.?hearted and rather selfish is to be ill/i,
    );
  });

  test('speech between 15 s stretches of music keeps its words', async () => {
    const music = await looped('sep/dnr_mix03/music.wav', 15, 0.06);
    const speech = (await decodeFile(path.join(evalDir, 'asr/pv_leopard/test.wav'), { channels: 1, sampleRate })).samples;
    const samples = new Float32Array(2 * music.length + speech.length);
    samples.set(music);
    samples.set(speech, music.length);
    samples.set(music, music.length + speech.length);
    const body = await transcribe(samples);
    assert.match(body.text, /^Mr\.? Quilter is the apostle of the middle classes,? and we are glad to welcome his gospel\.$/i);
  });
});
