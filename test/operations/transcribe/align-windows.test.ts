/** Long forced alignment's cuts (issue 38): windows at pauses, and how much of the text a window's transcript covers. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { alignmentWindows, coveredWords } from '../../../src/operations/transcribe/align.js';

describe('alignmentWindows', () => {
  test('speech segments grouped while they span at most the window; a window runs from its first to its last', () => {
    const segments = [
      { startSeconds: 0, endSeconds: 8 },
      { startSeconds: 9, endSeconds: 20 },
      { startSeconds: 21, endSeconds: 26 },
      { startSeconds: 60, endSeconds: 70 },
    ];
    assert.deepEqual(alignmentWindows(segments, 25), [
      { startSeconds: 0, endSeconds: 20 },
      { startSeconds: 21, endSeconds: 26 },
      { startSeconds: 60, endSeconds: 70 },
    ]);
  });
});

describe('coveredWords', () => {
  const text = 'Mr. Quilter is the apostle of the middle classes. And so my fellow Americans, ask not'.split(' ');
  test('the words the transcript matches, with misheard ones and a word it missed', () => {
    assert.equal(coveredWords(text, 'Mister Quilter is the apostle of middle classes.'.split(' ')), 9);
  });
  test("words said in place of the text's own stay with the window, up to where the transcript ends", () => {
    assert.equal(coveredWords(text, 'Mr. Quilter is the banana of the purple classes. And so'.split(' ')), 11);
  });
  test('nothing heard covers nothing; words with no letters cost nothing to take along', () => {
    assert.equal(coveredWords(text, []), 0);
    assert.equal(coveredWords(['—', 'Hello', 'world', '…', 'again'], ['hello', 'world']), 4);
  });
});
