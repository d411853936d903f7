/** Diarized transcripts: words keep one speaker, segments may overlap where two speakers talk at once. */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SileroVad } from '../../../src/audio/vad.js';
import { WhisperCppTranscriber } from '../../../src/operations/transcribe/engines/whisper-cpp.js';
import { toSrt, toVtt } from '../../../src/operations/transcribe/formats.js';
import { buildSegments, summarizeSpeakers, transcribeFile, type SpeakerTurn } from '../../../src/operations/transcribe/pipeline.js';
import type { RecognizedSegment } from '../../../src/operations/transcribe/transcriber.js';
import { DiarizationModels, OverlapDiarizer } from '../../../src/speakers/overlap-diarization.js';
import { evalDir } from '../../helpers/app.js';
import { camppModelPath, modelFile, segmentationModelPath } from '../../helpers/models.js';

const word = (text: string, startSeconds: number, endSeconds: number) => ({ text, startSeconds, endSeconds, probability: 0.9 });
const segment = (words: ReturnType<typeof word>[]): RecognizedSegment => ({
  startSeconds: words[0]!.startSeconds,
  endSeconds: words.at(-1)!.endSeconds,
  text: words.map((w) => w.text).join(''),
  words,
  averageLogProbability: -0.2,
  noSpeechProbability: 0.01,
});
const chunk = {
  pieces: [{ chunkStartSeconds: 0, originalStartSeconds: 0, durationSeconds: 20 }],
  originalStartSeconds: 0,
  originalEndSeconds: 20,
  durationSeconds: 20,
};

describe('segments and speakers from overlapping turns', () => {
  // A talks 0-6 s; B cuts in at 5 s and talks to 10 s; A's last words were said over B's first ones.
  const turns: SpeakerTurn[] = [
    { speaker: 'SPEAKER_1', startSeconds: 0, endSeconds: 6 },
    { speaker: 'SPEAKER_2', startSeconds: 5, endSeconds: 10 },
  ];
  const recognized = [
    {
      chunk,
      temperature: 0,
      language: 'en',
      segments: [segment([word(' one', 0.2, 1), word(' two', 1.2, 2.5), word(' three', 5.2, 6.5), word(' four', 7, 8.5)])],
    },
  ];

  test('words keep one speaker; each segment reaches into the time its speaker talks over the other; sorted by start', () => {
    const segments = buildSegments(recognized, turns);
    assert.deepEqual(
      segments.map((s) => s.words.map((w) => w.speaker)),
      [
        ['SPEAKER_1', 'SPEAKER_1'],
        ['SPEAKER_2', 'SPEAKER_2'],
      ],
    );
    assert.deepEqual(
      segments.map((s) => [s.id, s.speaker, s.start, s.end]),
      [
        [0, 'SPEAKER_1', 0.2, 6],
        [1, 'SPEAKER_2', 5, 8.5],
      ],
    );
    const srt = toSrt(segments);
    // Cues follow the words' times, not the segments' reach into the overlap.
    assert.match(srt, /00:00:00,200 --> 00:00:02,500\n\[SPEAKER_1\] one two/);
    assert.match(srt, /00:00:05,200 --> 00:00:08,500\n\[SPEAKER_2\] three four/);
  });

  test('without overlapping turns segments stay within their words', () => {
    const apart: SpeakerTurn[] = [
      { speaker: 'SPEAKER_1', startSeconds: 0, endSeconds: 5 },
      { speaker: 'SPEAKER_2', startSeconds: 5, endSeconds: 10 },
    ];
    const segments = buildSegments(recognized, apart);
    assert.deepEqual(
      segments.map((s) => [s.start, s.end]),
      [
        [0.2, 2.5],
        [5.2, 8.5],
      ],
    );
  });

  test('speakers[]: speech seconds and the seconds another speaker talks over them (three at once counted once)', () => {
    assert.deepEqual(summarizeSpeakers(turns), [
      { id: 'SPEAKER_1', total_speech_seconds: 6, total_overlap_seconds: 1 },
      { id: 'SPEAKER_2', total_speech_seconds: 5, total_overlap_seconds: 1 },
    ]);
    const three = summarizeSpeakers([...turns, { speaker: 'SPEAKER_3', startSeconds: 5.5, endSeconds: 6 }]);
    assert.deepEqual(
      three.map((s) => s.total_overlap_seconds),
      [1, 1, 0.5],
    );
  });
});

describe('transcribing real two-speaker audio with diarization', () => {
  let transcriber: WhisperCppTranscriber;
  let vad: SileroVad;
  let models: DiarizationModels;
  before(async () => {
    transcriber = await WhisperCppTranscriber.load(await modelFile('whisper-base', 'ggml-base.bin'), {
      modelId: 'whisper-base',
      threads: 2,
    });
    vad = await SileroVad.load(await modelFile('silero-vad', 'silero_vad.onnx'));
    models = await DiarizationModels.load(
      { segmentation: await segmentationModelPath(), campplus: await camppModelPath() },
      { threads: 2 },
    );
  });
  after(async () => {
    await Promise.all([vad.close(), models.close()]);
  });

  for (const file of ['diar/faster_whisper/stereo_diarization.wav', 'diar/pyannote/sample.wav']) {
    test(`${file}: two speakers, overlap reported, one speaker per word, segments sorted by start`, async (t) => {
      const transcript = await transcribeFile(
        { transcriber, vad },
        { path: path.join(evalDir, file), language: 'en', speakers: {}, maxAudioSeconds: 600, diarizer: new OverlapDiarizer(models) },
      );
      t.diagnostic(JSON.stringify(transcript.speakers));
      assert.deepEqual(
        transcript.speakers.map((s) => s.id),
        ['SPEAKER_1', 'SPEAKER_2'],
      );
      assert.ok(transcript.speakers.every((s) => s.total_overlap_seconds > 0 && s.total_overlap_seconds < s.total_speech_seconds));
      for (const s of transcript.segments) assert.ok(s.words.every((w) => w.speaker === s.speaker));
      assert.deepEqual(
        transcript.segments.map((s) => s.id),
        transcript.segments.map((_, i) => i),
      );
      for (let i = 1; i < transcript.segments.length; i++) assert.ok(transcript.segments[i]!.start >= transcript.segments[i - 1]!.start);
      const vtt = toVtt(transcript.segments);
      assert.match(vtt, /\[SPEAKER_1\]/);
      assert.match(vtt, /\[SPEAKER_2\]/);
    });
  }
});
