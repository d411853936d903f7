/**
 * Soundtrack separator: dialogue from speech-enhancement models (DeepFilterNet3 and DTLN, blended), then the
 * background (input minus dialogue) split into music / sfx / ambience by spectral masks.
 *
 * Long inputs run in chunks with context on both sides and linear crossfades between chunks, so working memory is
 * bounded by the chunk size; each channel is processed on its own. Every stage is exact in sum (background is the
 * input minus dialogue, the background split ends with an exact remainder, crossfade weights sum to one), so the
 * four stems add back to the input to float precision.
 */
import path from 'node:path';
import { resample } from '../../../audio/resample.js';
import { extendBandByMask } from '../../../audio/spectral-masks.js';
import { splitBackground } from '../../../audio/background-split.js';
import type { Waveform } from '../../../audio/waveform.js';
import { stemNames, type SeparationResult, type Separator, type StemName } from '../separator.js';
import { DeepFilterNet3Model } from './deepfilternet3.js';
import type { DialogueModel } from './dialogue-model.js';
import { DtlnModel } from './dtln.js';

export interface SoundtrackOptions {
  /** Core length of a chunk. */
  chunkSeconds: number;
  /** Context processed on each side of a chunk and discarded (lets recurrent states and norms settle). */
  contextSeconds: number;
  /** Crossfade between neighbouring chunks (must fit within the context). */
  crossfadeSeconds: number;
  /** Dialogue = sum of weight x model estimate, plus `mixtureWeight` x the input (trades interference for fewer artifacts). */
  modelWeights: Record<string, number>;
  mixtureWeight: number;
}

/** Chosen on bench/separation.ts (see bench/results/separation.json). */
export const defaultSoundtrackOptions: SoundtrackOptions = {
  chunkSeconds: 20,
  contextSeconds: 2,
  crossfadeSeconds: 0.5,
  modelWeights: { deepfilternet3: 0.75, dtln: 0.25 },
  mixtureWeight: 0.2,
};

export class SoundtrackSeparator implements Separator {
  readonly engine = 'soundtrack';
  readonly modelId: string;

  constructor(
    private readonly models: DialogueModel[],
    private readonly options: SoundtrackOptions = defaultSoundtrackOptions,
  ) {
    this.modelId = models.map((m) => m.id).join('+');
  }

  /** Loads DeepFilterNet3 (from `<modelsDir>/deepfilternet3`) and DTLN (from `<modelsDir>/dtln`). */
  static async load(modelsDir: string, options = defaultSoundtrackOptions): Promise<SoundtrackSeparator> {
    const models = await Promise.all([DeepFilterNet3Model.load(path.join(modelsDir, 'deepfilternet3'), 1), DtlnModel.load(path.join(modelsDir, 'dtln'))]);
    return new SoundtrackSeparator(models.filter((m) => (options.modelWeights[m.id] ?? 0) > 0), options);
  }

  async separate(input: Waveform, options: { stems: StemName[]; signal?: AbortSignal }): Promise<SeparationResult> {
    const requested = stemNames.filter((name) => options.stems.includes(name));
    if (requested.length === 0) throw new RangeError('separate: no stems requested');

    const { channels, sampleRate } = input;
    const frames = input.samples.length / channels;
    const outputs = new Map<StemName, Float32Array>(requested.map((name) => [name, new Float32Array(input.samples.length)]));
    // A mono input is processed in place; other layouts one de-interleaved channel at a time.
    const mono = channels === 1 ? input.samples : new Float32Array(frames);
    for (let c = 0; c < channels; c++) {
      if (channels > 1) for (let i = 0; i < frames; i++) mono[i] = input.samples[i * channels + c]!;
      for await (const part of this.separateChannel(mono, sampleRate, options.signal)) {
        for (const name of requested) {
          const target = outputs.get(name)!;
          const stem = part.stems[name];
          for (let i = 0; i < stem.length; i++) target[(part.start + i) * channels + c]! += stem[i]! * part.weights[i]!;
        }
      }
    }
    const stems: SeparationResult['stems'] = {};
    for (const [name, samples] of outputs) stems[name] = { samples, sampleRate, channels };
    const warnings: string[] = [];
    if (sampleRate < 16000) warnings.push(`Input rate ${sampleRate} Hz is below the 16 kHz the dialogue models were trained at; dialogue quality will be lower.`);
    return { stems, warnings };
  }

