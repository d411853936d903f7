/**
 * Diarization error rate (NIST md-eval conventions): reference and hypothesis speakers are matched one-to-one to maximise
 * their overlap (Hungarian algorithm), then DER = (missed + false alarm + confusion) / reference speech, scored on a time
 * grid inside the UEM with a no-score collar around every reference boundary. Overlapping speech is scored.
 */

export interface LabelledSegment {
  startSeconds: number;
  endSeconds: number;
  speaker: string;
}

export interface TimeSpan {
  startSeconds: number;
  endSeconds: number;
}

export interface DerResult {
  der: number;
  missSeconds: number;
  falseAlarmSeconds: number;
  confusionSeconds: number;
  referenceSeconds: number;
  /** Hypothesis speaker -> reference speaker of the optimal mapping. */
  mapping: Map<string, string>;
}

/** `SPEAKER <file> <channel> <start> <duration> <NA> <NA> <speaker> ...` lines. */
export function parseRttm(text: string): LabelledSegment[] {
  return text
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields[0] === 'SPEAKER' && fields.length >= 8)
    .map((fields) => {
      const startSeconds = Number(fields[3]);
      return { startSeconds, endSeconds: startSeconds + Number(fields[4]), speaker: fields[7]! };
    });
}

/** `<file> <channel> <start> <end>` lines. */
export function parseUem(text: string): TimeSpan[] {
  return text
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields.length >= 4)
    .map((fields) => ({ startSeconds: Number(fields[2]), endSeconds: Number(fields[3]) }));
}

export function diarizationErrorRate(
  reference: LabelledSegment[],
  hypothesis: LabelledSegment[],
  options: { collarSeconds?: number; uem?: TimeSpan[]; resolutionSeconds?: number } = {},
): DerResult {
  const step = options.resolutionSeconds ?? 0.01;
  const collar = options.collarSeconds ?? 0.25;
  const lastSecond = Math.max(0, ...reference.map((s) => s.endSeconds), ...hypothesis.map((s) => s.endSeconds), ...(options.uem ?? []).map((s) => s.endSeconds));
  const cells = Math.ceil(lastSecond / step);
  const scored = new Uint8Array(cells);
  const mark = (target: Uint8Array, from: number, to: number, value: number): void => {
    for (let c = Math.max(0, Math.round(from / step)); c < Math.min(cells, Math.round(to / step)); c++) target[c] = value;
  };
  for (const span of options.uem ?? [{ startSeconds: 0, endSeconds: lastSecond }]) mark(scored, span.startSeconds, span.endSeconds, 1);
  if (collar > 0) {
    for (const s of reference) {
      mark(scored, s.startSeconds - collar, s.startSeconds + collar, 0);
      mark(scored, s.endSeconds - collar, s.endSeconds + collar, 0);
    }
  }

  const activity = (segments: LabelledSegment[]): { names: string[]; active: Uint8Array[] } => {
    const names = [...new Set(segments.map((s) => s.speaker))];
    const active = names.map(() => new Uint8Array(cells));
    for (const s of segments) mark(active[names.indexOf(s.speaker)]!, s.startSeconds, s.endSeconds, 1);
    return { names, active };
  };
  const ref = activity(reference);
  const hyp = activity(hypothesis);

  const size = Math.max(ref.names.length, hyp.names.length);
  const overlap = Array.from({ length: size }, () => new Array<number>(size).fill(0));
  for (let r = 0; r < ref.names.length; r++) {
    for (let h = 0; h < hyp.names.length; h++) {
      let count = 0;
      for (let c = 0; c < cells; c++) if (scored[c] && ref.active[r]![c] && hyp.active[h]![c]) count++;
      overlap[r]![h] = count;
    }
  }
  const maxOverlap = Math.max(0, ...overlap.flat());
  const assignment = hungarian(overlap.map((row) => row.map((v) => maxOverlap - v)));
  const mapping = new Map<string, string>();
  const hypToRef = new Array<number>(hyp.names.length).fill(-1);
  assignment.forEach((h, r) => {
    if (r < ref.names.length && h < hyp.names.length) {
      hypToRef[h] = r;
      mapping.set(hyp.names[h]!, ref.names[r]!);
    }
  });

  let miss = 0;
  let falseAlarm = 0;
  let confusion = 0;
  let referenceCells = 0;
  for (let c = 0; c < cells; c++) {
    if (!scored[c]) continue;
    let nRef = 0;
    let nHyp = 0;
    let correct = 0;
    for (let r = 0; r < ref.names.length; r++) nRef += ref.active[r]![c]!;
    for (let h = 0; h < hyp.names.length; h++) {
      if (!hyp.active[h]![c]) continue;
      nHyp++;
      const r = hypToRef[h]!;
      if (r >= 0 && ref.active[r]![c]) correct++;
    }
    referenceCells += nRef;
    miss += Math.max(0, nRef - nHyp);
    falseAlarm += Math.max(0, nHyp - nRef);
    confusion += Math.min(nRef, nHyp) - correct;
  }
  const seconds = (n: number): number => n * step;
  return {
    der: referenceCells > 0 ? (miss + falseAlarm + confusion) / referenceCells : 0,
    missSeconds: seconds(miss),
    falseAlarmSeconds: seconds(falseAlarm),
    confusionSeconds: seconds(confusion),
    referenceSeconds: seconds(referenceCells),
    mapping,
  };
}

/** Minimum-cost assignment for a square cost matrix: result[row] = column (Kuhn-Munkres with potentials, O(n^3)). */
export function hungarian(cost: number[][]): number[] {
  const n = cost.length;
  const u = new Array<number>(n + 1).fill(0);
  const v = new Array<number>(n + 1).fill(0);
  const columnRow = new Array<number>(n + 1).fill(0);
  const way = new Array<number>(n + 1).fill(0);
  for (let row = 1; row <= n; row++) {
    columnRow[0] = row;
    let column = 0;
    const minValue = new Array<number>(n + 1).fill(Infinity);
    const used = new Array<boolean>(n + 1).fill(false);
    do {
      used[column] = true;
      const currentRow = columnRow[column]!;
      let delta = Infinity;
      let nextColumn = 0;
      for (let j = 1; j <= n; j++) {
        if (used[j]) continue;
        const reduced = cost[currentRow - 1]![j - 1]! - u[currentRow]! - v[j]!;
        if (reduced < minValue[j]!) {
          minValue[j] = reduced;
          way[j] = column;
        }
        if (minValue[j]! < delta) {
          delta = minValue[j]!;
          nextColumn = j;
        }
      }
      for (let j = 0; j <= n; j++) {
        if (used[j]) {
          u[columnRow[j]!] = u[columnRow[j]!]! + delta;
          v[j] = v[j]! - delta;
        } else minValue[j] = minValue[j]! - delta;
      }
      column = nextColumn;
    } while (columnRow[column] !== 0);
    do {
      const previous = way[column]!;
      columnRow[column] = columnRow[previous]!;
      column = previous;
    } while (column !== 0);
  }
  const result = new Array<number>(n).fill(0);
  for (let j = 1; j <= n; j++) if (columnRow[j]! > 0) result[columnRow[j]! - 1] = j - 1;
  return result;
}
