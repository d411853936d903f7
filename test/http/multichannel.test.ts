/**
 * multichannel=true through HTTP with the real engines (whisper base, Silero VAD, CAM++): stereo recordings built here
 * from eval clips of two speakers, one per channel, the second starting while the first still talks. Each channel's
 * words must land on that channel, in time order; with known speaker references each channel gets its speaker's name.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import type { TranscriptionCreateParamsNonStreaming, TranscriptionDiarized } from 'openai/resources/audio/transcriptions';
import { errorRate } from '../../bench/lib/wer.js';
import { decodeFile } from '../../src/audio/decode.js';
import { encodeWaveform } from '../../src/audio/encode.js';
import { buildTestApp, evalDir, multipartBody, type TestApp } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';

const sampleRate = 16000;
const leopard = 'asr/pv_leopard/test.wav';
const leopardText = 'Mr. Quilter is the apostle of the middle classes and we are glad to welcome his gospel.';
const jfk = 'asr/whisper_cpp/jfk.wav';
const jfkText = 'And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country.';
const jfkStartSeconds = 3;

const mono = async (relative: string): Promise<Float32Array> =>
  (await decodeFile(path.join(evalDir, relative), { sampleRate, channels: 1 })).samples;

/** A WAV with one clip per channel, each placed at its start (seconds). */
async function multichannelWav(clips: Array<{ samples: Float32Array; startSeconds: number }>): Promise<Buffer> {
  const channels = clips.length;
  const frames = Math.max(...clips.map((c) => Math.round(c.startSeconds * sampleRate) + c.samples.length)) + sampleRate / 2;
  const samples = new Float32Array(frames * channels);
  clips.forEach((clip, channel) => {
    const offset = Math.round(clip.startSeconds * sampleRate);
    for (let i = 0; i < clip.samples.length; i++) samples[(offset + i) * channels + channel] = clip.samples[i]!;
  });
  return encodeWaveform({ samples, sampleRate, channels }, { format: 'wav' });
}

interface Segment {
  channel?: number;
  start: number;
  end: number;
  text: string;
  speaker: string | null;
  words: Array<{ word: string; start: number; end: number; speaker: string | null }>;
}

