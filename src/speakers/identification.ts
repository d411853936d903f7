/**
 * Names diarized speakers after voice profiles: each speaker's clean speech (its longest turns nobody talks over, up to
 * 30 s) is embedded with CAM++ as a whole, the embeddings are compared with the profiles' by cosine similarity, and an
 * optimal one-to-one assignment (Hungarian) pairs speakers with profiles; a pair counts only at or above the threshold.
 * A speaker whose profile is not listed stays anonymous. See bench/speaker-identification.ts for the calibration.
 */
import { isNarrowband } from '../audio/bandwidth.js';
import { decodeBlocks } from '../audio/decode.js';
import type { CamppEncoder } from './campplus.js';
import { camppSampleRate } from './campplus.js';
import { cosineSimilarity } from './embedding.js';
import { concatSamples } from '../audio/waveform.js';

/**
 * CAM++ cosine similarity of two whole-utterance embeddings from which they are one speaker: a diarized speaker and a
 * profile, or a profile's clip and its other clips. Chosen on the eval/vc speakers in generated conversations, midway
 * between the highest similarity to another speaker's profile and the lowest to one's own (bench/speaker-identification.ts,
 * `speaker_identification` in bench/results/transcription.json; leave-one-speaker-out thresholds 0.45-0.50).
 */
export const speakerMatchSimilarity = 0.46;
/**
 * The same for narrowband (telephone) speech compared with profiles passed through the same line. Chosen on 24
 * phone-band conversations with 4-6 s enrolments (bench/phone-band-speakers.ts): midway between the highest similarity
 * to another speaker's profile (0.455) and the lowest to one's own (0.599); leave-one-speaker-out 0.505-0.537. The
 * wideband threshold would sit 0.006 under the lowest own similarity of wideband profiles on phone-band speech.
 */
export const narrowbandSpeakerMatchSimilarity = 0.53;
/** Speech embedded per speaker, longest clean turns first. */
export const maxSpeechSecondsPerSpeaker = 30;
/** Clean pieces shorter than this are not used (too little of the voice). */
const minPieceSeconds = 0.5;

export interface TimeSpan {
  startSeconds: number;
  endSeconds: number;
}

export interface Turn extends TimeSpan {
  speaker: string;
}

export interface SpeakerMatch {
  voiceId: string;
  similarity: number;
}

/**
 * The spans of each speaker's speech to embed: its turns without the time another speaker talks over them, longest
 * first, up to `maxSeconds` (the longest piece cut to fit); a speaker with no clean piece long enough gets its longest
 * turns as they are.
 */
export function speechToEmbed(turns: Turn[], maxSeconds = maxSpeechSecondsPerSpeaker): Map<string, TimeSpan[]> {
  const speakers = [...new Set(turns.map((t) => t.speaker))];
  const chosen = new Map<string, TimeSpan[]>();
  for (const speaker of speakers) {
    const own = turns.filter((t) => t.speaker === speaker);
    const others = turns.filter((t) => t.speaker !== speaker);
    const clean = own.flatMap((turn) => subtract(turn, others)).filter((s) => s.endSeconds - s.startSeconds >= minPieceSeconds);
    const pieces = (clean.length > 0 ? clean : own).sort((a, b) => b.endSeconds - b.startSeconds - (a.endSeconds - a.startSeconds));
    const spans: TimeSpan[] = [];
    let left = maxSeconds;
    for (const piece of pieces) {
      if (left <= 0) break;
      const length = Math.min(left, piece.endSeconds - piece.startSeconds);
      spans.push({ startSeconds: piece.startSeconds, endSeconds: piece.startSeconds + length });
      left -= length;
    }
    chosen.set(
      speaker,
      spans.sort((a, b) => a.startSeconds - b.startSeconds),
    );
  }
  return chosen;
}

/** A span minus the time of other spans. */
function subtract(span: TimeSpan, others: TimeSpan[]): TimeSpan[] {
  let pieces = [span];
  for (const other of others) {
    pieces = pieces.flatMap((p) => {
      if (other.endSeconds <= p.startSeconds || other.startSeconds >= p.endSeconds) return [p];
      return [
        { startSeconds: p.startSeconds, endSeconds: other.startSeconds },
        { startSeconds: other.endSeconds, endSeconds: p.endSeconds },
      ].filter((q) => q.endSeconds > q.startSeconds);
    });
  }
  return pieces;
}

/** The samples of the chosen spans of each speaker, in one pass over a decoded file (16 kHz mono, or one of its channels). */
export async function speechOfSpeakers(
  path: string,
  spans: Map<string, TimeSpan[]>,
  options: { maxAudioSeconds: number; signal?: AbortSignal; channel?: number },
): Promise<Map<string, Float32Array>> {
  const wanted = [...spans].flatMap(([speaker, list]) =>
    list.map((s) => ({ speaker, first: Math.floor(s.startSeconds * camppSampleRate), end: Math.ceil(s.endSeconds * camppSampleRate) })),
  );
  const parts = new Map<string, Float32Array[]>();
  const lastEnd = Math.max(0, ...wanted.map((w) => w.end));
  let offset = 0;
  for await (const block of decodeBlocks(path, {
    sampleRate: camppSampleRate,
    channels: 1,
    ...(options.channel !== undefined ? { channel: options.channel } : {}),
    blockFrames: 10 * camppSampleRate,
    maxSeconds: options.maxAudioSeconds,
    ...(options.signal ? { signal: options.signal } : {}),
  })) {
    const blockEnd = offset + block.length;
    for (const w of wanted) {
      const from = Math.max(w.first, offset);
      const to = Math.min(w.end, blockEnd);
      if (to > from) parts.set(w.speaker, [...(parts.get(w.speaker) ?? []), block.slice(from - offset, to - offset)]);
    }
    offset = blockEnd;
    if (offset >= lastEnd) break;
  }
  return new Map([...parts].map(([speaker, list]) => [speaker, concatSamples(list)]));
}

