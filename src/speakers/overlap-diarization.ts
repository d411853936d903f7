/**
 * Overlap-aware speaker diarization: pyannote segmentation-3.0 finds speech and how many people talk at once, CAM++
 * embeds 1.5 s windows of that speech, the windows are clustered, and every speech frame takes the speaker of the
 * nearest window; frames where two people talk also get the nearest other speaker.
 *
 * Audio is taken in order, in blocks of any size, and analysed in chunks of about a minute (segmentation windows, the
 * CAM++ network once per chunk, window embeddings pooled from its frames): what is kept per chunk is one byte per
 * 17 ms frame and one 192-float embedding per 0.75 s of speech, so memory stays flat on long recordings.
 */
import { WorkerSession } from '../models/onnx-worker.js';
import { CamppEncoder } from './campplus.js';
import { assignToNearest, centroidsOf, clusterEmbeddings, renumber, smoothLabels, type ClusteringOptions } from './clustering.js';
import { concatSamples } from '../audio/waveform.js';

export const diarizationSampleRate = 16000;
/** segmentation-3.0: 10 s windows, one output frame every 270 samples, the first centred at sample 495.5. */
const segmentationWindowSamples = 160000;
const segmentationFrameSamples = 270;
const segmentationFrameCentre = 495.5;
/** Windows start every second: each frame is judged by up to ten windows. */
const segmentationStepSamples = 16000;
const segmentationBatch = 8;
/** Powerset classes of segmentation-3.0 -> number of local speakers active: nobody, A, B, C, A+B, A+C, B+C. */
const powersetSpeakerCount = [0, 1, 1, 1, 2, 2, 2];
/** Chunks are a whole number of segmentation frames (60.75 s) so frame indices stay global. */
const chunkSamples = segmentationFrameSamples * 3600;
/** The last chunk takes what is left when under this much would remain (never a stub too short to analyse). */
const minTailSamples = segmentationWindowSamples;

/** CAM++ distance threshold for a new speaker, with its 0.5 cosine cut; see bench/diarization.ts for the measurement. */
export const overlapDistanceThreshold = 0.5;

export interface OverlapDiarizationOptions {
  /** Default 1.5 s. */
  windowSeconds?: number;
  /** Default 0.75 s. */
  hopSeconds?: number;
  /**
   * Speech shorter than this gets no window of its own (it still takes the nearest window's speaker). Default 0.3 s: a
   * speaker whose turns come in short bursts between pauses (eval asr deepspeech/ru) otherwise has too few windows to be
   * a cluster and joins the other voice (bench/phone-band-speakers.ts, chosen on its tuning pairs against 0.4).
   */
  minWindowSeconds?: number;
  /** Cosine distance above which clusters are different speakers (when the count is free). */
  distanceThreshold?: number;
  /** A pause of at most this long inside one speaker's speech is part of the turn. Default 0.5 s. */
  bridgeGapSeconds?: number;
  /** A second (overlapping) speaker is taken only from windows at most this far away. Default 5 s. */
  overlapSearchSeconds?: number;
  /**
   * Clustering needs a distance matrix (n^2 floats, twice): past this many windows an evenly spaced subset is clustered
   * and every window joins the nearest cluster centroid, so a long recording's memory stays bounded. Default 2000
   * (25 min of speech; 32 MB).
   */
  maxClusteredWindows?: number;
}

export interface OverlappingTurn {
  speaker: string;
  startSeconds: number;
  endSeconds: number;
}

interface EmbeddedWindow {
  centreSeconds: number;
  embedding: Float32Array;
  /** Segmentation heard two people at once somewhere in the window. */
  mixed: boolean;
}

/** The two models, loaded once and shared by every diarizer (CAM++ also embeds voice profiles). */
export class DiarizationModels {
  private constructor(
    readonly segmentation: WorkerSession,
    readonly encoder: CamppEncoder,
  ) {}