describe('multichannel=true: a speaker per channel', () => {
  let t: TestApp;
  let call: Buffer;
  before(async () => {
    await Promise.all([
      modelFile('whisper-base', 'ggml-base.bin'),
      modelFile('silero-vad', 'silero_vad.onnx'),
      modelFile('campplus', 'campplus.onnx'),
    ]);
    t = await buildTestApp();
    call = await multichannelWav([
      { samples: await mono(leopard), startSeconds: 0.3 },
      { samples: await mono(jfk), startSeconds: jfkStartSeconds },
    ]);
  });
  after(async () => t.close());

  const transcribe = async (fields: Record<string, string | string[]>, content: Buffer, url = '/v1/audio/transcribe') => {
    const form = multipartBody(fields, { [url.endsWith('transcribe') ? 'audio' : 'file']: { filename: 'call.wav', content } });
    return t.app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${t.key}`, 'content-type': form.contentType },
      payload: form.body,
    });
  };

  test("each channel's words land on its channel, as its speaker, merged in time order; the talk-over is measured", async () => {
    const r = await transcribe({ multichannel: 'true', language: 'en' }, call);
    assert.equal(r.statusCode, 200, r.body);
    const body = r.json() as {
      text: string;
      segments: Segment[];
      speakers: Array<{ id: string; channel: number; total_speech_seconds: number; total_overlap_seconds: number }>;
    };
    for (const [channel, reference] of [leopardText, jfkText].entries()) {
      const segments = body.segments.filter((s) => s.channel === channel);
      const text = segments.map((s) => s.text).join(' ');
      const wer = errorRate(reference, text, 'en');
      assert.ok(wer.rate <= 0.2, `channel ${channel} WER ${wer.rate}: ${text}`);
      for (const s of segments) {
        assert.equal(s.speaker, `SPEAKER_${channel}`);
        for (const w of s.words) assert.equal(w.speaker, `SPEAKER_${channel}`);
      }
    }
    assert.ok(
      body.segments.every((s) => s.channel === 0 || s.channel === 1),
      JSON.stringify(body.segments.map((s) => s.channel)),
    );
    // The other party's words do not leak across.
    assert.doesNotMatch(
      body.segments
        .filter((s) => s.channel === 0)
        .map((s) => s.text)
        .join(' '),
      /country|americans/i,
    );
    assert.doesNotMatch(
      body.segments
        .filter((s) => s.channel === 1)
        .map((s) => s.text)
        .join(' '),
      /quilter|gospel/i,
    );
    // Times: in order, and each channel's words where its clip is.
    for (let i = 1; i < body.segments.length; i++) assert.ok(body.segments[i]!.start >= body.segments[i - 1]!.start);
    const firstJfkWord = body.segments.find((s) => s.channel === 1)!.words[0]!;
    assert.ok(firstJfkWord.start >= jfkStartSeconds - 0.3, JSON.stringify(firstJfkWord));
    const lastLeopardWord = body.segments
      .filter((s) => s.channel === 0)
      .at(-1)!
      .words.at(-1)!;
    assert.ok(lastLeopardWord.end <= 0.3 + 5.9 + 0.3, JSON.stringify(lastLeopardWord));
    // The channels talk at once from 3 s until the first clip ends.
    assert.deepEqual(
      body.speakers.map((s) => [s.id, s.channel]),
      [
        ['SPEAKER_0', 0],
        ['SPEAKER_1', 1],
      ],
    );
    for (const s of body.speakers) assert.ok(s.total_overlap_seconds > 1 && s.total_speech_seconds > 4, JSON.stringify(s));
    assert.match(body.text, /quilter[\s\S]*country/i);
  });

  test('the OpenAI SDK: diarized_json with known speaker references names each channel after its speaker', async () => {
    const clip = (name: string) => path.join(evalDir, 'vc/resemblyzer_librispeech', name);
    const dataUrl = (name: string) => `data:audio/wav;base64,${readFileSync(clip(name)).toString('base64')}`;
    const meeting = await multichannelWav([
      { samples: (await decodeFile(clip('2033-164914-0003.wav'), { sampleRate, channels: 1 })).samples, startSeconds: 0.2 },
      { samples: (await decodeFile(clip('3080-5032-0004.wav'), { sampleRate, channels: 1 })).samples, startSeconds: 4 },
    ]);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const client = new OpenAI({ apiKey: t.key, baseURL: `http://127.0.0.1:${port}/v1` });
    // multichannel is ours: the SDK sends every body field as it is.
    const params = {
      file: await toFile(meeting, 'meeting.wav', { type: 'audio/wav' }),
      model: 'gpt-4o-transcribe-diarize',
      response_format: 'diarized_json',
      language: 'en',
      // Listed in the other order than the channels: matched by voice, not by position.
      known_speaker_names: ['Beth', 'Alex'],
      known_speaker_references: [dataUrl('3080-5032-0001.wav'), dataUrl('2033-164914-0001.wav')],
      multichannel: true,
    } as TranscriptionCreateParamsNonStreaming<'diarized_json'>;
    const result = (await client.audio.transcriptions.create(params)) as TranscriptionDiarized;
    assert.ok(result.segments.length >= 2, JSON.stringify(result));
    for (const segment of result.segments as Array<TranscriptionDiarized['segments'][number] & { channel: number }>) {
      assert.equal(segment.type, 'transcript.text.segment');
      assert.equal(segment.speaker, segment.channel === 0 ? 'Alex' : 'Beth', JSON.stringify(segment));
    }
    assert.deepEqual(new Set(result.segments.map((s) => s.speaker)), new Set(['Alex', 'Beth']));
  });

  test('a mono recording, more than 8 channels, or diarize with it -> 400 naming multichannel', async () => {
    const mono = await transcribe({ multichannel: 'true' }, readFileSync(path.join(evalDir, leopard)));
    assert.equal(mono.statusCode, 400, mono.body);
    assert.equal(mono.json().error.param, 'multichannel');
    assert.match(mono.json().error.message, /has 1\b.*diarize=true/);
    const short = new Float32Array(sampleRate);
    const nine = await multichannelWav(Array.from({ length: 9 }, () => ({ samples: short, startSeconds: 0 })));
    const many = await transcribe({ multichannel: 'true' }, nine, '/v1/audio/transcriptions');
    assert.equal(many.statusCode, 400, many.body);
    assert.equal(many.json().error.param, 'multichannel');
    assert.match(many.json().error.message, /2 to 8 channels.*has 9/);
    const both = await transcribe({ multichannel: 'true', diarize: 'true' }, call);
    assert.equal(both.statusCode, 400, both.body);
    assert.equal(both.json().error.param, 'multichannel');
  });
});
