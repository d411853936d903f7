/**
 * OpenAI's diarized transcription (response_format=diarized_json, known_speaker_names[] / known_speaker_references[])
 * through the official OpenAI SDK and its TranscriptionDiarized type, with the real engines, on a conversation built
 * here from three eval/vc speakers (bench/lib/conversations.ts, as test/http/named-speakers.test.ts): two of them known
 * by a reference clip of another utterance, the third not.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import type { TranscriptionDiarized } from 'openai/resources/audio/transcriptions';
import { buildConversation, levelled, random, trimmed, type Conversation } from '../../bench/lib/conversations.js';
import { decodeFile } from '../../src/audio/decode.js';
import { encodeWaveform } from '../../src/audio/encode.js';
import { buildTestApp, evalDir, multipartBody, type TestApp } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';

const clipPath = (name: string) => path.join(evalDir, 'vc/resemblyzer_librispeech', name);
const dataUrl = (file: string) => `data:audio/wav;base64,${readFileSync(file).toString('base64')}`;

describe('OpenAI diarized_json', () => {
  let t: TestApp;
  let client: OpenAI;
  let conversation: Conversation;
  let meeting: Buffer;

  before(async () => {
    await Promise.all([
      modelFile('whisper-base', 'ggml-base.bin'),
      modelFile('silero-vad', 'silero_vad.onnx'),
      modelFile('resemblyzer-ge2e', 'ge2e.onnx'),
      modelFile('campplus', 'campplus.onnx'),
      modelFile('pyannote-segmentation-3', 'segmentation-3.0.onnx'),
    ]);
    t = await buildTestApp();
    const heard = new Map<string, Float32Array[]>();
    for (const [speaker, file] of [
      ['alex', clipPath('2033-164914-0003.wav')],
      ['beth', clipPath('3080-5032-0004.wav')],
      ['unknown', path.join(evalDir, 'vc/rtvc_samples/8230_00000.wav')],
    ] as const) {
      heard.set(speaker, [levelled(trimmed((await decodeFile(file, { sampleRate: 16000, channels: 1 })).samples))]);
    }
    conversation = buildConversation(heard, ['alex', 'beth', 'unknown'], random(17), 9);
    meeting = await encodeWaveform({ samples: conversation.samples, sampleRate: 16000, channels: 1 }, { format: 'wav' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    client = new OpenAI({ apiKey: t.key, baseURL: `http://127.0.0.1:${port}/v1` });
  });
  after(async () => t.close());

  // The SDK types create() with diarized_json as returning a Transcription (in 6.4.0 and still in the latest 6.x): its
  // callers cast to TranscriptionDiarized, as here.

  /** The reference speaker a label's segments share the most time with. */
  const truthOf = (result: TranscriptionDiarized, label: string): string => {
    const shared = new Map<string, number>();
    for (const segment of result.segments.filter((s) => s.speaker === label))
      for (const turn of conversation.reference)
        shared.set(
          turn.speaker,
          (shared.get(turn.speaker) ?? 0) +
            Math.max(0, Math.min(segment.end, turn.endSeconds) - Math.max(segment.start, turn.startSeconds)),
        );
    return [...shared].sort((a, b) => b[1] - a[1])[0]![0];
  };

  const checkShape = (result: TranscriptionDiarized) => {
    assert.equal(result.task, 'transcribe');
    assert.ok(Math.abs(result.duration - conversation.samples.length / 16000) < 0.05, String(result.duration));
    assert.deepEqual(result.usage, { type: 'duration', seconds: result.duration });
    assert.ok(result.segments.length >= 5, JSON.stringify(result.segments));
    assert.equal(new Set(result.segments.map((s) => s.id)).size, result.segments.length);
    for (const [i, segment] of result.segments.entries()) {
      assert.equal(segment.type, 'transcript.text.segment');
      assert.ok(segment.end >= segment.start && segment.text.trim() !== '', JSON.stringify(segment));
      if (i > 0) assert.ok(segment.start >= result.segments[i - 1]!.start);
    }
    assert.equal(
      result.text,
      result.segments
        .map((s) => s.text)
        .join(' ')
        .replace(/\s+/g, ' ')
        .trim(),
    );
  };

  test('known speakers: the two with references get their names, the third is A', async () => {
    const result = (await client.audio.transcriptions.create({
      file: await toFile(meeting, 'meeting.wav', { type: 'audio/wav' }),
      model: 'gpt-4o-transcribe-diarize',
      response_format: 'diarized_json',
      chunking_strategy: 'auto',
      language: 'en',
      known_speaker_names: ['Alex', 'Beth'],
      known_speaker_references: [dataUrl(clipPath('2033-164914-0001.wav')), dataUrl(clipPath('3080-5032-0001.wav'))],
    })) as TranscriptionDiarized;
    checkShape(result);
    const labels = new Set(result.segments.map((s) => s.speaker));
    assert.deepEqual(labels, new Set(['Alex', 'Beth', 'A']), JSON.stringify(result.segments));
    assert.equal(truthOf(result, 'Alex'), 'alex');
    assert.equal(truthOf(result, 'Beth'), 'beth');
    assert.equal(truthOf(result, 'A'), 'unknown');
  });

  test('no known speakers: A, B, C in order of first speech (chunking_strategy as server_vad accepted)', async () => {
    const result = (await client.audio.transcriptions.create({
      file: await toFile(meeting, 'meeting.wav', { type: 'audio/wav' }),
      model: 'gpt-4o-transcribe-diarize',
      response_format: 'diarized_json',
      chunking_strategy: { type: 'server_vad', threshold: 0.5, silence_duration_ms: 500 },
    })) as TranscriptionDiarized;
    checkShape(result);
    const order = [...new Set(result.segments.map((s) => s.speaker))];
    assert.deepEqual(order, ['A', 'B', 'C']);
    assert.deepEqual(new Set(order.map((label) => truthOf(result, label))), new Set(['alex', 'beth', 'unknown']));
  });

  test('bad known speakers -> 400/415 naming the field, before any transcription', async () => {
    const send = async (fields: Record<string, string | string[]>, content = meeting) => {
      const form = multipartBody(
        { model: 'gpt-4o-transcribe-diarize', response_format: 'diarized_json', ...fields },
        { file: { filename: 'meeting.wav', content } },
      );
      const r = await t.app.inject({
        method: 'POST',
        url: '/v1/audio/transcriptions',
        headers: { authorization: `Bearer ${t.key}`, 'content-type': form.contentType },
        payload: form.body,
      });
      return { status: r.statusCode, error: (r.json() as { error: { param?: string; message: string } }).error };
    };
    const reference = dataUrl(clipPath('2033-164914-0001.wav'));
    const unpaired = await send({ 'known_speaker_names[]': ['Alex', 'Beth'], 'known_speaker_references[]': [reference] });
    assert.deepEqual([unpaired.status, unpaired.error.param], [400, 'known_speaker_references'], unpaired.error.message);
    assert.match(unpaired.error.message, /2 names, 1 references/);
    const notDataUrl = await send({ 'known_speaker_names[]': 'Alex', 'known_speaker_references[]': 'https://example.com/alex.wav' });
    assert.deepEqual([notDataUrl.status, notDataUrl.error.param], [400, 'known_speaker_references'], notDataUrl.error.message);
    const notAudio = await send({
      'known_speaker_names[]': 'Alex',
      'known_speaker_references[]': `data:audio/wav;base64,${Buffer.from('not audio at all').toString('base64')}`,
    });
    assert.deepEqual([notAudio.status, notAudio.error.param], [415, 'known_speaker_references'], notAudio.error.message);
    const tooShort = await send({
      'known_speaker_names[]': 'Alex',
      'known_speaker_references[]': `data:audio/wav;base64,${(
        await encodeWaveform({ samples: new Float32Array(8000).fill(0.1), sampleRate: 16000, channels: 1 }, { format: 'wav' })
      ).toString('base64')}`,
    });
    assert.deepEqual([tooShort.status, tooShort.error.param], [400, 'known_speaker_references'], tooShort.error.message);
    const undiarized = await send({ response_format: 'json', 'known_speaker_names[]': 'Alex', 'known_speaker_references[]': reference });
    assert.deepEqual([undiarized.status, undiarized.error.param], [400, 'response_format'], undiarized.error.message);
  });
});
