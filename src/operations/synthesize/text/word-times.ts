/**
 * Word times of synthesised speech: spoken units with times (an engine's phoneme groups, the normalised words) are
 * mapped onto the words they stand for (normalised words, the words the user wrote). Equal counts pair one to one;
 * otherwise (a number read as several words, espeak-ng joining two words) each side is laid along its share of the
 * text, so every word keeps its place in order.
 */

export interface TimedSpan {
  startSeconds: number;
  endSeconds: number;
}

export interface TimedWord extends TimedSpan {
  word: string;
}

/** Letters, digits and marks: what makes a token spoken rather than punctuation. */
const spoken = /[\p{L}\p{N}\p{M}]/u;

/** The whitespace-separated words of a text that hold something to speak. */
export function spokenWords(text: string): string[] {
  return text.split(/\s+/u).filter((word) => spoken.test(word));
}

/** A word's weight when laid along the text: its spoken characters (at least one, so no word vanishes). */
export const spokenWeight = (word: string): number => Math.max(1, [...word].filter((ch) => spoken.test(ch)).length);

/**
 * Times for `words` from `spans` (in order, not overlapping); with as many spans as words they pair up directly, else
 * both are laid along the text by their weights (words: their spoken characters; spans: equal).
 */
export function mapWordTimes(words: string[], spans: TimedSpan[], weights: { words?: number[]; spans?: number[] } = {}): TimedWord[] {
  if (words.length === 0) return [];
  if (spans.length === 0) return words.map((word) => ({ word, startSeconds: 0, endSeconds: 0 }));
  if (spans.length === words.length)
    return words.map((word, i) => ({ word, startSeconds: spans[i]!.startSeconds, endSeconds: spans[i]!.endSeconds }));
  const spanWeights = weights.spans ?? spans.map(() => 1);
  const spanEnds = cumulative(spanWeights);
  const spanTotal = spanEnds.at(-1)!;
  const wordEnds = cumulative(weights.words ?? words.map(spokenWeight));
  const wordTotal = wordEnds.at(-1)!;
  /** The time at a position along the spans; a position on a boundary belongs to the span after it for a start. */
  const timeAt = (position: number, side: 'start' | 'end'): number => {
    let j = 0;
    while (j < spans.length - 1 && (side === 'start' ? spanEnds[j + 1]! <= position : spanEnds[j + 1]! < position)) j++;
    const span = spans[j]!;
    const within = Math.min(1, Math.max(0, (position - spanEnds[j]!) / Math.max(spanWeights[j]!, 1e-9)));
    return span.startSeconds + within * (span.endSeconds - span.startSeconds);
  };
  return words.map((word, i) => ({
    word,
    startSeconds: timeAt((wordEnds[i]! / wordTotal) * spanTotal, 'start'),
    endSeconds: timeAt((wordEnds[i + 1]! / wordTotal) * spanTotal, 'end'),
  }));
}

/** A piece's words shared among the model runs it is spoken in, by the spoken words of each (exact when the counts agree). */
export function shareWords(words: string[], runGroupCounts: number[]): string[][] {
  const total = runGroupCounts.reduce((a, b) => a + b, 0);
  let before = 0;
  return runGroupCounts.map((count) => {
    const from = Math.round((before / Math.max(total, 1)) * words.length);
    before += count;
    return words.slice(from, Math.round((before / Math.max(total, 1)) * words.length));
  });
}

/** [0, w0, w0 + w1, ...]. */
function cumulative(weights: number[]): number[] {
  const sums = [0];
  for (const weight of weights) sums.push(sums.at(-1)! + weight);
  return sums;
}

/** ElevenLabs' `alignment`: every character of the text with the times of the word it belongs to (spaces: the gap). */
export interface CharacterAlignment {
  characters: string[];
  character_start_times_seconds: number[];
  character_end_times_seconds: number[];
}

/**
 * Character times for `text` whose spoken words (spokenWords(text), in order) have `times`: a word's characters share its
 * span evenly; characters between words span the gap.
 */
export function characterAlignment(text: string, times: TimedSpan[]): CharacterAlignment {
  const alignment: CharacterAlignment = { characters: [], character_start_times_seconds: [], character_end_times_seconds: [] };
  const round = (seconds: number): number => Math.round(seconds * 1000) / 1000;
  let w = 0;
  let gapStart = 0;
  for (const match of text.matchAll(/\S+|\s+/gu)) {
    const token = match[0];
    const characters = [...token];
    const isWord = spoken.test(token) && !/^\s/u.test(token);
    const span: TimedSpan = isWord
      ? (times[w++] ?? { startSeconds: gapStart, endSeconds: gapStart })
      : { startSeconds: gapStart, endSeconds: times[w]?.startSeconds ?? gapStart };
    const step = (span.endSeconds - span.startSeconds) / characters.length;
    for (const [i, ch] of characters.entries()) {
      alignment.characters.push(ch);
      alignment.character_start_times_seconds.push(round(span.startSeconds + i * step));
      alignment.character_end_times_seconds.push(round(span.startSeconds + (i + 1) * step));
    }
    gapStart = Math.max(gapStart, span.endSeconds);
  }
  return alignment;
}