/** CAM++ embedding of each speaker's speech (speakers with under 0.5 s of it get none). */
export async function embedSpeakers(
  encoder: CamppEncoder,
  speech: Map<string, Float32Array>,
  signal?: AbortSignal,
): Promise<Map<string, Float32Array>> {
  const embeddings = new Map<string, Float32Array>();
  for (const [speaker, samples] of speech) {
    if (samples.length < minPieceSeconds * camppSampleRate) continue;
    embeddings.set(speaker, await encoder.embedUtterance({ samples, sampleRate: camppSampleRate, channels: 1 }, signal));
  }
  return embeddings;
}

/** What the speakers' speech came through: a profile is compared with speech through the same channel. */
export type SpeechChannel = 'wideband' | 'narrowband';

/** The channel of all the speakers' speech taken together (a call is one line). */
export function channelOf(speech: Map<string, Float32Array>): SpeechChannel {
  return isNarrowband(concatSamples([...speech.values()]), camppSampleRate) ? 'narrowband' : 'wideband';
}

export const matchSimilarityOf: Record<SpeechChannel, number> = {
  wideband: speakerMatchSimilarity,
  narrowband: narrowbandSpeakerMatchSimilarity,
};

/**
 * Speakers paired with profiles: the one-to-one assignment with the largest total margin over the threshold, so a
 * speaker never takes a profile another speaker matches better overall; pairs under the threshold are dropped.
 */
export function matchSpeakers(
  speakers: Map<string, Float32Array>,
  profiles: Array<{ voiceId: string; embedding: Float32Array }>,
  threshold = speakerMatchSimilarity,
): Map<string, SpeakerMatch> {
  const ids = [...speakers.keys()];
  const similarity = ids.map((id) => profiles.map((p) => cosineSimilarity(speakers.get(id)!, p.embedding)));
  const assignment = maximumAssignment(similarity.map((row) => row.map((s) => Math.max(0, s - threshold))));
  const matches = new Map<string, SpeakerMatch>();
  assignment.forEach((column, row) => {
    if (column < 0) return;
    const value = similarity[row]![column]!;
    if (value >= threshold) matches.set(ids[row]!, { voiceId: profiles[column]!.voiceId, similarity: value });
  });
  return matches;
}

/**
 * Hungarian algorithm (Kuhn-Munkres with potentials, O(n^2 m)) on a rectangular matrix of non-negative gains: for each
 * row, the column it takes in an assignment of largest total gain, or -1 (more rows than columns).
 */
export function maximumAssignment(gains: number[][]): number[] {
  const rows = gains.length;
  const columns = gains[0]?.length ?? 0;
  if (rows === 0 || columns === 0) return new Array<number>(rows).fill(-1);
  // Square, padded with zero gains; minimise cost = -gain.
  const n = Math.max(rows, columns);
  const cost = (i: number, j: number): number => -(gains[i - 1]?.[j - 1] ?? 0);
  const u = new Float64Array(n + 1);
  const v = new Float64Array(n + 1);
  const owner = new Int32Array(n + 1);
  const way = new Int32Array(n + 1);
  for (let i = 1; i <= n; i++) {
    owner[0] = i;
    let j0 = 0;
    const minimum = new Float64Array(n + 1).fill(Infinity);
    const used = new Uint8Array(n + 1);
    do {
      used[j0] = 1;
      const i0 = owner[j0]!;
      let delta = Infinity;
      let j1 = 0;
      for (let j = 1; j <= n; j++) {
        if (used[j]) continue;
        const reduced = cost(i0, j) - u[i0]! - v[j]!;
        if (reduced < minimum[j]!) {
          minimum[j] = reduced;
          way[j] = j0;
        }
        if (minimum[j]! < delta) {
          delta = minimum[j]!;
          j1 = j;
        }
      }
      for (let j = 0; j <= n; j++) {
        if (used[j]) {
          u[owner[j]!] = u[owner[j]!]! + delta;
          v[j] = v[j]! - delta;
        } else {
          minimum[j] = minimum[j]! - delta;
        }
      }
      j0 = j1;
    } while (owner[j0] !== 0);
    do {
      const j1 = way[j0]!;
      owner[j0] = owner[j1]!;
      j0 = j1;
    } while (j0 !== 0);
  }
  const result = new Array<number>(rows).fill(-1);
  for (let j = 1; j <= columns; j++) if (owner[j]! >= 1 && owner[j]! <= rows) result[owner[j]! - 1] = j - 1;
  return result;
}
