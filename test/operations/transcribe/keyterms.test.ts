import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { VoxError } from '../../../src/core/errors.js';
import type { TranscriptSegment } from '../../../src/operations/transcribe/formats.js';
import {
  decodingPrompt,
  estimatedTokens,
  findKeyterms,
  parseKeyterms,
  promptTokenBudget,
  repeatsItself,
  snapKeyterms,
} from '../../../src/operations/transcribe/keyterms.js';

/** One segment of words (leading spaces as Whisper gives them), 0.5 s each, with the given confidences (default 0.5). */
function segment(words: string[], confidences: number[] = []): TranscriptSegment {
  const list = words.map((word, i) => ({ word, start: i * 0.5, end: i * 0.5 + 0.5, confidence: confidences[i] ?? 0.5, speaker: null }));
  return {
    id: 0,
    start: 0,
    end: words.length * 0.5,
    text: words.join('').trim(),
    speaker: null,
    confidence: 0.5,
    words: list,
    avg_logprob: -0.3,
    no_speech_prob: 0,
    temperature: 0,
  };
}

describe('keyterms', () => {
  test('parsed from a repeated field, a JSON array or a comma list; blanks and repeats dropped', () => {
    assert.deepEqual(parseKeyterms(['Quilter', ' wash  water ', 'quilter', '']), ['Quilter', 'wash water']);
    assert.deepEqual(parseKeyterms('["Kubernetes", "Dr. Nguyen, MD"]'), ['Kubernetes', 'Dr. Nguyen, MD']);
    assert.deepEqual(parseKeyterms('Kubernetes, PostgreSQL,,OAuth'), ['Kubernetes', 'PostgreSQL', 'OAuth']);
    assert.deepEqual(parseKeyterms(undefined), []);
  });

  test('more than 100, one over 50 characters, or bad JSON -> invalid_request naming keyterms', () => {
    for (const value of [JSON.stringify(Array.from({ length: 101 }, (_, i) => `term${i}`)), 'x'.repeat(51), '[1, 2]', '["open']) {
      assert.throws(
        () => parseKeyterms(value),
        (error: unknown) => error instanceof VoxError && error.code === 'invalid_request' && error.param === 'keyterms',
        value,
      );
    }
    assert.equal(parseKeyterms(Array.from({ length: 100 }, (_, i) => `term${i}`)).length, 100);
  });

  test('prompt: unchanged without terms; terms first within half the budget, then the end of the context', () => {
    assert.equal(decodingPrompt([], 'Hint.', 'x'.repeat(1000)).prompt, `Hint. ${'x'.repeat(1000)}`.slice(-800));
    const { prompt, omittedKeyterms } = decodingPrompt(['Quilter', 'Kubernetes'], 'Hint.', 'the previous chunk said this');
    assert.equal(prompt, 'Quilter, Kubernetes Hint. the previous chunk said this');
    assert.equal(omittedKeyterms, 0);
    const many = Array.from({ length: 100 }, (_, i) => `Keyterm number ${i}`);
    const long = decodingPrompt(many, undefined, 'previous text '.repeat(100));
    assert.ok(long.omittedKeyterms > 0 && long.prompt.startsWith('Keyterm number 0, Keyterm number 1,'));
    assert.ok(estimatedTokens(long.prompt) <= promptTokenBudget, String(estimatedTokens(long.prompt)));
    assert.match(long.prompt, /previous text$/);
  });

  test('snap: a near miss becomes the term (spelling, leading space, trailing punctuation, times kept); exact words stay', () => {
    const [snapped] = snapKeyterms(
      [segment([' Mr.', ' Quilder', ' is', ' the', ' apostle', ' of', ' Kubernetis.'])],
      ['Quilter', 'Kubernetes'],
      'en',
    );
    assert.equal(snapped!.text, 'Mr. Quilter is the apostle of Kubernetes.');
    assert.deepEqual(
      snapped!.words.map((w) => w.word),
      [' Mr.', ' Quilter', ' is', ' the', ' apostle', ' of', ' Kubernetes.'],
    );
    // A phrase split differently by the model: two words into one term, times spanning both.
    const [joined] = snapKeyterms([segment([' Post', ' gres', ' QL', ' is', ' fast'])], ['PostgreSQL'], 'en');
    assert.equal(joined!.text, 'PostgreSQL is fast');
    assert.deepEqual([joined!.words[0]!.start, joined!.words[0]!.end], [0, 1.5]);
  });

  test('snap is conservative: short terms only by spelling, confident words kept, far words kept', () => {
    // 'Rust' is under 5 letters: 'just' is not an edit away from it as far as snapping goes.
    assert.equal(snapKeyterms([segment([' just', ' do', ' it'])], ['Rust'], 'en')[0]!.text, 'just do it');
    // Case and accents alone: taken even from a confident word.
    assert.equal(
      snapKeyterms([segment([' the', ' pokemon', ' game'], [0.99, 0.99, 0.99])], ['Pokémon'], 'en')[0]!.text,
      'the Pokémon game',
    );
    // One edit, but Whisper was sure of the word: kept.
    assert.equal(snapKeyterms([segment([' quilted', ' blanket'], [0.97, 0.95])], ['Quilter'], 'en')[0]!.text, 'quilted blanket');
    assert.equal(snapKeyterms([segment([' quilted', ' blanket'], [0.4, 0.95])], ['Quilter'], 'en')[0]!.text, 'Quilter blanket');
    // Two edits in a 7-letter term: too far.
    assert.equal(snapKeyterms([segment([' Quillen', ' said'])], ['Quilter'], 'en')[0]!.text, 'Quillen said');
  });

  test('a chunk said twice over is told from one that is not', () => {
    assert.ok(repeatsItself('The horizon seems extremely distant. The horizon seems extremely distant.'));
    assert.ok(repeatsItself('换一首歌, 换一首歌,'));
    assert.ok(repeatsItself('首先,商场,业绩,业绩,业绩'));
    assert.ok(repeatsItself('끈은 이리저리 피하면서 길 한 옆으로 걸어갔다 그는 이리저리 피하면서 길 한 옆으로 걸어갔다'));
    assert.ok(!repeatsItself('The horizon seems extremely distant.'));
    // Short repeats inside a longer text are speech ("that that", "no no").
    assert.ok(!repeatsItself('I know that that is true, no no.'));
    assert.ok(!repeatsItself('甚至出现交易几乎停滞的情况'));
  });

  test('a term does not span a clause break', () => {
    assert.equal(snapKeyterms([segment(['咱们', '商', '场', ',', '商', '场', ','])], ['商场'], 'zh')[0]!.text, '咱们商场,商场,');
    assert.equal(snapKeyterms([segment([' Post,', ' gres', ' QL'])], ['PostgreSQL'], 'en')[0]!.text, 'Post, gres QL');
  });

  test('snap in Chinese compares toneless pinyin: a homophone written with other characters becomes the term', () => {
    const [snapped] = snapKeyterms([segment(['交易', '几乎', '停止', '的', '情况'])], ['停滞'], 'zh');
    assert.equal(snapped!.text, '交易几乎停滞的情况');
    // Another language: the same characters are not read as Mandarin.
    assert.equal(snapKeyterms([segment(['停止'])], ['停滞'], 'ja')[0]!.text, '停止');
  });

  test('found: whole words in spaced scripts, inside words in Chinese; counts and times', () => {
    const segments = [segment([' The', ' wizard', ' met', ' a', ' Wizard,', ' at', ' a', ' party.']), segment(['销售额', '很', '好'])];
    const found = findKeyterms(segments, ['wizard', 'art', '销售', 'absent', 'at a party']);
    assert.deepEqual(
      found.map((k) => [k.term, k.count]),
      [
        ['wizard', 2],
        ['销售', 1],
        ['at a party', 1],
      ],
    );
    assert.deepEqual(found[0]!.occurrences, [
      { start: 0.5, end: 1 },
      { start: 2, end: 2.5 },
    ]);
    assert.deepEqual(found[2]!.occurrences, [{ start: 2.5, end: 4 }]);
  });
});
