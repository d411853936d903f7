/**
 * Voice activity detection with Silero VAD (16 kHz, 512-sample windows, stateful ONNX).
 * Probabilities are computed incrementally so long inputs stream through in blocks; segmentation follows
 * Silero's reference rules (threshold with hysteresis, minimum speech/silence durations, padding).
 */
import type * as Ort from 'onnxruntime-node';

export const vadSampleRate = 16000;
export const vadWindowSamples = 512;
const contextSamples = 64;

export interface SpeechSegment {
  startSeconds: number;
  endSeconds: number;
}

export interface SegmentationOptions {
  threshold: number;
  minSpeechSeconds: number;
  minSilenceSeconds: number;
  /** Context kept before and after each speech region (never into the neighbour's). */
  padBeforeSeconds: number;
  padAfterSeconds: number;
  /** Longer speech is split at the deepest pause (so ASR chunks stay bounded). */
  maxSpeechSeconds: number;
}

export const defaultSegmentation: SegmentationOptions = {
  threshold: 0.5,
  minSpeechSeconds: 0.25,
  minSilenceSeconds: 0.1,
  padBeforeSeconds: 0.03,
  padAfterSeconds: 0.03,
  maxSpeechSeconds: Infinity,
};

export class SileroVad {
  private constructor(
    private readonly ort: typeof Ort,
    private readonly session: Ort.InferenceSession,
  ) {}

  static async load(modelPath: string, threads = 1): Promise<SileroVad> {
    // Loaded with the model: importing this module (for its segmentation functions) does not map onnxruntime.
    const ort = await import('onnxruntime-node');
    const session = await ort.InferenceSession.create(modelPath, {
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
    });
    return new SileroVad(ort, session);
  }

  /** A stateful stream: push 16 kHz mono blocks of any length, get one probability per 512-sample window. */
  stream(): VadStream {
    return new VadStream(this.ort, this.session);
  }

  /** Probabilities for a whole signal (last partial window zero-padded). */
  async probabilities(samples: Float32Array, signal?: AbortSignal): Promise<Float32Array> {
    const stream = this.stream();
    const probabilities = await stream.push(samples, signal);
    const tail = await stream.flush();
    const all = new Float32Array(probabilities.length + tail.length);
    all.set(probabilities);
    all.set(tail, probabilities.length);
    return all;
  }

  async close(): Promise<void> {
    await this.session.release();
  }
}

export class VadStream {
  private state: Float32Array = new Float32Array(2 * 128);
  private readonly window = new Float32Array(contextSamples + vadWindowSamples);
  private pending: Float32Array = new Float32Array(0);
  private readonly sampleRateTensor: Ort.Tensor;

  constructor(
    private readonly ort: typeof Ort,
    private readonly session: Ort.InferenceSession,
  ) {
    this.sampleRateTensor = new ort.Tensor('int64', BigInt64Array.from([BigInt(vadSampleRate)]), []);
  }

  async push(samples: Float32Array, signal?: AbortSignal): Promise<Float32Array> {
    const joined = new Float32Array(this.pending.length + samples.length);
    joined.set(this.pending);
    joined.set(samples, this.pending.length);
    const windows = Math.floor(joined.length / vadWindowSamples);
    const probabilities = new Float32Array(windows);
    for (let w = 0; w < windows; w++) {
      if (w % 256 === 0) signal?.throwIfAborted();
      probabilities[w] = await this.step(joined.subarray(w * vadWindowSamples, (w + 1) * vadWindowSamples));
    }
    this.pending = joined.slice(windows * vadWindowSamples);
    return probabilities;
  }

  async flush(): Promise<Float32Array> {
    if (this.pending.length === 0) return new Float32Array(0);
    const last = new Float32Array(vadWindowSamples);
    last.set(this.pending);
    this.pending = new Float32Array(0);
    return Float32Array.of(await this.step(last));
  }