  /** Chunks of one channel: the four stems over [start, start + length) and the crossfade weight of each sample. */
  private async *separateChannel(
    samples: Float32Array,
    sampleRate: number,
    signal?: AbortSignal,
  ): AsyncGenerator<{ start: number; weights: Float32Array; stems: Record<StemName, Float32Array> }> {
    const { chunkSeconds, contextSeconds, crossfadeSeconds } = this.options;
    const chunk = Math.round(chunkSeconds * sampleRate);
    const context = Math.round(contextSeconds * sampleRate);
    // Even, so the ramps centre on a sample boundary.
    const fade = 2 * Math.floor(Math.min(context, crossfadeSeconds * sampleRate) / 2);
    const total = samples.length;
    for (let coreStart = 0; coreStart < total; coreStart += chunk) {
      if (signal?.aborted) throw signal.reason;
      const coreEnd = Math.min(total, coreStart + chunk);
      const start = Math.max(0, coreStart - context);
      const end = Math.min(total, coreEnd + context);
      const stems = await this.separateSegment(samples.subarray(start, end), sampleRate, signal);
      // Weight 1 over the core, linear ramps of length `fade` centred on each inner chunk boundary.
      const outStart = coreStart === 0 ? 0 : coreStart - fade / 2;
      const outEnd = coreEnd === total ? total : coreEnd + fade / 2;
      const weights = new Float32Array(outEnd - outStart);
      for (let i = 0; i < weights.length; i++) {
        const n = outStart + i;
        let w = 1;
        if (coreStart > 0 && n < coreStart + fade / 2) w = (n - (coreStart - fade / 2) + 0.5) / fade;
        if (coreEnd < total && n >= coreEnd - fade / 2) w = Math.min(w, 1 - (n - (coreEnd - fade / 2) + 0.5) / fade);
        weights[i] = w;
      }
      const offset = outStart - start;
      const slice = (x: Float32Array): Float32Array => x.subarray(offset, offset + weights.length);
      yield {
        start: outStart,
        weights,
        stems: { dialogue: slice(stems.dialogue), music: slice(stems.music), sfx: slice(stems.sfx), ambience: slice(stems.ambience) },
      };
    }
  }

  private async separateSegment(segment: Float32Array, sampleRate: number, signal?: AbortSignal): Promise<Record<StemName, Float32Array>> {
    const estimates = await Promise.all(this.models.map((model) => this.runModel(model, segment, sampleRate, signal)));
    const dialogue = new Float32Array(segment.length);
    const { mixtureWeight, modelWeights } = this.options;
    const weightSum = this.models.reduce((sum, m) => sum + (modelWeights[m.id] ?? 0), 0);
    for (let k = 0; k < this.models.length; k++) {
      const w = (modelWeights[this.models[k]!.id] ?? 0) / weightSum;
      const estimate = estimates[k]!;
      for (let i = 0; i < dialogue.length; i++) dialogue[i]! += w * estimate[i]!;
    }
    for (let i = 0; i < dialogue.length; i++) dialogue[i] = (1 - mixtureWeight) * dialogue[i]! + mixtureWeight * segment[i]!;
    silenceWhereInputIsSilent(dialogue, segment, Math.round(sampleRate / 100));
    const background = new Float32Array(segment.length);
    for (let i = 0; i < background.length; i++) background[i] = segment[i]! - dialogue[i]!;
    const parts = splitBackground(background, sampleRate);
    return { dialogue, ...parts };
  }

  /** Runs a model at its own rate and returns its estimate at `sampleRate`, full band (the band above the model's masked from the input). */
  private async runModel(model: DialogueModel, segment: Float32Array, sampleRate: number, signal?: AbortSignal): Promise<Float32Array> {
    const atModelRate = (await resample({ samples: segment, sampleRate, channels: 1 }, model.sampleRate, signal)).samples;
    const enhanced = await model.enhance(atModelRate, signal);
    const back = (await resample({ samples: enhanced, sampleRate: model.sampleRate, channels: 1 }, sampleRate, signal)).samples;
    const estimate = new Float32Array(segment.length);
    estimate.set(back.subarray(0, segment.length));
    if (model.sampleRate >= sampleRate) return estimate;
    // The resampler's passband ends a little below the model's Nyquist.
    return extendBandByMask(estimate, segment, sampleRate, 0.45 * model.sampleRate);
  }
}

/** Digital silence in gives digital silence out: zero the estimate over blocks where the input is exactly zero. */
function silenceWhereInputIsSilent(estimate: Float32Array, input: Float32Array, block: number): void {
  for (let start = 0; start < input.length; start += block) {
    const end = Math.min(input.length, start + block);
    let silent = true;
    for (let i = start; i < end && silent; i++) silent = input[i] === 0;
    if (silent) estimate.fill(0, start, end);
  }
}
