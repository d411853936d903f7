/**
 * Speakers named from voice profiles (speaker_voice_ids) through HTTP with the real engines, on a conversation built
 * here from three eval/vc speakers (bench/lib/conversations.ts): two of them enrolled from their other clip, the third
 * unknown. Also the refusals (unknown, another key's and built-in voices) and profiles made for identification only.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildConversation, levelled, random, trimmed, type Conversation } from '../../bench/lib/conversations.js';
import { decodeFile } from '../../src/audio/decode.js';
import { encodeWaveform } from '../../src/audio/encode.js';
import { buildTestApp, createVoice, evalDir, evalFile, multipartBody, type TestApp } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';

const clipPath = (name: string) => path.join(evalDir, 'vc/resemblyzer_librispeech', name);

interface Named {
  speaker: string | null;
  speaker_name?: string | null;
  voice_id?: string | null;
}
interface Transcript {
  segments: Array<Named & { start: number; end: number; words: Array<Named & { start: number; end: number }> }>;
  speakers: Array<{ id: string; speaker_name?: string | null; voice_id?: string | null; voice_similarity?: number | null }>;
}

describe('speakers named from voice profiles', () => {
  let t: TestApp;
  let otherKey: string;
  let conversation: Conversation;
  const voices = { alex: '', beth: '', dana: '' };

  const enrol = (fields: Record<string, string>, clip: string) => createVoice(t, fields, evalFile(`vc/resemblyzer_librispeech/${clip}`));
  const transcribe = async (fields: Record<string, string | string[]>, key = t.key) => {
    const audio = await encodeWaveform({ samples: conversation.samples, sampleRate: 16000, channels: 1 }, { format: 'wav' });
    const form = multipartBody(fields, { audio: { filename: 'meeting.wav', content: audio } });
    return t.app.inject({
      method: 'POST',
      url: '/v1/audio/transcribe',
      headers: { authorization: `Bearer ${key}`, 'content-type': form.contentType },
      payload: form.body,
    });
  };

  before(async () => {
    await Promise.all([
      modelFile('whisper-base', 'ggml-base.bin'),
      modelFile('silero-vad', 'silero_vad.onnx'),
      modelFile('resemblyzer-ge2e', 'ge2e.onnx'),
      modelFile('campplus', 'campplus.onnx'),
      modelFile('pyannote-segmentation-3', 'segmentation-3.0.onnx'),
    ]);
    t = await buildTestApp();
    otherKey = await t.keyWith(['transcribe', 'voices', 'tts']);
    // Heard in the meeting: clips the profiles were not made from; reader 8230 has no profile.
    const heard = new Map<string, Float32Array[]>();
    for (const [speaker, clip] of [
      ['alex', '2033-164914-0003.wav'],
      ['beth', '3080-5032-0004.wav'],
    ] as const) {
      heard.set(speaker, [levelled(trimmed((await decodeFile(clipPath(clip), { sampleRate: 16000, channels: 1 })).samples))]);
    }
    const unknown = path.join(evalDir, 'vc/rtvc_samples/8230_00000.wav');
    heard.set('unknown', [levelled(trimmed((await decodeFile(unknown, { sampleRate: 16000, channels: 1 })).samples))]);
    conversation = buildConversation(heard, ['alex', 'beth', 'unknown'], random(17), 9);

    const made = await Promise.all([
      enrol({ name: 'Alex' }, '2033-164914-0001.wav'),
      enrol({ name: 'Beth', purpose: 'identify' }, '3080-5032-0001.wav'),
      // Listed but not in the meeting.
      enrol({ name: 'Dana' }, '1998-15444-0001.wav'),
    ]);
    [voices.alex, voices.beth, voices.dana] = made.map((voice) => voice.voice_id) as [string, string, string];
  });
  after(async () => t.close());

  test('the two enrolled speakers come back with their names (a profile made before CAM++ gets its embedding on first use); the unknown one stays anonymous', async () => {
    // Alex's profile as stored before CAM++ embeddings existed.
    const store = t.container.store.voices;
    const alex = (await store.get(voices.alex))!;
    const { campplus_embedding: stored, ...ge2eOnly } = alex.analysis.speaker as { campplus_embedding: number[] };
    assert.equal(stored.length, 192);
    await store.update(voices.alex, { analysis: { ...alex.analysis, speaker: ge2eOnly } });

    const r = await transcribe({ diarize: 'true', language: 'en', speaker_voice_ids: [`${voices.alex},${voices.dana}`, voices.beth] });
    assert.equal(r.statusCode, 200, r.body);
    const body = r.json() as Transcript;

    // Each diarized speaker is the reference speaker its segments share the most time with.
    const truthOf = (id: string): string => {
      const shared = new Map<string, number>();
      for (const segment of body.segments.filter((s) => s.speaker === id)) {
        for (const turn of conversation.reference)
          shared.set(
            turn.speaker,
            (shared.get(turn.speaker) ?? 0) +
              Math.max(0, Math.min(segment.end, turn.endSeconds) - Math.max(segment.start, turn.startSeconds)),
          );
      }
      return [...shared].sort((a, b) => b[1] - a[1])[0]![0];
    };
    assert.equal(body.speakers.length, 3, JSON.stringify(body.speakers));
    const expected: Record<string, [string | null, string | null]> = {
      alex: ['Alex', voices.alex],
      beth: ['Beth', voices.beth],
      unknown: [null, null],
    };
    for (const speaker of body.speakers) {
      assert.match(speaker.id, /^SPEAKER_\d$/);
      assert.deepEqual([speaker.speaker_name, speaker.voice_id], expected[truthOf(speaker.id)], JSON.stringify(speaker));
      assert.equal(speaker.voice_similarity === null, speaker.voice_id === null);
    }
    assert.deepEqual(new Set(body.speakers.map((s) => truthOf(s.id))), new Set(['alex', 'beth', 'unknown']));
    // Segments and words carry their speaker's name.
    const names = new Map(body.speakers.map((s) => [s.id, [s.speaker_name, s.voice_id]]));
    for (const segment of body.segments) {
      assert.deepEqual([segment.speaker_name, segment.voice_id], names.get(segment.speaker!));
      for (const word of segment.words) assert.deepEqual([word.speaker_name, word.voice_id], names.get(word.speaker!));
    }

    // The embedding was computed from Alex's reference clip and stored.
    const again = ((await store.get(voices.alex))!.analysis.speaker as { campplus_embedding: number[] }).campplus_embedding;
    assert.equal(again.length, 192);
    assert.ok(again.every((v, i) => Math.abs(v - stored[i]!) < 1e-3));

    const srt = await transcribe({
      diarize: 'true',
      language: 'en',
      speaker_voice_ids: `${voices.alex},${voices.beth}`,
      response_format: 'srt',
    });
    assert.match(srt.body, /\[Alex\] /);
    assert.match(srt.body, /\[Beth\] /);
    assert.match(srt.body, /\[SPEAKER_\d\] /);
  });

  test('unknown or another key’s voice -> 404, a built-in voice -> 422, without diarize or over 20 -> 400; as jobs too', async () => {
    const unknown = await transcribe({ diarize: 'true', speaker_voice_ids: `${voices.alex},voice_missing` });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().error.param, 'speaker_voice_ids');
    // The profiles are t.key's: to another (non-admin) key they do not exist.
    const foreign = await transcribe({ diarize: 'true', speaker_voice_ids: voices.alex }, otherKey);
    assert.equal(foreign.statusCode, 404);
    assert.equal(foreign.json().error.param, 'speaker_voice_ids');
    assert.equal(
      foreign.json().error.message,
      unknown.json().error.message.replace('voice_missing', voices.alex),
      'the same answer as a voice that does not exist',
    );
    const builtin = await transcribe({ diarize: 'true', speaker_voice_ids: 'af_heart' });
    assert.equal(builtin.statusCode, 422);
    assert.equal(builtin.json().error.param, 'speaker_voice_ids');
    const notDiarized = await transcribe({ speaker_voice_ids: voices.alex });
    assert.equal(notDiarized.statusCode, 400);
    assert.equal(notDiarized.json().error.param, 'diarize');
    const many = await transcribe({ diarize: 'true', speaker_voice_ids: Array.from({ length: 21 }, (_, i) => `voice_${i}`).join(',') });
    assert.equal(many.statusCode, 400);
    assert.equal(many.json().error.param, 'speaker_voice_ids');
    // A job is refused at submission.
    const job = await transcribe({ diarize: 'true', speaker_voice_ids: voices.alex, async: 'true' }, otherKey);
    assert.equal(job.statusCode, 404);
    assert.equal(job.json().error.param, 'speaker_voice_ids');
  });

  test('purpose=identify: stored and returned, still needs consent, refused as a voice to speak in (422)', async () => {
    const auth = { authorization: `Bearer ${t.key}` };
    const beth = (await t.app.inject({ method: 'GET', url: `/v1/voices/${voices.beth}`, headers: auth })).json();
    assert.equal(beth.purpose, 'identify');
    assert.equal((await t.app.inject({ method: 'GET', url: `/v1/voices/${voices.alex}`, headers: auth })).json().purpose, 'speech');
    assert.equal(
      (await t.container.store.voices.get(voices.beth))?.analysis['world-dsp'],
      undefined,
      'a profile that never speaks gets no conversion statistics',
    );

    const noConsent = multipartBody(
      { name: 'x', purpose: 'identify' },
      { files: { filename: 'a.wav', content: readFileSync(clipPath('3080-5032-0001.wav')) } },
    );
    const refused = await t.app.inject({
      method: 'POST',
      url: '/v1/voices',
      headers: { ...auth, 'content-type': noConsent.contentType },
      payload: noConsent.body,
    });
    assert.equal(refused.statusCode, 400);
    assert.match(refused.json().error.message, /recognised/);

    const tts = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/tts',
      headers: auth,
      payload: { text: 'Hello there.', voice_id: voices.beth },
    });
    assert.equal(tts.statusCode, 422, tts.body);
    assert.equal(tts.json().error.param, 'voice_id');
    assert.match(tts.json().error.message, /purpose=identify/);
    const ttsJob = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/tts',
      headers: auth,
      payload: { text: 'Hello there.', voice_id: voices.beth, async: true },
    });
    assert.equal(ttsJob.statusCode, 422);
    const preview = await t.app.inject({ method: 'GET', url: `/v1/voices/${voices.beth}/preview`, headers: auth });
    assert.equal(preview.statusCode, 422);
    const vcForm = multipartBody(
      { target_voice_id: voices.beth },
      { audio: { filename: 'a.wav', content: readFileSync(clipPath('2033-164914-0001.wav')) } },
    );
    const vc = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/vc',
      headers: { ...auth, 'content-type': vcForm.contentType },
      payload: vcForm.body,
    });
    assert.equal(vc.statusCode, 422);
    assert.equal(vc.json().error.param, 'target_voice_id');
  });
});
