/**
 * The independent word times the timing benches (tts-timestamps.ts, forced-alignment.ts) compare against: faster-whisper's
 * word timestamps (CTranslate2, int8, beam 5) on the same Whisper weights, run by hand-installed Python, and the pairing of
 * our words with them in order.
 */
import { execFileSync } from 'node:child_process';

export interface TimedWord {
  word: string;
  start: number;
  end: number;
  confidence?: number;
}

export interface PairedStart {
  word: string;
  voxd: number;
  reference: number;
  difference: number;
}

const referenceScript = `
import json, sys
from faster_whisper import WhisperModel
model = WhisperModel(sys.argv[1], device='cpu', compute_type='int8', cpu_threads=2)
out = {}
for item in json.loads(sys.argv[2]):
    segments, _ = model.transcribe(item['file'], language=item['language'], beam_size=5, word_timestamps=True)
    out[item['file']] = [{'word': w.word, 'start': w.start, 'end': w.end} for s in segments for w in s.words]
print(json.dumps(out))
`;

/** faster-whisper's words of each file, by file. */
export function referenceWordTimes(
  python: string,
  model: string,
  items: Array<{ file: string; language: string }>,
): Record<string, TimedWord[]> {
  const output = execFileSync(python, ['-c', referenceScript, model, JSON.stringify(items)], { encoding: 'utf8', maxBuffer: 1 << 26 });
  return JSON.parse(output.trim().split('\n').at(-1)!) as Record<string, TimedWord[]>;
}

export const bare = (word: string): string => word.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');
export const round = (v: number): number => Math.round(v * 1000) / 1000;
export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.floor(sorted.length / 2)]!;
};

/**
 * Each of our words paired with the next reference word that `same` accepts, in order; words without one are left out.
 * `maxSkip`: how many reference words a pairing may pass over (long files repeat words: a word the reference misses must
 * not pair with the same word minutes later).
 */
export function pairStarts(
  ours: TimedWord[],
  heard: TimedWord[],
  same: (reference: string, word: string) => boolean = (reference, word) => bare(reference) === bare(word),
  maxSkip = Infinity,
): PairedStart[] {
  const pairs: PairedStart[] = [];
  let from = 0;
  for (const w of ours) {
    const j = heard.findIndex((h, k) => k >= from && k <= from + maxSkip && same(h.word, w.word));
    if (j < 0) continue;
    pairs.push({ word: w.word, voxd: w.start, reference: round(heard[j]!.start), difference: round(Math.abs(heard[j]!.start - w.start)) });
    from = j + 1;
  }
  return pairs;
}
