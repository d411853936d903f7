/** The pipeline's own logic between chunks. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SpeechChunk } from '../../../src/operations/transcribe/chunks.js';
import {
  conditioningText,
  isRecoveredSpeech,
  saysASentenceTwice,
  skippedSpeech,
  splitAt,
  transcriptWarnings,
  type TranscriptFacts,
} from '../../../src/operations/transcribe/pipeline.js';
import type { RecognizedSegment } from '../../../src/operations/transcribe/transcriber.js';
import type { ChunkTranscript } from '../../../src/operations/transcribe/transcriber.js';

const chunk = (temperature: number): ChunkTranscript => ({
  language: 'en',
  languageProbability: 1,
  temperature,
  segments: [' Ask not', ' what your country can do.'].map((text) => ({
    startSeconds: 0,
    endSeconds: 1,
    text,
    words: [],
    averageLogProbability: -0.2,
    noSpeechProbability: 0,
  })),
});

test('a chunk decoded at a low temperature conditions the next one; one accepted only after fallback to 0.5 or more does not', () => {
  assert.equal(conditioningText(chunk(0)), ' Ask not what your country can do.');
  assert.equal(conditioningText(chunk(0.4)), ' Ask not what your country can do.');
  assert.equal(conditioningText(chunk(0.6)), '');
  assert.equal(conditioningText(chunk(1)), '');
});

test('text that says a sentence twice does not condition the next chunk (issue 35); a short greeting twice does', () => {
  const said = (...texts: string[]): ChunkTranscript => ({
    ...chunk(0),
    segments: texts.map((text) => ({ ...chunk(0).segments[0]!, text })),
  });
  assert.equal(conditioningText(said(' It was my reports.', ' Hello.', ' It was my Reports!')), '');
  assert.equal(saysASentenceTwice(' The horizon seems distant. Mr. Quilter. The horizon seems distant.'), true);
  assert.equal(
    conditioningText(said(' Hello?', ' Hello?', ' I did not know you were there.')),
    ' Hello? Hello? I did not know you were there.',
  );
  assert.equal(saysASentenceTwice(' Ask not what your country can do for you, ask what you can do for your country.'), false);
});

const clean: TranscriptFacts = {
  acceptedTemperatures: [0, 0.2, 0],
  requestedTemperature: 0,
  requestedLanguage: 'auto',
  language: 'en',
  languageProbability: 0.97,
};

test('a clean transcript has no warnings', () => {
  assert.deepEqual(transcriptWarnings(clean), []);
  assert.deepEqual(transcriptWarnings({ ...clean, speakersFound: 2, speakersRequested: { numSpeakers: 2 } }), []);
  // A given language is not a detection.
  assert.deepEqual(transcriptWarnings({ ...clean, requestedLanguage: 'en', languageProbability: 0 }), []);
  // A high temperature the caller asked for is not a fallback.
  assert.deepEqual(transcriptWarnings({ ...clean, acceptedTemperatures: [0.6, 0.6], requestedTemperature: 0.6 }), []);
});

test('warnings: no speech, unsure language detection, chunks decoded only after fallback, fewer speakers than asked', () => {
  assert.deepEqual(transcriptWarnings({ ...clean, acceptedTemperatures: [], languageProbability: 0 }), [
    'No speech was detected: the transcript is empty.',
  ]);
  const [language] = transcriptWarnings({ ...clean, language: 'pt', languageProbability: 0.31 });
  assert.match(language!, /low confidence \('pt', probability 0\.31\)/);
  const [fallback] = transcriptWarnings({ ...clean, acceptedTemperatures: [0, 0.6, 1] });
  assert.match(fallback!, /^2 of 3 speech chunks .* unreliable/);
  const [speakers] = transcriptWarnings({ ...clean, speakersFound: 2, speakersRequested: { numSpeakers: 4 } });
  assert.match(speakers!, /^4 speakers were asked for, but only 2/);
  assert.equal(transcriptWarnings({ ...clean, speakersFound: 1, speakersRequested: { minSpeakers: 2 } }).length, 1);
  const [keyterms] = transcriptWarnings({ ...clean, keytermsOmittedFromPrompt: 12 });
  assert.match(keyterms!, /^12 key terms .* did not fit in Whisper's prompt/);
});

/** A chunk of two pieces: original 10-20 s, then 25-35 s (the 5 s between them removed), 20 s long. */
const twoPieces: SpeechChunk = {
  pieces: [
    { chunkStartSeconds: 0, originalStartSeconds: 10, durationSeconds: 10 },
    { chunkStartSeconds: 10, originalStartSeconds: 25, durationSeconds: 10 },
  ],
  originalStartSeconds: 10,
  originalEndSeconds: 35,
  durationSeconds: 20,
};
/** A segment with one word per [start, end] pair (chunk seconds). */
const segmentOf = (...spans: Array<[number, number]>): RecognizedSegment => ({
  startSeconds: spans[0]![0],
  endSeconds: spans.at(-1)![1],
  text: ' words',
  averageLogProbability: -0.2,
  noSpeechProbability: 0,
  words: spans.map(([startSeconds, endSeconds]) => ({ text: ' w', startSeconds, endSeconds, probability: 0.9 })),
});

