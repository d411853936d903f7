/** Forced alignment (POST /v1/audio/align, issue 38 point 2) with whisper base on real recordings. */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, evalDir, multipartBody, type TestApp } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';

const audio = (relative: string): Buffer => readFileSync(path.join(evalDir, relative));
const manifest = (
  JSON.parse(readFileSync(path.join(evalDir, 'manifest.json'), 'utf8')) as {
    asr: Array<{ language: string; transcript: string; audio: string }>;
  }
).asr;
/** 16 kHz mono 16-bit samples of an eval clip. */
const pcm = (relative: string): Buffer =>
  execFileSync('ffmpeg', ['-v', 'error', '-i', path.join(evalDir, relative), '-f', 's16le', '-ac', '1', '-ar', '16000', '-'], {
    maxBuffer: 1 << 26,
  });
/** A WAV file of 16 kHz mono 16-bit samples. */
const wav = (samples: Buffer): Buffer =>
  execFileSync('ffmpeg', ['-v', 'error', '-f', 's16le', '-ar', '16000', '-ac', '1', '-i', 'pipe:0', '-f', 'wav', 'pipe:1'], {
    input: samples,
    maxBuffer: 1 << 26,
  });
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
    t = await buildTestApp({ VOXD_MAX_AUDIO_SECONDS: '100' });
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

  test('long audio (~75 s): cut at pauses, the text with it; every word in order, each clip where it was put', {
    timeout: 600_000,
  }, async () => {
    // The English eval clips one after another, twice over, with pauses: where each clip starts is known.
    const clips = manifest.filter((c) => c.language === 'en');
    const parts: Buffer[] = [];
    const starts: Array<{ seconds: number; firstWord: string }> = [];
    let bytes = 0;
    for (const [round, pause] of [0.6, 1.1].entries()) {
      for (const clip of round === 0 ? clips : [...clips].reverse()) {
        starts.push({ seconds: bytes / 32000, firstWord: clip.transcript.split(' ')[0]! });
        const samples = pcm(clip.audio);
        parts.push(samples, Buffer.alloc(2 * Math.round(16000 * pause)));
        bytes += samples.length + 2 * Math.round(16000 * pause);
      }
    }
    const text = [...clips.map((c) => c.transcript), ...[...clips].reverse().map((c) => c.transcript)].join(' ');
    const seconds = bytes / 32000;
    assert.ok(seconds > 60 && seconds < 90, `${seconds} s`);
    const r = await align(wav(Buffer.concat(parts)), { text, language: 'en' });
    assert.equal(r.statusCode, 200, r.body);
    const body = r.json() as Aligned;
    assert.deepEqual(
      body.words.map((w) => w.word),
      text.split(' '),
    );
    for (const [i, w] of body.words.entries()) {
      assert.ok(w.start >= 0 && w.end >= w.start && w.end <= seconds + 1e-3, JSON.stringify(w));
      if (i > 0) assert.ok(w.start >= body.words[i - 1]!.start, `${w.word} at ${w.start} before the word before`);
    }
    // Each clip's first word within its clip's first 1.5 s (they start after up to ~1 s of silence); a first word can be
    // put up to ~0.6 s early in the pause before it, as in one window (bench/results/forced-alignment.json: "Mr."). Text
    // given to the wrong window would put a clip seconds away.
    let from = 0;
    for (const start of starts) {
      const index = body.words.findIndex((w, k) => k >= from && w.word === start.firstWord);
      const word = body.words[index]!;
      assert.ok(
        word.start >= start.seconds - 0.75 && word.start <= start.seconds + 1.5,
        `${start.firstWord} at ${word.start}, clip at ${start.seconds}`,
      );
      from = index + 1;
    }
    const confidences = body.words.map((w) => w.confidence).sort((a, b) => a - b);
    assert.ok(
      confidences[Math.floor(confidences.length / 2)]! > 0.5,
      `median confidence ${confidences[Math.floor(confidences.length / 2)]}`,
    );
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
    // Longer than transcription takes (VOXD_MAX_AUDIO_SECONDS, 100 s here): 413.
    const tooLong = await align(wav(Buffer.concat([pcm('asr/whisper_cpp/jfk.wav'), Buffer.alloc(2 * 16000 * 95)])), {
      text: 'And so my fellow Americans',
    });
    assert.equal(tooLong.statusCode, 413, tooLong.body);
  });
});
