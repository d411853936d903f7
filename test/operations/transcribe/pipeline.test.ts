/** The pipeline's own logic between chunks. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { conditioningText } from '../../../src/operations/transcribe/pipeline.js';
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
