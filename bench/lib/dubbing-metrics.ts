/** What the dubbing bench measures of a dub against the clip it was made from (bench/dubbing.ts, issue 40). */
import { cosineSimilarity } from '../../src/speakers/embedding.js';
import { siSdr } from './sisdr.js';

/** A line of the clip as built: who speaks and when. */
export interface SourceLine {
  speaker: string;
  startSeconds: number;
  endSeconds: number;
}

/** A line of the dub: where its speech was placed. */
export interface PlacedLine {
  startSeconds: number;
  endSeconds: number;
}

export interface LineMatch {
  /** Index in the source lines. */
  source: number;
  /** Index in the dubbed lines; null when no dubbed line starts within the distance (a missed or merged line). */
  dubbed: number | null;
  /** |dubbed start - source start|, s. */
  onsetErrorSeconds: number | null;
  /**
   * How far the dubbed line runs past the start of the next source line of another speaker, s (0 when it ends before);
   * null when unmatched or no other speaker follows.
   */
  overrunSeconds: number | null;
}

/**
 * Pairs each source line with at most one dubbed line by start time: the closest pairs first (greedy), within
 * `maxDistanceSeconds`. A source line the service merged into the line before it, or did not dub, stays unpaired;
 * a dubbed line with no source line (a source line split in two) is simply not scored.
 */
export function matchLines(source: SourceLine[], dubbed: PlacedLine[], maxDistanceSeconds = 2): LineMatch[] {
  const candidates: Array<{ s: number; d: number; distance: number }> = [];
  for (const [s, line] of source.entries())
    for (const [d, placed] of dubbed.entries()) {
      const distance = Math.abs(placed.startSeconds - line.startSeconds);
      if (distance <= maxDistanceSeconds) candidates.push({ s, d, distance });
    }
  candidates.sort((a, b) => a.distance - b.distance || a.s - b.s || a.d - b.d);
  const bySource = new Map<number, number>();
  const taken = new Set<number>();
  for (const { s, d } of candidates) {
    if (bySource.has(s) || taken.has(d)) continue;
    bySource.set(s, d);
    taken.add(d);
  }
  return source.map((line, s) => {
    const d = bySource.get(s);
    if (d === undefined) return { source: s, dubbed: null, onsetErrorSeconds: null, overrunSeconds: null };
    const placed = dubbed[d]!;
    const nextOther = source.slice(s + 1).find((l) => l.speaker !== line.speaker && l.startSeconds >= line.startSeconds);
    return {
      source: s,
      dubbed: d,
      onsetErrorSeconds: Math.abs(placed.startSeconds - line.startSeconds),
      overrunSeconds: nextOther ? Math.max(0, placed.endSeconds - nextOther.startSeconds) : null,
    };
  });
}

/** The dub without its dubbed speech: what should be the original background. */
export function residual(dub: Float32Array, dubbedDialogue: Float32Array): Float32Array {
  const n = Math.min(dub.length, dubbedDialogue.length);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = dub[i]! - dubbedDialogue[i]!;
  return out;
}

/** Background kept: SI-SDR (dB) of the dub minus its dubbed dialogue against the original music + sfx + ambience. */
export function backgroundSiSdr(dub: Float32Array, dubbedDialogue: Float32Array, background: Float32Array): number {
  return siSdr(residual(dub, dubbedDialogue), background);
}

/**
 * The original dialogue left in the dub (beside the background), in dB relative to its level in the original mixture:
 * the residual is fitted as a * dialogue + b * background (least squares, means removed) and the leak is 20 log10 |a/b|,
 * so 0 dB is the whole original dialogue still there at its level, and a dub scaled as a whole does not change it.
 * A residual with no trace of the dialogue gives a large negative figure (whatever correlation chance leaves).
 */
export function dialogueLeakDb(residualSamples: Float32Array, dialogue: Float32Array, background: Float32Array): number {
  const n = Math.min(residualSamples.length, dialogue.length, background.length);
  const mean = (x: Float32Array) => {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += x[i]!;
    return sum / n;
  };
  const [mr, md, mb] = [mean(residualSamples), mean(dialogue), mean(background)];
  let dd = 0;
  let bb = 0;
  let db = 0;
  let rd = 0;
  let rb = 0;
  for (let i = 0; i < n; i++) {
    const r = residualSamples[i]! - mr;
    const d = dialogue[i]! - md;
    const b = background[i]! - mb;
    dd += d * d;
    bb += b * b;
    db += d * b;
    rd += r * d;
    rb += r * b;
  }
  const determinant = dd * bb - db * db;
  if (determinant <= 0) return NaN;
  const a = (rd * bb - rb * db) / determinant;
  const b = (rb * dd - rd * db) / determinant;
  return 20 * Math.log10(Math.max(Math.abs(a), 1e-12) / Math.max(Math.abs(b), 1e-12));
}

export interface LineSimilarity {
  speaker: string;
  ownSimilarity: number;
  closestOtherSpeaker: { id: string; similarity: number } | null;
  closestBuiltin: { id: string; similarity: number } | null;
  /** Closer to its own speaker than to every other speaker of the clip. */
  closestToOwn: boolean;
  /** Closer to its own speaker than to every built-in voice. */
  closerThanBuiltins: boolean;
}

const closest = (embedding: Float32Array, others: Map<string, Float32Array>): { id: string; similarity: number } | null => {
  let best: { id: string; similarity: number } | null = null;
  for (const [id, other] of others) {
    const similarity = cosineSimilarity(embedding, other);
    if (!best || similarity > best.similarity) best = { id, similarity };
  }
  return best;
};

/** Each dubbed line's embedding against its own original speaker's, the clip's other speakers' and the built-in voices'. */
export function lineSimilarities(
  lines: Array<{ speaker: string; embedding: Float32Array }>,
  speakers: Map<string, Float32Array>,
  builtins: Map<string, Float32Array>,
): LineSimilarity[] {
  return lines.map(({ speaker, embedding }) => {
    const own = speakers.get(speaker);
    if (!own) throw new Error(`no embedding for speaker ${speaker}`);
    const ownSimilarity = cosineSimilarity(embedding, own);
    const closestOtherSpeaker = closest(embedding, new Map([...speakers].filter(([id]) => id !== speaker)));
    const closestBuiltin = closest(embedding, builtins);
    return {
      speaker,
      ownSimilarity,
      closestOtherSpeaker,
      closestBuiltin,
      closestToOwn: !closestOtherSpeaker || ownSimilarity > closestOtherSpeaker.similarity,
      closerThanBuiltins: !closestBuiltin || ownSimilarity > closestBuiltin.similarity,
    };
  });
}
