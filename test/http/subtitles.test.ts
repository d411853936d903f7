/** Subtitle rules on srt and vtt through both transcription routes, with whisper base on a real recording. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { buildTestApp, evalDir, listen, multipartBody, type TestApp } from '../helpers/app.js';

const jfk = readFileSync(path.join(evalDir, 'asr/whisper_cpp/jfk.wav'));

/** srt or vtt cues as start, end (seconds) and text lines. */
function parseCues(body: string): Array<{ startSeconds: number; endSeconds: number; lines: string[] }> {
  const seconds = (clock: string): number => {
    const [h, m, s] = clock.replace(',', '.').split(':').map(Number);
    return h! * 3600 + m! * 60 + s!;
  };
  return body
    .replace(/^WEBVTT\n\n/, '')
    .trim()
    .split(/\n\n/)
    .map((block) => {
      const lines = block.split('\n');
      const timing = lines.findIndex((l) => l.includes(' --> '));
      const [start, end] = lines[timing]!.split(' --> ');
      return { startSeconds: seconds(start!), endSeconds: seconds(end!), lines: lines.slice(timing + 1) };
    });
}

describe('subtitle rules', { timeout: 600_000 }, () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(async () => t.close());

  const transcribe = (fields: Record<string, string>) => {
    const form = multipartBody({ language: 'en', ...fields }, { audio: { filename: 'jfk.wav', content: jfk } });
    return t.app.inject({
      method: 'POST',
      url: '/v1/audio/transcribe',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': form.contentType },
      payload: form.body,
    });
  };

  test('/v1/audio/transcribe srt: one line of 20 characters, 3 s at most, every cue at word times, every word kept', async () => {
    const json = await transcribe({});
    assert.equal(json.statusCode, 200, json.body);
    const words = (json.json() as { segments: Array<{ words: Array<{ word: string; start: number; end: number }> }> }).segments.flatMap(
      (s) => s.words,
    );
    const r = await transcribe({ response_format: 'srt', max_line_chars: '20', max_lines: '1', max_cue_seconds: '3' });
    assert.equal(r.statusCode, 200, r.body);
    const cues = parseCues(r.body);
    assert.ok(cues.length >= 5, r.body);
    const near = (a: number, b: number) => Math.abs(a - b) <= 0.0015;
    for (const cue of cues) {
      assert.equal(cue.lines.length, 1, r.body);
      assert.ok(cue.lines[0]!.length <= 20, cue.lines[0]);
      assert.ok(cue.endSeconds - cue.startSeconds <= 3.0015, r.body);
      assert.ok(
        words.some((w) => near(w.start, cue.startSeconds)),
        `cue starts at ${cue.startSeconds}, no word does`,
      );
    }
    const said = (text: string) => text.replace(/\s+/g, ' ').trim();
    assert.equal(said(cues.map((c) => c.lines.join(' ')).join(' ')), said(words.map((w) => w.word).join('')));
  });

  test('/v1/audio/transcriptions vtt through the OpenAI SDK keeps the defaults (2 lines of 42 characters, 7 s)', async () => {
    const client = new OpenAI({ apiKey: t.key, baseURL: `http://${await listen(t)}/v1` });
    const vtt = await client.audio.transcriptions.create({
      file: await toFile(jfk, 'jfk.wav', { type: 'audio/wav' }),
      model: 'whisper-1',
      language: 'en',
      response_format: 'vtt',
    });
    assert.match(vtt, /^WEBVTT\n\n/);
    const cues = parseCues(vtt);
    assert.ok(cues.length >= 2, vtt);
    for (const cue of cues) {
      assert.ok(cue.lines.length <= 2 && cue.lines.every((l) => l.length <= 42), vtt);
      assert.ok(cue.endSeconds - cue.startSeconds <= 7.0015, vtt);
    }
    assert.match(vtt, /country/);
  });

  test('bad rules: min_cue_seconds above max_cue_seconds -> 400; max_lines=0 -> 400 naming the field', async () => {
    const inverted = await transcribe({ response_format: 'srt', min_cue_seconds: '5', max_cue_seconds: '2' });
    assert.equal(inverted.statusCode, 400);
    assert.match(inverted.body, /min_cue_seconds/);
    const noLines = await transcribe({ response_format: 'srt', max_lines: '0' });
    assert.equal(noLines.statusCode, 400);
    assert.match(noLines.body, /max_lines/);
  });
});
