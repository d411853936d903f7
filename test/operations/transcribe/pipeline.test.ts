/** The pipeline's own logic between chunks. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { conditioningText, transcriptWarnings, type TranscriptFacts } from '../../../src/operations/transcribe/pipeline.js';
import type { ChunkTranscript } from '../../../src/operations/transcribe/transcriber.js';

const chunk = (temperature: number): ChunkTranscript => ({
  language: 'en',
  languageProbability: 1,
  temperature,
  segments: [' Ask not', ' what your country can do.'].map((text) => ({ startSeconds: 0, endSeconds: 1, text, words: [], averageLogProbability: -0.2, noSpeechProbability: 0 })),
});

test('a chunk decoded at a low temperature conditions the next one; one accepted only after fallback to 0.5 or more does not', () => {
  assert.equal(conditioningText(chunk(0)), ' Ask not what your country can do.');
  assert.equal(conditioningText(chunk(0.4)), ' Ask not what your country can do.');
  assert.equal(conditioningText(chunk(0.6)), '');
  assert.equal(conditioningText(chunk(1)), '');
});

const clean: TranscriptFacts = { acceptedTemperatures: [0, 0.2, 0], requestedTemperature: 0, requestedLanguage: 'auto', language: 'en', languageProbability: 0.97 };

test('a clean transcript has no warnings', () => {
  assert.deepEqual(transcriptWarnings(clean), []);
  assert.deepEqual(transcriptWarnings({ ...clean, speakersFound: 2, speakersRequested: { numSpeakers: 2 } }), []);
  // A given language is not a detection.
  assert.deepEqual(transcriptWarnings({ ...clean, requestedLanguage: 'en', languageProbability: 0 }), []);
  // A high temperature the caller asked for is not a fallback.
  assert.deepEqual(transcriptWarnings({ ...clean, acceptedTemperatures: [0.6, 0.6], requestedTemperature: 0.6 }), []);
});

test('warnings: no speech, unsure language detection, chunks decoded only after fallback, fewer speakers than asked', () => {
  assert.deepEqual(transcriptWarnings({ ...clean, acceptedTemperatures: [], languageProbability: 0 }), ['No speech was detected: the transcript is empty.']);
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
