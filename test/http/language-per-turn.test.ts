/**
 * language=auto on a real two-language conversation (issue 35, point 1), through HTTP with the real engines (whisper
 * base, Silero VAD; CAM++ and the segmentation model for diarize): an English eval clip, 0.8 s of silence, a Spanish
 * one. Each stretch must be transcribed in its own language (words right, neither translated nor mangled), segments and
 * words say which, and the response's language is the one with the most speech (Spanish, 8.7 s against 5.9 s). With
 * language=en forced, everything is English.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { errorRate } from '../../bench/lib/wer.js';
import { decodeFile } from '../../src/audio/decode.js';
import { encodeWaveform } from '../../src/audio/encode.js';
import { buildTestApp, evalDir, multipartBody, type TestApp } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';

const sampleRate = 16000;
const english = {
  file: 'asr/pv_leopard/test.wav',
  text: 'Mr. Quilter is the apostle of the middle classes and we are glad to welcome his gospel.',
};
const spanish = { file: 'asr/pv_leopard/test_es.wav', text: 'Las arenas son blanquecinas de grano medio y tiene muy poca asistencia.' };
const gapSeconds = 0.8;

interface Word {
  word: string;
  start: number;
  end: number;
  language?: string;
}
interface Transcript {
  text: string;
  language: string;
  segments: Array<{ start: number; end: number; text: string; language?: string; words: Word[] }>;
}

describe('language=auto: a language per stretch of speech', () => {
  let t: TestApp;
  let conversation: Buffer;
  let spanishStartSeconds: number;
  before(async () => {
    await Promise.all([
      modelFile('whisper-base', 'ggml-base.bin'),
      modelFile('silero-vad', 'silero_vad.onnx'),
      modelFile('campplus', 'campplus.onnx'),
      modelFile('pyannote-segmentation-3', 'segmentation-3.0.onnx'),
    ]);
    t = await buildTestApp();
    const [en, es] = await Promise.all(
      [english, spanish].map(async (clip) => (await decodeFile(path.join(evalDir, clip.file), { sampleRate, channels: 1 })).samples),
    );
    const gap = Math.round(gapSeconds * sampleRate);
    const samples = new Float32Array(en!.length + gap + es!.length);
    samples.set(en!, 0);
    samples.set(es!, en!.length + gap);
    spanishStartSeconds = (en!.length + gap) / sampleRate;
    conversation = await encodeWaveform({ samples, sampleRate, channels: 1 }, { format: 'wav' });
  });
  after(async () => t.close());

  const transcribe = async (fields: Record<string, string>): Promise<Transcript> => {
    const form = multipartBody(fields, { audio: { filename: 'conversation.wav', content: conversation } });
    const r = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/transcribe',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': form.contentType },
      payload: form.body,
    });
    assert.equal(r.statusCode, 200, r.body);
    return r.json() as Transcript;
  };

  /** The words said before / after the Spanish clip starts. */
  const halves = (body: Transcript) => {
    const words = body.segments.flatMap((s) => s.words);
    return {
      english: words.filter((w) => (w.start + w.end) / 2 < spanishStartSeconds),
      spanish: words.filter((w) => (w.start + w.end) / 2 >= spanishStartSeconds),
    };
  };
  const text = (words: Word[]): string => words.map((w) => w.word).join('');

  for (const diarize of [false, true]) {
    test(`each segment in its own language, its words right; the response's language is the majority${diarize ? ' (diarize)' : ''}`, async () => {
      const body = await transcribe({ language: 'auto', ...(diarize ? { diarize: 'true' } : {}) });
      for (const segment of body.segments) {
        const expected = segment.start < spanishStartSeconds - 0.5 ? 'en' : 'es';
        assert.equal(segment.language, expected, `${segment.start}-${segment.end} "${segment.text}"`);
        for (const w of segment.words) assert.equal(w.language, segment.language, w.word);
      }
      const said = halves(body);
      const englishRate = errorRate(english.text, text(said.english), 'en').rate;
      const spanishRate = errorRate(spanish.text, text(said.spanish), 'es').rate;
      assert.ok(englishRate <= 0.15, `English WER ${englishRate}: ${text(said.english)}`);
      assert.ok(spanishRate <= 0.25, `Spanish WER ${spanishRate}: ${text(said.spanish)}`);
      assert.equal(body.language, 'es');
    });
  }

  test('language=en forces one language on every segment and word', async () => {
    const body = await transcribe({ language: 'en' });
    assert.equal(body.language, 'en');
    assert.ok(body.segments.length > 0);
    for (const segment of body.segments) {
      assert.equal(segment.language, 'en');
      for (const w of segment.words) assert.equal(w.language, 'en');
    }
    // English decoding of the Spanish clip does not give back its Spanish words.
    const spanishRate = errorRate(spanish.text, text(halves(body).spanish), 'es').rate;
    assert.ok(spanishRate > 0.25, `Spanish WER with language=en: ${spanishRate}`);
  });
});
