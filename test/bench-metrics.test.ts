import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { chrf, chrfScore, chrfStatistics } from '../bench/lib/chrf.js';
import { looped, splitAtPause } from '../bench/dubbing-clips.js';
import { diarizationErrorRate } from '../bench/lib/der.js';
import { backgroundSiSdr, dialogueLeakDb, lineSimilarities, matchLines, residual } from '../bench/lib/dubbing-metrics.js';
import { npmStartEnv } from '../bench/lib/server-process.js';
import { random } from '../bench/lib/conversations.js';
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

  test('dubbing onsets: lines paired by start, closest first and one to one; merged lines unpaired; overruns', () => {
    const source = [
      { speaker: 'A', startSeconds: 1, endSeconds: 3 },
      { speaker: 'B', startSeconds: 3.2, endSeconds: 5 },
      { speaker: 'A', startSeconds: 6, endSeconds: 8 },
      { speaker: 'A', startSeconds: 8.3, endSeconds: 9 },
    ];
    // Line 1 runs 0.3 s into B's; B's starts 0.1 s late; the last two source lines were dubbed as one.
    const dubbed = [
      { startSeconds: 1.05, endSeconds: 3.5 },
      { startSeconds: 3.3, endSeconds: 5.2 },
      { startSeconds: 6.2, endSeconds: 9.5 },
    ];
    const matches = matchLines(source, dubbed);
    assert.deepEqual(
      matches.map((m) => m.dubbed),
      [0, 1, 2, null],
    );
    assert.deepEqual(
      matches.map((m) => (m.onsetErrorSeconds === null ? null : Math.round(m.onsetErrorSeconds * 100) / 100)),
      [0.05, 0.1, 0.2, null],
    );
    // A's first line overruns B's start by 0.3 s; B's line ends before A speaks again; A's last lines have no other speaker after.
    assert.deepEqual(
      matches.map((m) => (m.overrunSeconds === null ? null : Math.round(m.overrunSeconds * 100) / 100)),
      [0.3, 0, null, null],
    );
    // One dubbed line between two source lines goes to the closer one only; beyond the distance nothing pairs.
    assert.deepEqual(
      matchLines(source.slice(0, 2), [{ startSeconds: 3, endSeconds: 4 }]).map((m) => m.dubbed),
      [null, 0],
    );
    assert.equal(matchLines(source, [{ startSeconds: 20, endSeconds: 21 }]).filter((m) => m.dubbed !== null).length, 0);
  });

  test('dubbing background: SI-SDR of the dub minus its dialogue; the original dialogue left in it, relative to its level', () => {
    const next = random(7);
    const n = 44100;
    const noise = (gain: number) => Float32Array.from({ length: n }, () => gain * (2 * next() - 1));
    const background = noise(0.1);
    const original = noise(0.3);
    const dubbedDialogue = noise(0.3);
    const dub = (leak: number, scale = 1) => background.map((v, i) => scale * (v + leak * original[i]! + dubbedDialogue[i]!));
    // A perfect dub gives the background back exactly, at any overall scale.
    assert.ok(backgroundSiSdr(dub(0), dubbedDialogue, background) > 60);
    assert.ok(
      backgroundSiSdr(
        dub(0, 0.5),
        dubbedDialogue.map((v) => 0.5 * v),
        background,
      ) > 60,
    );
    // Original dialogue at -20 dB of its level, 3 times the background's RMS: SI-SDR = -20 log10(3 * 0.1) ~ 10.5 dB.
    const leaked = dub(0.1);
    assert.ok(Math.abs(backgroundSiSdr(leaked, dubbedDialogue, background) - 10.46) < 0.3);
    assert.ok(Math.abs(dialogueLeakDb(residual(leaked, dubbedDialogue), original, background) + 20) < 0.3);
    // The same dub scaled as a whole leaks as much.
    const halved = dub(0.1, 0.5);
    assert.ok(
      Math.abs(
        dialogueLeakDb(
          residual(
            halved,
            dubbedDialogue.map((v) => 0.5 * v),
          ),
          original,
          background,
        ) + 20,
      ) < 0.3,
    );
    assert.ok(dialogueLeakDb(residual(dub(0), dubbedDialogue), original, background) < -50);
    assert.ok(Math.abs(dialogueLeakDb(residual(dub(1), dubbedDialogue), original, background)) < 0.1);
  });

  test('dubbing speakers: a line is closest to its own speaker, and closer to it than to every built-in voice', () => {
    const v = (...x: number[]) => Float32Array.from(x);
    const speakers = new Map([
      ['A', v(1, 0, 0)],
      ['B', v(0, 1, 0)],
    ]);
    const builtins = new Map([['af_x', v(0.6, 0, 0.8)]]);
    const [nearA, nearB, nearBuiltin] = lineSimilarities(
      [
        { speaker: 'A', embedding: v(0.9, 0.1, 0.1) },
        { speaker: 'A', embedding: v(0.2, 0.9, 0) },
        { speaker: 'A', embedding: v(0.7, 0, 0.7) },
      ],
      speakers,
      builtins,
    );
    assert.equal(nearA!.closestToOwn, true);
    assert.equal(nearA!.closerThanBuiltins, true);
    assert.equal(nearB!.closestToOwn, false);
    assert.equal(nearB!.closestOtherSpeaker!.id, 'B');
    assert.equal(nearBuiltin!.closestToOwn, true);
    assert.equal(nearBuiltin!.closerThanBuiltins, false);
    assert.equal(nearBuiltin!.closestBuiltin!.id, 'af_x');
  });

  test('dubbing clips: an utterance split at its pause near the middle, not elsewhere; loops cross-faded', () => {
    const rate = 16000;
    const tone = (seconds: number) => Float32Array.from({ length: seconds * rate }, (_, i) => 0.5 * Math.sin(i / 3));
    const silence = (seconds: number) => new Float32Array(seconds * rate);
    const withPause = new Float32Array([...tone(2.5), ...silence(0.3), ...tone(2.5)]);
    const parts = splitAtPause(withPause, rate);
    assert.equal(parts.length, 2);
    for (const part of parts) assert.ok(Math.abs(part.length / rate - 2.5) < 0.05, String(part.length / rate));
    // A pause near the edge (outside 30-70 %), or an utterance under 4 s, stays whole.
    assert.equal(splitAtPause(new Float32Array([...tone(0.8), ...silence(0.3), ...tone(4)]), rate).length, 1);
    assert.equal(splitAtPause(new Float32Array([...tone(1.6), ...silence(0.3), ...tone(1.6)]), rate).length, 1);
    // A constant looped with a cross-fade stays constant (fades sum to one), to the end.
    const out = looped(
      Float32Array.from({ length: 1000 }, () => 1),
      3500,
      100,
    );
    assert.ok(out.every((x) => Math.abs(x - 1) < 1e-6));
  });

  test('servers started for tests and benches get the environment npm start sets (MALLOC_ARENA_MAX=2 unless set)', () => {
    assert.equal(npmStartEnv().MALLOC_ARENA_MAX, process.env.MALLOC_ARENA_MAX ?? '2');
  });
});
