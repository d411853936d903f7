/** Translation into English (Whisper's translate task) through HTTP with the real engines on real recordings. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import type { TranslationVerbose } from 'openai/resources/audio/translations';
import { buildTestApp, evalDir, multipartBody, type TestApp } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';

const audio = (relative: string): Buffer => readFileSync(path.join(evalDir, relative));
const spanish = 'asr/pv_leopard/test_es.wav';
const french = 'asr/pv_leopard/test_fr.wav';
/** English words Whisper base gives for the Spanish clip ("Las arenas son blanquecinas ... muy poca asistencia"). */
const spanishInEnglish = [/\bsand/i, /\bwhite/i, /\bvery\b/i];

interface Word {
  word: string;
  start: number;
  end: number;
}
interface Transcript {
  text: string;
  language: string;
  segments: Array<{ text: string; words: Word[] }>;
  warnings: string[];
}

describe('translation into English', () => {
  let t: TestApp;
  before(async () => {
    await Promise.all([modelFile('whisper-base', 'ggml-base.bin'), modelFile('silero-vad', 'silero_vad.onnx')]);
    t = await buildTestApp();
  });
  after(async () => t.close());

  const post = async (url: string, field: string, file: Buffer, fields: Record<string, string> = {}) => {
    const form = multipartBody(fields, { [field]: { filename: 'clip.wav', content: file } });
    return t.app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${t.key}`, 'content-type': form.contentType },
      payload: form.body,
    });
  };

  test('task=translate on /v1/audio/transcribe: English text and timed words from a Spanish clip, source language reported', async () => {
    const r = await post('/v1/audio/transcribe', 'audio', audio(spanish), { task: 'translate' });
    assert.equal(r.statusCode, 200, r.body);
    const body = r.json() as Transcript;
    for (const word of spanishInEnglish) assert.match(body.text, word);
    assert.doesNotMatch(body.text, /arenas|blanquecinas/i);
    assert.equal(body.language, 'es');
    const words = body.segments.flatMap((s) => s.words);
    assert.ok(words.length >= 5, JSON.stringify(words));
    for (const w of words) assert.ok(w.start >= 0 && w.end >= w.start && w.end <= 8.7, JSON.stringify(w));
  });

  test('French with the source language given comes back in English', async () => {
    const body = (
      await post('/v1/audio/transcribe', 'audio', audio(french), { task: 'translate', language: 'fr', response_format: 'text' })
    ).body;
    assert.match(body, /\b(the|and|of)\b/i);
    assert.doesNotMatch(body, /\b(le|des|et)\b/i, body);
  });

  test('an unknown task -> 422 with param task', async () => {
    const r = await post('/v1/audio/transcribe', 'audio', audio(spanish), { task: 'summarize' });
    assert.equal(r.statusCode, 422);
    assert.equal(r.json().error.param, 'task');
  });

  test('/v1/audio/translations answers as OpenAI does: {text} for json, plain text, srt', async () => {
    const json = await post('/v1/audio/translations', 'file', audio(spanish), { model: 'whisper-1' });
    assert.equal(json.statusCode, 200, json.body);
    assert.deepEqual(Object.keys(json.json() as object), ['text']);
    for (const word of spanishInEnglish) assert.match((json.json() as { text: string }).text, word);
    const text = await post('/v1/audio/translations', 'file', audio(spanish), { response_format: 'text' });
    assert.match(text.headers['content-type'] as string, /^text\/plain/);
    assert.match(text.body, /sand/i);
    const srt = await post('/v1/audio/translations', 'file', audio(spanish), { response_format: 'srt' });
    assert.match(srt.headers['content-type'] as string, /subrip/);
    assert.match(srt.body, /^1\n\d{2}:\d{2}:\d{2},\d{3} --> \d{2}:\d{2}:\d{2},\d{3}\n.*sand/is);
  });

  test('a translation job gives the same English text', async () => {
    t.container.jobWorker.start();
    const submitted = await post('/v1/audio/translations', 'file', audio(spanish), { async: 'true' });
    assert.equal(submitted.statusCode, 202, submitted.body);
    const id = (submitted.json() as { id: string }).id;
    let job: { status: string; result: { text: string } | null } = { status: 'queued', result: null };
    for (let i = 0; i < 120 && !['succeeded', 'failed', 'cancelled'].includes(job.status); i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      job = (await t.app.inject({ method: 'GET', url: `/v1/jobs/${id}`, headers: { authorization: `Bearer ${t.key}` } })).json();
    }
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    assert.match(job.result!.text, /sand/i);
  });

  test('the official OpenAI SDK works against /v1/audio/translations', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const client = new OpenAI({ apiKey: t.key, baseURL: `http://127.0.0.1:${port}/v1` });
    const plain = await client.audio.translations.create({
      file: await toFile(audio(spanish), 'es.wav', { type: 'audio/wav' }),
      model: 'whisper-1',
    });
    for (const word of spanishInEnglish) assert.match(plain.text, word);
    const verbose = (await client.audio.translations.create({
      file: await toFile(audio(spanish), 'es.wav'),
      model: 'whisper-1',
      response_format: 'verbose_json',
    })) as TranslationVerbose & { task: string };
    assert.equal(verbose.task, 'translate');
    assert.equal(verbose.language, 'spanish');
    assert.ok((verbose.segments?.length ?? 0) >= 1);
    assert.ok(verbose.duration > 8);
  });
});
