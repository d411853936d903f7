/** Diarization error rate, frame-based (10 ms) with a no-score collar around reference boundaries and an optional UEM. */

export interface Turn {
  speaker: string;
  startSeconds: number;
  endSeconds: number;
}

export function parseRttm(text: string): Turn[] {
  return text
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((f) => f[0] === 'SPEAKER')
    .map((f) => ({ speaker: f[7]!, startSeconds: Number(f[3]), endSeconds: Number(f[3]) + Number(f[4]) }));
}

export function parseUem(text: string): Array<[number, number]> {
  return text
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length >= 4)
    .map((f) => [Number(f[2]), Number(f[3])]);
}

export interface DerResult {
  der: number;
  missSeconds: number;
  falseAlarmSeconds: number;
  confusionSeconds: number;
  referenceSeconds: number;
}

const frameSeconds = 0.01;

function framesOf(turns: Turn[], frames: number): Map<string, Uint8Array> {
  const bySpeaker = new Map<string, Uint8Array>();
  for (const turn of turns) {
    const active = bySpeaker.get(turn.speaker) ?? new Uint8Array(frames);
    for (
      let f = Math.max(0, Math.round(turn.startSeconds / frameSeconds));
      f < Math.min(frames, Math.round(turn.endSeconds / frameSeconds));
      f++
    )
      active[f] = 1;
    bySpeaker.set(turn.speaker, active);
  }
  return bySpeaker;
}

/** Best one-to-one mapping of hypothesis to reference speakers by overlap (exhaustive for small sets, greedy beyond). */
function mapSpeakers(overlap: number[][]): Map<number, number> {
  const refs = overlap.length;
  const hyps = overlap[0]?.length ?? 0;
  let best = new Map<number, number>();
  let bestScore = -1;
  if (refs <= 7 && hyps <= 7) {
    const search = (h: number, used: Set<number>, mapping: Map<number, number>, score: number): void => {
      if (h === hyps) {
        if (score > bestScore) {
          bestScore = score;
          best = new Map(mapping);
        }
        return;
      }
      search(h + 1, used, mapping, score);
      for (let r = 0; r < refs; r++) {
        if (used.has(r)) continue;
        used.add(r);
        mapping.set(h, r);
        search(h + 1, used, mapping, score + overlap[r]![h]!);
        mapping.delete(h);
        used.delete(r);
      }
    };
    search(0, new Set(), new Map(), 0);
    return best;
  }
  const pairs = overlap.flatMap((row, r) => row.map((value, h) => ({ r, h, value }))).sort((a, b) => b.value - a.value);
  const usedR = new Set<number>();
  for (const { r, h, value } of pairs) {
    if (value <= 0 || usedR.has(r) || best.has(h)) continue;
    best.set(h, r);
    usedR.add(r);
  }
  return best;
}

export function diarizationErrorRate(
  reference: Turn[],
  hypothesis: Turn[],
  options: { collarSeconds: number; uem?: Array<[number, number]>; durationSeconds: number },
): DerResult {
  const frames = Math.ceil(options.durationSeconds / frameSeconds);
  const scored = new Uint8Array(frames);
  for (const [start, end] of options.uem ?? [[0, options.durationSeconds]]) {
    for (let f = Math.round(start / frameSeconds); f < Math.min(frames, Math.round(end / frameSeconds)); f++) scored[f] = 1;
  }
  const collarFrames = Math.round(options.collarSeconds / frameSeconds);
  for (const turn of reference) {
    for (const edge of [turn.startSeconds, turn.endSeconds]) {
      const centre = Math.round(edge / frameSeconds);
      for (let f = Math.max(0, centre - collarFrames); f < Math.min(frames, centre + collarFrames); f++) scored[f] = 0;
    }
  }
  const ref = [...framesOf(reference, frames).values()];
  const hyp = [...framesOf(hypothesis, frames).values()];
  const overlap = ref.map((r) =>
    hyp.map((h) => {
      let n = 0;
      for (let f = 0; f < frames; f++) if (scored[f] && r[f] && h[f]) n++;
      return n;
    }),
  );
  const mapping = mapSpeakers(overlap);
  let miss = 0;
  let falseAlarm = 0;
  let confusion = 0;
  let total = 0;
  for (let f = 0; f < frames; f++) {
    if (!scored[f]) continue;
    const nRef = ref.reduce((n, r) => n + r[f]!, 0);
    const nHyp = hyp.reduce((n, h) => n + h[f]!, 0);
    let correct = 0;
    hyp.forEach((h, hi) => {
      const r = mapping.get(hi);
      if (h[f] && r !== undefined && ref[r]![f]) correct++;
    });
    total += nRef;
    miss += Math.max(0, nRef - nHyp);
    falseAlarm += Math.max(0, nHyp - nRef);
    confusion += Math.min(nRef, nHyp) - correct;
  }
  const seconds = (n: number): number => n * frameSeconds;
  return {
    der: total === 0 ? 0 : (miss + falseAlarm + confusion) / total,
    missSeconds: seconds(miss),
    falseAlarmSeconds: seconds(falseAlarm),
    confusionSeconds: seconds(confusion),
    referenceSeconds: seconds(total),
  };
}