  private async step(chunk: Float32Array): Promise<number> {
    // The model sees the last 64 samples of the previous window as context, as in Silero's reference code.
    this.window.copyWithin(0, vadWindowSamples);
    this.window.set(chunk, contextSamples);
    const outputs = await this.session.run({
      input: new this.ort.Tensor('float32', this.window.slice(), [1, this.window.length]),
      state: new this.ort.Tensor('float32', this.state, [2, 1, 128]),
      sr: this.sampleRateTensor,
    });
    this.state = outputs.stateN!.data as Float32Array;
    return (outputs.output!.data as Float32Array)[0]!;
  }
}

/** Speech segments from window probabilities. */
export function speechSegments(
  probabilities: Float32Array,
  totalSeconds: number,
  options: Partial<SegmentationOptions> = {},
): SpeechSegment[] {
  const o = { ...defaultSegmentation, ...options };
  const windowSeconds = vadWindowSamples / vadSampleRate;
  const negativeThreshold = Math.max(o.threshold - 0.15, 0.01);
  const raw: Array<{ start: number; end: number }> = [];
  let inSpeech = false;
  let start = 0;
  let silenceStart: number | null = null;
  for (let i = 0; i < probabilities.length; i++) {
    const p = probabilities[i]!;
    const t = i * windowSeconds;
    if (p >= o.threshold) {
      silenceStart = null;
      if (!inSpeech) {
        inSpeech = true;
        start = t;
      }
    } else if (inSpeech && p < negativeThreshold) {
      silenceStart ??= t;
      if (t + windowSeconds - silenceStart >= o.minSilenceSeconds) {
        raw.push({ start, end: silenceStart });
        inSpeech = false;
        silenceStart = null;
      }
    }
  }
  if (inSpeech) raw.push({ start, end: Math.min(probabilities.length * windowSeconds, totalSeconds) });

  const kept = raw.filter((s) => s.end - s.start >= o.minSpeechSeconds);
  const split = kept.flatMap((s) => splitLong(s, probabilities, windowSeconds, o.maxSpeechSeconds));
  // Pad each side, but never into the neighbour: split the gap between them instead.
  return split.map((s, i) => {
    const previous = split[i - 1];
    const next = split[i + 1];
    const startSeconds = Math.max(
      0,
      previous ? Math.max(s.start - o.padBeforeSeconds, (previous.end + s.start) / 2) : s.start - o.padBeforeSeconds,
    );
    const endSeconds = Math.min(
      totalSeconds,
      next ? Math.min(s.end + o.padAfterSeconds, (s.end + next.start) / 2) : s.end + o.padAfterSeconds,
    );
    return { startSeconds, endSeconds };
  });
}

/** Splits a segment longer than maxSeconds at its least speech-like window, recursively. */
function splitLong(
  segment: { start: number; end: number },
  probabilities: Float32Array,
  windowSeconds: number,
  maxSeconds: number,
): Array<{ start: number; end: number }> {
  if (segment.end - segment.start <= maxSeconds) return [segment];
  const margin = Math.min(maxSeconds / 4, (segment.end - segment.start) / 4);
  const from = Math.ceil((segment.start + margin) / windowSeconds);
  const to = Math.floor(Math.min(segment.end - margin, segment.start + maxSeconds) / windowSeconds);
  let cut = to;
  for (let i = from; i <= to; i++) if (probabilities[i]! < probabilities[cut]!) cut = i;
  const cutSeconds = cut * windowSeconds;
  return [
    ...splitLong({ start: segment.start, end: cutSeconds }, probabilities, windowSeconds, maxSeconds),
    ...splitLong({ start: cutSeconds, end: segment.end }, probabilities, windowSeconds, maxSeconds),
  ];
}

/** Window probabilities with the windows that lie wholly inside `spans` (seconds) set to 0: not speech, whatever the VAD heard. */
export function silencedIn(probabilities: Float32Array, spans: ReadonlyArray<SpeechSegment>): Float32Array {
  const windowSeconds = vadWindowSamples / vadSampleRate;
  const out = probabilities.slice();
  for (const span of spans) {
    const to = Math.min(out.length, Math.floor(span.endSeconds / windowSeconds));
    for (let i = Math.max(0, Math.ceil(span.startSeconds / windowSeconds)); i < to; i++) out[i] = 0;
  }
  return out;
}
