/** Forced alignment (POST /v1/audio/align, issue 38 point 2) with whisper base on real recordings. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, evalDir, multipartBody, type TestApp } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';

const audio = (relative: string): Buffer => readFileSync(path.join(evalDir, relative));
const quilter = 'Mr. Quilter is the apostle of the middle classes and we are glad to welcome his gospel.';

interface Aligned {
  words: Array<{ word: string; start: number; end: number; confidence: number }>;
  characters: Array<{ character: string; start: number; end: number }>;
  language: string;
}

describe('POST /v1/audio/align', () => {
  let t: TestApp;
  before(async () => {
    await modelFile('whisper-base', 'ggml-base.bin');
    t = await buildTestApp();
  });
  after(async () => t?.close());

  const align = async (file: Buffer | undefined, fields: Record<string, string>) => {
    const form = multipartBody(fields, file ? { audio: { filename: 'audio.wav', content: file } } : {});
    return t.app.inject({
      method: 'POST',
      url: '/v1/audio/align',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': form.contentType },
      payload: form.body,
    });
  };

  test('every word of the text, in order, timed where it is said; words not said get a low confidence', { timeout: 300_000 }, async () => {
    const r = await align(audio('asr/pv_leopard/test.wav'), { text: quilter, language: 'en' });
    assert.equal(r.statusCode, 200, r.body);
    const body = r.json() as Aligned;
    assert.equal(body.language, 'en');
    assert.deepEqual(
      body.words.map((w) => w.word),
      quilter.split(' '),
    );
    for (const [i, w] of body.words.entries()) {
      assert.ok(w.start >= 0 && w.end >= w.start && w.end <= 5.9, JSON.stringify(w));
      if (i > 0) assert.ok(w.start >= body.words[i - 1]!.start);
    }
    // Where faster-whisper's word timestamps on the same weights put them (bench/forced-alignment.ts).
    const at = (word: string): number => body.words.find((w) => w.word.startsWith(word))!.start;
    assert.ok(at('apostle') > 1.2 && at('apostle') < 1.9, `apostle at ${at('apostle')}`);
    assert.ok(at('gospel') > 4.6 && at('gospel') < 5.1, `gospel at ${at('gospel')}`);
    assert.equal(body.characters.map((c) => c.character).join(''), quilter);

    // Two words swapped for ones the speaker does not say: still there, in order, and the least confident.
    const wrongText = quilter.replace('apostle', 'banana').replace('middle', 'purple');
    const wrong = (await align(audio('asr/pv_leopard/test.wav'), { text: wrongText, language: 'en' })).json() as Aligned;
    assert.deepEqual(
      wrong.words.map((w) => w.word),
      wrongText.split(' '),
    );
    const confidence = (word: string): number => wrong.words.find((w) => w.word === word)!.confidence;
    assert.ok(confidence('banana') < 0.05 && confidence('purple') < 0.05, JSON.stringify(wrong.words));
    const said = wrong.words.filter((w) => !['banana', 'purple'].includes(w.word)).map((w) => w.confidence);
    assert.ok(said.sort((a, b) => a - b)[Math.floor(said.length / 2)]! > 0.5, JSON.stringify(wrong.words));
  });

  test('Chinese: a word per character, language detected', { timeout: 300_000 }, async () => {
    const text = '甚至出现交易几乎停滞的情况';
    const r = await align(audio('asr/firered/BAC009S0764W0121.wav'), { text });
    assert.equal(r.statusCode, 200, r.body);
    const body = r.json() as Aligned;
    assert.equal(body.language, 'zh');
    assert.deepEqual(
      body.words.map((w) => w.word),
      [...text],
    );
    assert.ok(body.words.at(-1)!.start > 2 && body.words[0]!.start < 1.5, JSON.stringify(body.words));
  });

  test('as a job', { timeout: 300_000 }, async () => {
    t.container.jobWorker.start();
    const submitted = await align(audio('asr/deepspeech/LDC93S1.wav'), {
      text: 'She had your dark suit in greasy wash water all year.',
      language: 'en',
      async: 'true',
    });
    assert.equal(submitted.statusCode, 202, submitted.body);
    const id = (submitted.json() as { id: string }).id;
    let job: { status: string; result: Aligned | null } = { status: 'queued', result: null };
    for (let i = 0; i < 240 && !['succeeded', 'failed', 'cancelled'].includes(job.status); i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      job = (await t.app.inject({ method: 'GET', url: `/v1/jobs/${id}`, headers: { authorization: `Bearer ${t.key}` } })).json();
    }
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    assert.equal(job.result!.words.length, 11);
  });

  test('bad input answers a JSON 4xx', { timeout: 120_000 }, async () => {
    const noAudio = await align(undefined, { text: 'hello' });
    assert.equal(noAudio.statusCode, 400, noAudio.body);
    assert.equal(noAudio.json().error.param, 'audio');
    const noText = await align(audio('asr/deepspeech/LDC93S1.wav'), {});
    assert.equal(noText.statusCode, 400, noText.body);
    const blank = await align(audio('asr/deepspeech/LDC93S1.wav'), { text: '   ' });
    assert.equal(blank.statusCode, 400, blank.body);
    const language = await align(audio('asr/deepspeech/LDC93S1.wav'), { text: 'hello', language: 'xx' });
    assert.ok([400, 422].includes(language.statusCode), language.body);
    assert.equal(language.json().error.param, 'language');
    const tooMuchText = await align(audio('asr/deepspeech/LDC93S1.wav'), { text: 'word '.repeat(300), language: 'en' });
    assert.equal(tooMuchText.statusCode, 400, tooMuchText.body);
    assert.equal(tooMuchText.json().error.param, 'text');
    const notAudio = await align(Buffer.from('this is not audio at all'), { text: 'hello' });
    assert.equal(notAudio.statusCode, 415, notAudio.body);
    // Longer than one window: 413.
    const long = Buffer.concat([
      audio('asr/whisper_cpp/jfk.wav'),
      audio('asr/whisper_cpp/jfk.wav').subarray(44),
      audio('asr/whisper_cpp/jfk.wav').subarray(44),
    ]);
    long.writeUInt32LE(long.length - 8, 4);
    long.writeUInt32LE(long.length - 44, 40);
    const tooLong = await align(long, { text: 'And so my fellow Americans' });
    assert.equal(tooLong.statusCode, 413, tooLong.body);
  });
});
