/** OpenAI's diarized_json rendering: speaker labels (names, then A, B, ... by first speech or by channel). */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sequentialLabel, toDiarizedJson, type Transcript, type TranscriptSegment } from '../../../src/operations/transcribe/formats.js';

const segment = (start: number, speaker: string | null, extra: Partial<TranscriptSegment> = {}): TranscriptSegment => ({
  id: 0,
  start,
  end: start + 1,
  text: `said at ${start}`,
  speaker,
  confidence: 0.9,
  words: [],
  avg_logprob: -0.2,
  no_speech_prob: 0.01,
  temperature: 0,
  ...extra,
});
const transcript = (segments: TranscriptSegment[]): Transcript => ({
  text: segments.map((s) => s.text).join(' '),
  language: 'en',
  language_probability: 1,
  duration: 10.0004,
  segments,
  speakers: [],
  model: 'whisper-base',
  warnings: [],
});
type Diarized = {
  task: string;
  duration: number;
  usage: unknown;
  segments: Array<{ type: string; id: string; speaker: string; channel?: number }>;
};

describe('diarized_json', () => {
  test('A, B, ... in order of first speech; a matched name wins; audio events are left out', () => {
    const body = toDiarizedJson(
      transcript([
        segment(0, 'SPEAKER_2'),
        segment(1, 'SPEAKER_0', { speaker_name: 'Alex', voice_id: null }),
        segment(2, null, { kind: 'event', text: '(music)' }),
        segment(3, 'SPEAKER_1'),
        segment(4, 'SPEAKER_2'),
      ]),
      'transcribe',
    ) as Diarized;
    assert.deepEqual(
      body.segments.map((s) => [s.type, s.id, s.speaker]),
      [
        ['transcript.text.segment', 'seg_0', 'A'],
        ['transcript.text.segment', 'seg_1', 'Alex'],
        ['transcript.text.segment', 'seg_2', 'B'],
        ['transcript.text.segment', 'seg_3', 'A'],
      ],
    );
    assert.equal(body.task, 'transcribe');
    assert.equal(body.duration, 10);
    assert.deepEqual(body.usage, { type: 'duration', seconds: 10 });
  });

  test('multichannel: the letter is the channel, whoever speaks first', () => {
    const body = toDiarizedJson(
      transcript([segment(0, 'SPEAKER_1', { channel: 1 }), segment(1, 'SPEAKER_0', { channel: 0 })]),
      'transcribe',
    ) as Diarized;
    assert.deepEqual(
      body.segments.map((s) => [s.speaker, s.channel]),
      [
        ['B', 1],
        ['A', 0],
      ],
    );
  });

  test('labels go on past Z as spreadsheet columns do', () => {
    assert.deepEqual([0, 1, 25, 26, 27, 51, 52, 701, 702].map(sequentialLabel), ['A', 'B', 'Z', 'AA', 'AB', 'AZ', 'BA', 'ZZ', 'AAA']);
  });
});
