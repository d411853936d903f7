/** The whisper.cpp transcriber's own logic: the run-on check that sends a reduced-context decoding back to the full window. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { looksRunOn } from '../../../src/operations/transcribe/engines/whisper-cpp.js';
import type { WhisperResult } from '../../../src/operations/transcribe/engines/whisper-native.js';

const result = (segments: Array<[number, number, string]>): WhisperResult => ({
  language: 'en',
  languageProbability: 1,
  temperature: 0,
  segments: segments.map(([startSeconds, endSeconds, text]) => ({ startSeconds, endSeconds, text, noSpeechProbability: 0, averageLogProbability: -0.2, tokens: [] })),
});

test('a decoding that fits the audio is accepted, also when its last end time falls in the padding', () => {
  assert.equal(looksRunOn(result([[0, 2.4, ' Hello there.'], [2.6, 5.2, ' General Kenobi.']]), 5.3), false);
  assert.equal(looksRunOn(result([[0, 6, ' Der Raum wurde als Leichenhalle genutzt.']]), 5.26), false);
});

test('a segment repeated (case and spacing aside) is a run-on', () => {
  assert.equal(looksRunOn(result([[0, 5, ' Der Raum wurde genutzt.'], [5, 5.2, 'der raum wurde genutzt. ']]), 5.3), true);
});

test('a segment starting where the audio has ended is a run-on', () => {
  assert.equal(looksRunOn(result([[0, 4.8, ' He began a complaint.'], [4.9, 6.2, ' Against the wizard.']]), 5), true);
});