test('speech that no word touches is decoded again, padded up to the words around it; short stretches and spoken ones are not', () => {
  // Words at original 10.5-11, 12.5-13, 27-28 and 28-29.5; VAD speech at 10.5-13 (said), 14-17 (skipped), 18-18.6 (too short) and 27-30 (said).
  const segments = [segmentOf([0.5, 1], [2.5, 3]), segmentOf([12, 13], [13, 15])];
  const speech = [
    { startSeconds: 10.5, endSeconds: 13 },
    { startSeconds: 14, endSeconds: 17 },
    { startSeconds: 18, endSeconds: 18.6 },
    { startSeconds: 27, endSeconds: 30 },
  ];
  // 1.5 s of padding before the stretch stops at the last word's end (13), 0.4 s after it.
  assert.deepEqual(skippedSpeech(twoPieces, segments, speech), [{ startSeconds: 13, endSeconds: 17.4 }]);
  // A word's end is capped as in the transcript (at most 1.5 s): a last word that whisper stretched over the skipped
  // sentence does not hide it.
  assert.deepEqual(skippedSpeech(twoPieces, [segmentOf([0.5, 1], [2, 8])], speech.slice(0, 2)), [{ startSeconds: 13.5, endSeconds: 17.4 }]);
  assert.deepEqual(skippedSpeech(twoPieces, [segmentOf([0.5, 1], [4.5, 5])], speech.slice(0, 2)), []);
});

test('skipped stretches whose padded ranges overlap are decoded as one; speech outside the chunk is left to its own chunk', () => {
  const speech = [
    { startSeconds: 14, endSeconds: 16 },
    { startSeconds: 16.5, endSeconds: 18 },
    { startSeconds: 33, endSeconds: 40 },
  ];
  assert.deepEqual(skippedSpeech(twoPieces, [segmentOf([0.5, 1])], speech), [
    { startSeconds: 12.5, endSeconds: 18.4 },
    { startSeconds: 31.5, endSeconds: 35 },
  ]);
  assert.deepEqual(skippedSpeech(twoPieces, [segmentOf([0.5, 1])], [{ startSeconds: 34.5, endSeconds: 40 }]), []);
});

test('recovered text is kept when whisper is sure of it and the chunk does not already say it', () => {
  const chunkSegments = [{ ...segmentOf([0, 1]), text: ' It was my reports from the North, which chiefly induced people to buy.' }];
  const recovered = (text: string, averageLogProbability = -0.4, noSpeechProbability = 0.01): RecognizedSegment => ({
    ...segmentOf([0, 1]),
    text,
    averageLogProbability,
    noSpeechProbability,
  });
  assert.equal(isRecoveredSpeech(recovered(' She had your dark suit in greasy wash water all year.'), chunkSegments), true);
  // Already in the chunk (case and punctuation aside): a stretch that only looked skipped.
  assert.equal(isRecoveredSpeech(recovered(' it was my reports from the north which chiefly induced people to buy'), chunkSegments), false);
  assert.equal(isRecoveredSpeech(recovered(' Thank you.', -1.3), chunkSegments), false);
  assert.equal(isRecoveredSpeech(recovered(' Thank you.', -0.5, 0.8), chunkSegments), false);
  assert.equal(isRecoveredSpeech({ ...recovered(' '), words: [] }, chunkSegments), false);
});

test('a segment is split between the two words where recovered speech starts', () => {
  // Original 10.5 "his", 11 "gospel.", 14.5 "It", 14.8 "was": recovered speech starts at 12.
  const segment = { ...segmentOf([0.5, 1], [1, 1.5], [4.5, 4.8], [4.8, 5]), text: ' his gospel. It was' };
  segment.words = segment.words.map((w, i) => ({ ...w, text: [' his', ' gospel.', ' It', ' was'][i]! }));
  const parts = splitAt(twoPieces, [segment], [12]);
  assert.deepEqual(
    parts.map((p) => [p.text, p.startSeconds, p.endSeconds]),
    [
      [' his gospel.', 0.5, 4.5],
      [' It was', 4.5, 5],
    ],
  );
  assert.deepEqual(splitAt(twoPieces, [segment], [30]), [segment]);
  assert.deepEqual(splitAt(twoPieces, [segment], []), [segment]);
});

test('a chunk whose DTW stacked many words at one instant has no skipped speech: its word times are not evidence', () => {
  // Speech at original 14-17 (chunk 4-7) without words; one word in ten may share its start with the one before.
  const speech = [{ startSeconds: 14, endSeconds: 17 }];
  const fine = segmentOf([0.5, 1], [1, 1.5], [1.5, 2], [2, 2.5], [2.5, 3], [3, 3.5], [3.5, 3.8], [8, 8], [8, 8], [8.5, 9], [9, 9.5]);
  assert.equal(skippedSpeech(twoPieces, [fine], speech).length, 1);
  const stacked = segmentOf([0.5, 1], [1, 1.5], [1.5, 2], [2, 2.5], [2.5, 3], [8, 8], [8, 8], [8, 8], [8, 8], [8.5, 9], [9, 9.5]);
  assert.deepEqual(skippedSpeech(twoPieces, [stacked], speech), []);
});