  static async load(paths: { segmentation: string; campplus: string }, options: { threads?: number } = {}): Promise<DiarizationModels> {
    const [segmentation, encoder] = await Promise.all([
      WorkerSession.create('segmentation-3.0', paths.segmentation, {
        intraOpNumThreads: options.threads ?? 1,
        interOpNumThreads: 1,
        executionMode: 'sequential',
        enableCpuMemArena: false,
      }),
      CamppEncoder.load(paths.campplus, options),
    ]);
    return new DiarizationModels(segmentation, encoder);
  }

  async close(): Promise<void> {
    await Promise.all([this.segmentation.close(), this.encoder.close()]);
  }
}

/**
 * One recording's diarization. `addAudio` takes its 16 kHz mono samples from the start, in order; `finish` returns
 * speaker turns, which overlap where two people talk at once. Speakers are SPEAKER_1, SPEAKER_2... by first turn.
 */
export class OverlapDiarizer {
  private pending: Float32Array[] = [];
  private pendingSamples = 0;
  private analysedSamples = 0;
  /** Number of simultaneous speakers per segmentation frame, over the whole recording. */
  private counts = new Uint8Array(4096);
  private frameCount = 0;
  private readonly windows: EmbeddedWindow[] = [];

  constructor(
    private readonly models: DiarizationModels,
    private readonly options: OverlapDiarizationOptions = {},
  ) {}

  async addAudio(samples: Float32Array, signal?: AbortSignal): Promise<void> {
    this.pending.push(samples);
    this.pendingSamples += samples.length;
    while (this.pendingSamples >= chunkSamples + minTailSamples) await this.analyse(this.take(chunkSamples), signal);
  }

  async finish(
    speakers: Pick<ClusteringOptions, 'numSpeakers' | 'minSpeakers' | 'maxSpeakers' | 'distanceThreshold'> = {},
    signal?: AbortSignal,
  ): Promise<OverlappingTurn[]> {
    if (this.pendingSamples > 0) await this.analyse(this.take(this.pendingSamples), signal);
    if (this.windows.length === 0) return [];
    const embeddings = this.windows.map((w) => w.embedding);
    const stride = Math.ceil(embeddings.length / (this.options.maxClusteredWindows ?? 2000));
    const subset = embeddings.filter((_, i) => i % stride === 0);
    const mixed = this.windows.filter((_, i) => i % stride === 0).map((w) => w.mixed);
    const subsetLabels = clusterEmbeddings(subset, {
      distanceThreshold: this.options.distanceThreshold ?? overlapDistanceThreshold,
      ...speakers,
      mixed,
    });
    const labels =
      stride === 1 ? subsetLabels : assignToNearest(embeddings, centroidsOf(subset, subsetLabels, [...new Set(subsetLabels)], mixed));
    return this.turns(smoothLabels(labels, 3));
  }

  private take(count: number): Float32Array {
    const all = concatSamples(this.pending);
    this.pending = count < all.length ? [all.slice(count)] : [];
    this.pendingSamples = all.length - count;
    return all.subarray(0, count);
  }

  private async analyse(samples: Float32Array, signal?: AbortSignal): Promise<void> {
    const firstFrame = Math.round(this.analysedSamples / segmentationFrameSamples);
    const offsetSeconds = this.analysedSamples / diarizationSampleRate;
    this.analysedSamples += samples.length;
    const counts = await this.speakerCounts(samples, signal);
    this.storeCounts(firstFrame, counts);
    const regions = speechRegions(counts);
    const spans = this.windowSpans(regions, samples.length / diarizationSampleRate);
    if (spans.length === 0) return;
    const embeddings = await this.embedSpans(samples, spans, signal);
    for (const [i, span] of spans.entries()) {
      this.windows.push({
        centreSeconds: offsetSeconds + (span.startSeconds + span.endSeconds) / 2,
        embedding: embeddings[i]!,
        mixed: holdsOverlap(counts, span),
      });
    }
  }

