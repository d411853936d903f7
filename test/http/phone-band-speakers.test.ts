/**
 * Issue 35's call through HTTP with the real engines: an 8 kHz G.711 recording (ffmpeg `-ar 8000 -c:a pcm_mulaw`) of a
 * Spanish woman, a Portuguese woman (the issue's Russian woman: there is none in eval) and an Italian man from
 * eval/asr, whole-clip turns with 0.5 s gaps, the last turn over the previous one by 1.5 s. The Spanish woman is
 * enrolled from a 4.5 s wideband clip of her own (the first part of her recording; the call holds the rest). The two
 * women must be kept apart, the Spanish one named, nobody else named; her profile is compared through the same line.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { levelled, trimmed } from '../../bench/lib/conversations.js';
import { decodeFile } from '../../src/audio/decode.js';
import { encodeWaveform, encodeWaveformToFile } from '../../src/audio/encode.js';
import { ffmpegBaseArgs, runProcess } from '../../src/audio/ffmpeg.js';
import { buildTestApp, createVoice, evalDir, makeTempDir, multipartBody, type TestApp } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';

interface Transcript {
  segments: Array<{ speaker: string | null; start: number; end: number }>;
  speakers: Array<{ id: string; speaker_name: string | null; voice_id: string | null }>;
}
const sampleRate = 16000;
const clip = async (name: string) => levelled(trimmed((await decodeFile(path.join(evalDir, name), { sampleRate, channels: 1 })).samples));

describe('a phone-band call with named speakers', () => {
  let t: TestApp;
  let call: Buffer;
  const reference: Array<{ speaker: string; startSeconds: number; endSeconds: number }> = [];
  let spanishVoice = '';

  before(async () => {
    await Promise.all([
      modelFile('whisper-base', 'ggml-base.bin'),
      modelFile('silero-vad', 'silero_vad.onnx'),
      modelFile('resemblyzer-ge2e', 'ge2e.onnx'),
      modelFile('campplus', 'campplus.onnx'),
      modelFile('pyannote-segmentation-3', 'segmentation-3.0.onnx'),
    ]);
    t = await buildTestApp();
    const spanish = await clip('asr/pv_leopard/test_es.wav');
    const enrolment = spanish.subarray(0, Math.round(4.5 * sampleRate));
    const heard = new Map([
      ['spanish', spanish.subarray(enrolment.length)],
      ['portuguese', await clip('asr/pv_leopard/test_pt.wav')],
      ['italian', await clip('asr/pv_leopard/test_it.wav')],
    ]);
    const order = ['spanish', 'italian', 'portuguese', 'spanish', 'portuguese'];
    const placed: Array<{ speaker: string; start: number; samples: Float32Array }> = [];
    let cursor = Math.round(0.5 * sampleRate);
    for (const [index, speaker] of order.entries()) {
      const samples = heard.get(speaker)!;
      const start = index === order.length - 1 ? cursor - Math.round(1.5 * sampleRate) : cursor + (index === 0 ? 0 : sampleRate / 2);
      placed.push({ speaker, start, samples });
      cursor = Math.max(cursor, start + samples.length);
    }
    const mixed = new Float32Array(cursor + sampleRate / 2);
    for (const p of placed) for (let i = 0; i < p.samples.length; i++) mixed[p.start + i] = mixed[p.start + i]! + p.samples[i]!;
    for (const p of placed)
      reference.push({ speaker: p.speaker, startSeconds: p.start / sampleRate, endSeconds: (p.start + p.samples.length) / sampleRate });
    // The call as a telephone system stores it: 8 kHz mu-law WAV.
    const dir = makeTempDir('voxd-phone-call-');
    const wide = path.join(dir, 'call.wav');
    await encodeWaveformToFile({ samples: mixed, sampleRate, channels: 1 }, { format: 'wav' }, wide);
    const narrow = path.join(dir, 'call.8k.wav');
    const converted = await runProcess('ffmpeg', [...ffmpegBaseArgs, '-i', wide, '-ar', '8000', '-ac', '1', '-c:a', 'pcm_mulaw', narrow]);
    assert.equal(converted.exitCode, 0, converted.stderr);
    call = readFileSync(narrow);

    const enrol = async (name: string, content: Buffer) =>
      (await createVoice(t, { name, purpose: 'identify' }, { filename: `${name}.wav`, content, contentType: 'audio/wav' })).voice_id;
    spanishVoice = await enrol('Lucia', await encodeWaveform({ samples: enrolment, sampleRate, channels: 1 }, { format: 'wav' }));
  });
  after(async () => t.close());

  test('the two women are kept apart, the enrolled one is named, the others are not named after a profile', async () => {
    const form = multipartBody(
      { diarize: 'true', language: 'auto', response_format: 'verbose_json', speaker_voice_ids: spanishVoice },
      { audio: { filename: 'call.wav', content: call } },
    );
    const r = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/transcribe',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': form.contentType },
      payload: form.body,
    });
    assert.equal(r.statusCode, 200, r.body);
    const body = r.json() as Transcript;
    // Each reference speaker's diarized speaker: the one its turns share the most segment time with.
    const speakerOf = (who: string): string | null => {
      const shared = new Map<string, number>();
      for (const segment of body.segments) {
        for (const turn of reference.filter((x) => x.speaker === who)) {
          const seconds = Math.max(0, Math.min(segment.end, turn.endSeconds) - Math.max(segment.start, turn.startSeconds));
          if (segment.speaker !== null) shared.set(segment.speaker, (shared.get(segment.speaker) ?? 0) + seconds);
        }
      }
      return [...shared].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
    };
    const found = Object.fromEntries(['spanish', 'portuguese', 'italian'].map((who) => [who, speakerOf(who)]));
    assert.ok(found.spanish && found.portuguese && found.spanish !== found.portuguese, JSON.stringify({ found, speakers: body.speakers }));
    const named = new Map(body.speakers.map((s) => [s.id, s.voice_id]));
    assert.equal(named.get(found.spanish), spanishVoice, JSON.stringify(body.speakers));
    for (const speaker of body.speakers.filter((s) => s.id !== found.spanish)) {
      assert.equal(speaker.voice_id, null, JSON.stringify(body.speakers));
      assert.equal(speaker.speaker_name, null);
    }
    // The profile was compared through the telephone line: that embedding is now stored beside the wideband one.
    const stored = (await t.container.store.voices.get(spanishVoice))!.analysis.speaker as Record<string, number[]>;
    assert.equal(stored.campplus_narrowband_embedding?.length, 192);
    assert.notDeepEqual(stored.campplus_narrowband_embedding, stored.campplus_embedding);
  });
});
