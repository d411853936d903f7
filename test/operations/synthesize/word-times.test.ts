/** Mapping spoken units' times onto written words, and ElevenLabs-style character times (issue 38, point 1). */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { characterAlignment, mapWordTimes, spokenWords } from '../../../src/operations/synthesize/text/word-times.js';

const span = (startSeconds: number, endSeconds: number) => ({ startSeconds, endSeconds });

describe('word times', () => {
  test('equal counts pair one to one; punctuation alone is no word', () => {
    assert.deepEqual(spokenWords('Hello , world!'), ['Hello', 'world!']);
    assert.deepEqual(mapWordTimes(['Hello', 'world!'], [span(0, 0.4), span(0.5, 1)]), [
      { word: 'Hello', startSeconds: 0, endSeconds: 0.4 },
      { word: 'world!', startSeconds: 0.5, endSeconds: 1 },
    ]);
  });

  test('a written word spoken as several takes all their time, in order', () => {
    // "at 3:30 pm" spoken as "at three thirty p m".
    const words = mapWordTimes(['at', '3:30', 'pm'], [span(0, 0.2), span(0.3, 0.6), span(0.7, 1), span(1.1, 1.2), span(1.3, 1.4)], {
      words: [2, 11, 2],
      spans: [2, 5, 6, 1, 1],
    });
    assert.deepEqual(
      words.map((w) => w.word),
      ['at', '3:30', 'pm'],
    );
    assert.deepEqual([words[0]!.startSeconds, words[0]!.endSeconds], [0, 0.2]);
    assert.deepEqual([words[1]!.startSeconds, words[1]!.endSeconds], [0.3, 1]);
    assert.deepEqual([words[2]!.startSeconds, words[2]!.endSeconds], [1.1, 1.4]);
  });

  test('characters share their word’s span; spaces span the gap', () => {
    const alignment = characterAlignment('Hi there', [span(0, 0.2), span(0.3, 0.8)]);
    assert.equal(alignment.characters.join(''), 'Hi there');
    assert.deepEqual(alignment.character_start_times_seconds, [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]);
    assert.deepEqual(alignment.character_end_times_seconds, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]);
  });
});