  /** Rounded mean, over the 10 s windows covering each frame, of how many local speakers are active in it. */
  private async speakerCounts(samples: Float32Array, signal?: AbortSignal): Promise<Uint8Array> {
    const frames = Math.ceil(samples.length / segmentationFrameSamples);
    const sums = new Float32Array(frames);
    const covers = new Float32Array(frames);
    const starts: number[] = [];
    let start = 0;
    for (; start + segmentationWindowSamples < samples.length; start += segmentationStepSamples) starts.push(start);
    starts.push(Math.max(0, samples.length - segmentationWindowSamples));
    for (let b = 0; b < starts.length; b += segmentationBatch) {
      signal?.throwIfAborted();
      const batch = starts.slice(b, b + segmentationBatch);
      const input = new Float32Array(batch.length * segmentationWindowSamples);
      for (const [row, s] of batch.entries())
        input.set(samples.subarray(s, s + segmentationWindowSamples), row * segmentationWindowSamples);
      const output = await this.models.segmentation.run({
        input: this.models.segmentation.tensor('float32', input, [batch.length, 1, segmentationWindowSamples]),
      });
      const scores = output.output!;
      const [, windowFrames = 0, classes = 0] = scores.dims;
      const data = scores.data as Float32Array;
      batch.forEach((s, row) => {
        for (let j = 0; j < windowFrames; j++) {
          // Frames of the zero padding after a short recording's end are not evidence.
          if (s + j * segmentationFrameSamples + segmentationFrameCentre >= samples.length) break;
          const frame = Math.round((s + j * segmentationFrameSamples) / segmentationFrameSamples);
          if (frame >= frames) break;
          const base = (row * windowFrames + j) * classes;
          let best = 0;
          for (let c = 1; c < classes; c++) if (data[base + c]! > data[base + best]!) best = c;
          sums[frame] = sums[frame]! + powersetSpeakerCount[best]!;
          covers[frame] = covers[frame]! + 1;
        }
      });
    }
    return Uint8Array.from(sums, (sum, i) => (covers[i]! > 0 ? Math.round(sum / covers[i]!) : 0));
  }

  private storeCounts(firstFrame: number, counts: Uint8Array): void {
    const needed = firstFrame + counts.length;
    if (needed > this.counts.length) {
      const grown = new Uint8Array(Math.max(needed, 2 * this.counts.length));
      grown.set(this.counts.subarray(0, this.frameCount));
      this.counts = grown;
    }
    this.counts.set(counts, firstFrame);
    this.frameCount = needed;
  }

  /** 1.5 s windows every 0.75 s over each speech region (the last flush with its end); a shorter region gets one. */
  private windowSpans(
    regions: Array<{ startSeconds: number; endSeconds: number }>,
    totalSeconds: number,
  ): Array<{ startSeconds: number; endSeconds: number }> {
    const windowSeconds = this.options.windowSeconds ?? 1.5;
    const hopSeconds = this.options.hopSeconds ?? 0.75;
    const minSeconds = this.options.minWindowSeconds ?? 0.3;
    const spans: Array<{ startSeconds: number; endSeconds: number }> = [];
    for (const region of regions) {
      const from = Math.max(0, region.startSeconds);
      const to = Math.min(totalSeconds, region.endSeconds);
      const length = to - from;
      if (length < minSeconds) continue;
      if (length <= windowSeconds) {
        spans.push({ startSeconds: from, endSeconds: to });
        continue;
      }
      let start = from;
      for (; start + windowSeconds <= to + 1e-9; start += hopSeconds)
        spans.push({ startSeconds: start, endSeconds: start + windowSeconds });
      if (start - hopSeconds + windowSeconds < to - 1e-9) spans.push({ startSeconds: to - windowSeconds, endSeconds: to });
    }
    return spans;
  }

  /** CAM++ once over the chunk, then statistics pooling and the dense layer per window. */
  private async embedSpans(
    samples: Float32Array,
    spans: Array<{ startSeconds: number; endSeconds: number }>,
    signal?: AbortSignal,
  ): Promise<Float32Array[]> {
    return this.models.encoder.embedSpans(await this.models.encoder.frames(samples, signal), spans);
  }

