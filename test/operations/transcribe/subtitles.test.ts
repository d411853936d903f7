/** The subtitle cue builder behind srt and vtt: line, line-count and duration limits, breaks at words, speakers. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildCues, type CueSource, defaultSubtitleRules, toSrt, toVtt } from '../../../src/operations/transcribe/formats.js';

/** A segment from words given as [text, startSeconds, endSeconds]. */
const segment = (words: Array<[string, number, number]>, speaker: string | null = null): CueSource => ({
  start: words[0]![1],
  end: words.at(-1)![2],
  text: words.map(([w]) => w).join(''),
  speaker,
  words: words.map(([word, start, end]) => ({ word, start, end, speaker })),
});

/** Words spoken evenly from a start time, each `stepSeconds` long. */
const evenly = (text: string, startSeconds: number, stepSeconds: number): Array<[string, number, number]> =>
  text.split(' ').map((w, i) => [` ${w}`, startSeconds + i * stepSeconds, startSeconds + (i + 1) * stepSeconds - 0.05]);

describe('subtitle cues', () => {
  test('a long segment is split within the limits, every cue starting and ending at word times', () => {
    const words = evenly(
      'and so my fellow Americans ask not what your country can do for you ask what you can do for your country and ' +
        'the world will long remember what we say here today because it matters to all of us',
      0.5,
      0.3,
    );
    const cues = buildCues([segment(words)]);
    assert.ok(cues.length >= 3);
    const starts = new Set(words.map(([, s]) => s));
    const ends = new Set(words.map(([, , e]) => e));
    for (const cue of cues) {
      assert.ok(cue.lines.length <= defaultSubtitleRules.maxLines, JSON.stringify(cue));
      for (const line of cue.lines) assert.ok(line.length <= defaultSubtitleRules.maxLineChars, line);
      assert.ok(cue.end - cue.start <= defaultSubtitleRules.maxCueSeconds);
      assert.ok(starts.has(cue.start));
      assert.ok(ends.has(cue.end));
    }
    // Every word once, in order.
    assert.equal(cues.flatMap((c) => c.lines).join(' '), words.map(([w]) => w.trim()).join(' '));
  });

  test('a cue that must be split breaks after punctuation or at a pause rather than at the last word that fits', () => {
    const words: Array<[string, number, number]> = [
      ...evenly('We went to the market early.', 0, 0.3),
      ...evenly('Then we bought bread and cheese and a great many other things for the trip', 1.8, 0.3),
    ];
    const cues = buildCues([segment(words)]);
    assert.equal(cues[0]!.lines.join(' '), 'We went to the market early.');
    assert.equal(cues[1]!.lines[0]!.startsWith('Then'), true);
  });

  test('the limits are the caller’s: one line of 20 characters, at most 2 seconds', () => {
    const words = evenly('one two three four five six seven eight nine ten eleven twelve', 0, 0.4);
    const rules = { maxLineChars: 20, maxLines: 1, maxCueSeconds: 2, minCueSeconds: 0.5 };
    const cues = buildCues([segment(words)], rules);
    for (const cue of cues) {
      assert.equal(cue.lines.length, 1);
      assert.ok(cue.lines[0]!.length <= 20);
      assert.ok(cue.end - cue.start <= 2 + 1e-9);
    }
  });

  test('two lines are balanced rather than a full line and a stub', () => {
    const words = evenly('this sentence is a little too long to fit on a single line', 0, 0.3);
    const [cue] = buildCues([segment(words)]);
    assert.equal(cue!.lines.length, 2);
    assert.ok(Math.abs(cue!.lines[0]!.length - cue!.lines[1]!.length) <= 8, JSON.stringify(cue!.lines));
  });

  test('a change of speaker always starts a new cue, labelled with the name when there is one', () => {
    const first = segment(evenly('Hi.', 0, 0.3), 'SPEAKER_1');
    const second = { ...segment(evenly('Hello there.', 0.4, 0.3), 'SPEAKER_2'), speaker_name: 'Beth' };
    const srt = toSrt([first, second]);
    assert.equal(srt, '1\n00:00:00,000 --> 00:00:00,400\n[SPEAKER_1] Hi.\n\n2\n00:00:00,400 --> 00:00:01,400\n[Beth] Hello there.\n');
  });

  test('a short cue stays up for the minimum time unless the next one starts sooner; a long pause ends a cue', () => {
    const cues = buildCues([
      segment([[' Yes.', 1, 1.2]]),
      segment([
        [' No.', 5, 5.3],
        [' Maybe.', 9, 9.4],
      ]),
    ]);
    assert.deepEqual(
      cues.map((c) => [c.start, c.end, c.lines.join(' ')]),
      [
        [1, 2, 'Yes.'],
        [5, 6, 'No.'],
        [9, 10, 'Maybe.'],
      ],
    );
    const vtt = toVtt([segment([[' Yes.', 1, 1.2]])]);
    assert.equal(vtt, 'WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nYes.\n');
  });

  test('speakers talking at once: each keeps its own cue and the cues come in time order', () => {
    // SPEAKER_1's segment spans SPEAKER_2's reply, with a long pause in it.
    const a = segment(
      [
        [' I think so,', 0, 1.5],
        [' yes.', 3.5, 4],
      ],
      'SPEAKER_1',
    );
    const b = segment([[' Sure.', 2, 2.5]], 'SPEAKER_2');
    const cues = buildCues([a, b]);
    assert.deepEqual(
      cues.map((c) => [c.start, c.lines.join(' ')]),
      [
        [0, '[SPEAKER_1] I think so,'],
        [2, '[SPEAKER_2] Sure.'],
        [3.5, '[SPEAKER_1] yes.'],
      ],
    );
  });

  test('an audio event is a cue of its own, even under speech it spans', () => {
    const music: CueSource = { kind: 'event', start: 0, end: 9, text: '(music)', speaker: null, words: [] };
    const cues = buildCues([music, segment(evenly('He was not an ill-disposed young man.', 0.5, 0.3))]);
    assert.deepEqual(
      cues.map((c) => [c.start, Math.round(c.end * 100) / 100, c.lines.join(' ')]),
      [
        [0, 9, '(music)'],
        [0.5, 2.55, 'He was not an ill-disposed young man.'],
      ],
    );
  });
});
