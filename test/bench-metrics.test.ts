import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { chrf, chrfScore, chrfStatistics } from '../bench/lib/chrf.js';
import { diarizationErrorRate } from '../bench/lib/der.js';
import { npmStartEnv } from '../bench/lib/server-process.js';
import { thirdsOf } from '../bench/lib/soak.js';
import { errorRate } from '../bench/lib/wer.js';

describe('benchmark metrics', () => {
  test('WER ignores case and punctuation; CER for Chinese', () => {
    assert.equal(errorRate('Mr. Quilter is here.', 'mr quilter is here', 'en').rate, 0);
    assert.equal(errorRate('a b c d', 'a x c', 'en').errors, 2);
    assert.equal(errorRate('今天天气很好', '今天天汽很好', 'zh').rate, 1 / 6);
  });

  test('DER: perfect, swapped labels, missed speech, collar', () => {
    const ref = [
      { speaker: 'A', startSeconds: 0, endSeconds: 5 },
      { speaker: 'B', startSeconds: 5, endSeconds: 10 },
    ];
    const swapped = [
      { speaker: 'x', startSeconds: 0, endSeconds: 5 },
      { speaker: 'y', startSeconds: 5, endSeconds: 10 },
    ];
    assert.equal(diarizationErrorRate(ref, swapped, { collarSeconds: 0, durationSeconds: 10 }).der, 0);
    const oneSpeaker = [{ speaker: 'x', startSeconds: 0, endSeconds: 10 }];
    assert.ok(Math.abs(diarizationErrorRate(ref, oneSpeaker, { collarSeconds: 0, durationSeconds: 10 }).der - 0.5) < 0.01);
    const late = [
      { speaker: 'x', startSeconds: 0.2, endSeconds: 5 },
      { speaker: 'y', startSeconds: 5, endSeconds: 10 },
    ];
    assert.equal(diarizationErrorRate(ref, late, { collarSeconds: 0.25, durationSeconds: 10 }).der, 0);
    assert.ok(diarizationErrorRate(ref, [], { collarSeconds: 0, durationSeconds: 10 }).der === 1);
  });

  test('chrF: 100 for the reference, 0 with no character in common, whitespace ignored; corpus sums the counts', () => {
    assert.equal(chrf('The weather is nice today.', 'The weather is nice today.'), 100);
    assert.equal(chrf('The weather is nice today.', 'Theweather isnice today.'), 100);
    assert.equal(chrf('abc', 'xyz'), 0);
    const partial = chrf('The weather is nice today.', 'Today is good weather.');
    assert.ok(partial > 20 && partial < 80, String(partial));
    // Recall weighs more than precision (beta 2): a hypothesis missing half scores under one with extra text.
    assert.ok(chrf('abcdefgh', 'abcd') < chrf('abcdefgh', 'abcdefghijklmnop'));
    const corpus = chrfScore([chrfStatistics('abc', 'abc'), chrfStatistics('xyz', 'xyz')]);
    assert.equal(corpus, 100);
  });

  test('soak memory thirds: means of the first, middle and last third, and last over middle', () => {
    const thirds = thirdsOf([1, 1, 1, 2, 2, 2, 3, 3, 3]);
    assert.deepEqual(thirds, { first: 1, middle: 2, last: 3, lastToMiddle: 1.5 });
    // Uneven lengths split at rounded boundaries: [1, 2] [3] [4, 5].
    assert.deepEqual(thirdsOf([1, 2, 3, 4, 5]), { first: 1.5, middle: 3, last: 4.5, lastToMiddle: 1.5 });
    assert.throws(() => thirdsOf([1, 2]));
  });

  test('servers started for tests and benches get the environment npm start sets (MALLOC_ARENA_MAX=2 unless set)', () => {
    assert.equal(npmStartEnv().MALLOC_ARENA_MAX, process.env.MALLOC_ARENA_MAX ?? '2');
  });
});