  /** Speaker turns from the frame counts and the labelled windows. */
  private turns(labels: number[]): OverlappingTurn[] {
    const windows = this.windows.map((w, i) => ({ centreSeconds: w.centreSeconds, label: labels[i]! }));
    const search = this.options.overlapSearchSeconds ?? 5;
    const speakerCount = Math.max(...labels) + 1;
    const runs: Array<Array<{ first: number; last: number }>> = Array.from({ length: speakerCount }, () => []);
    const mark = (speaker: number, frame: number): void => {
      const own = runs[speaker]!;
      const last = own[own.length - 1];
      if (last && last.last === frame - 1) last.last = frame;
      else own.push({ first: frame, last: frame });
    };
    let nearest = 0;
    for (let frame = 0; frame < this.frameCount; frame++) {
      const count = this.counts[frame]!;
      if (count === 0) continue;
      const centre = frameCentreSeconds(frame);
      while (
        nearest + 1 < windows.length &&
        Math.abs(windows[nearest + 1]!.centreSeconds - centre) <= Math.abs(windows[nearest]!.centreSeconds - centre)
      )
        nearest++;
      const first = windows[nearest]!.label;
      mark(first, frame);
      if (count < 2) continue;
      // The nearest window, either side, of a different speaker.
      let before = nearest - 1;
      let after = nearest + 1;
      for (;;) {
        const distanceBefore = before >= 0 ? centre - windows[before]!.centreSeconds : Infinity;
        const distanceAfter = after < windows.length ? windows[after]!.centreSeconds - centre : Infinity;
        if (Math.min(distanceBefore, distanceAfter) > search) break;
        const index = distanceBefore <= distanceAfter ? before-- : after++;
        if (windows[index]!.label !== first) {
          mark(windows[index]!.label, frame);
          break;
        }
      }
    }
    const bridge = this.options.bridgeGapSeconds ?? 0.5;
    const turns: Array<{ speaker: number; startSeconds: number; endSeconds: number }> = [];
    runs.forEach((own, speaker) => {
      let current: { speaker: number; startSeconds: number; endSeconds: number } | undefined;
      for (const run of own) {
        const startSeconds = frameCentreSeconds(run.first) - segmentationFrameSamples / 2 / diarizationSampleRate;
        const endSeconds = frameCentreSeconds(run.last) + segmentationFrameSamples / 2 / diarizationSampleRate;
        if (current && startSeconds - current.endSeconds <= bridge) current.endSeconds = endSeconds;
        else turns.push((current = { speaker, startSeconds, endSeconds }));
      }
    });
    turns.sort((a, b) => a.startSeconds - b.startSeconds || a.speaker - b.speaker);
    const names = renumber(turns.map((t) => t.speaker));
    const totalSeconds = this.analysedSamples / diarizationSampleRate;
    return turns.map((t, i) => ({
      speaker: `SPEAKER_${names[i]! + 1}`,
      startSeconds: Math.max(0, t.startSeconds),
      endSeconds: Math.min(totalSeconds, t.endSeconds),
    }));
  }
}

function frameCentreSeconds(frame: number): number {
  return (frame * segmentationFrameSamples + segmentationFrameCentre) / diarizationSampleRate;
}

/** Whether any frame centred inside the span (seconds into the chunk) has two or more speakers. */
function holdsOverlap(counts: Uint8Array, span: { startSeconds: number; endSeconds: number }): boolean {
  const first = Math.max(0, Math.ceil((span.startSeconds * diarizationSampleRate - segmentationFrameCentre) / segmentationFrameSamples));
  for (let frame = first; frame < counts.length && frameCentreSeconds(frame) < span.endSeconds; frame++)
    if (counts[frame]! >= 2) return true;
  return false;
}

/** Runs of frames with at least one speaker, as times (each frame stands for its 270-sample step around its centre). */
function speechRegions(counts: Uint8Array): Array<{ startSeconds: number; endSeconds: number }> {
  const regions: Array<{ startSeconds: number; endSeconds: number }> = [];
  const half = segmentationFrameSamples / 2 / diarizationSampleRate;
  let start = -1;
  for (let frame = 0; frame <= counts.length; frame++) {
    const speech = frame < counts.length && counts[frame]! > 0;
    if (speech && start < 0) start = frame;
    if (!speech && start >= 0) {
      regions.push({ startSeconds: frameCentreSeconds(start) - half, endSeconds: frameCentreSeconds(frame - 1) + half });
      start = -1;
    }
  }
  return regions;
}
