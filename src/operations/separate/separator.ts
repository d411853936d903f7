/** The separation engine interface: audio streams in, stems stream out, so memory is flat in duration. */
import type { Waveform } from '../../audio/waveform.js';

export const stemNames = ['dialogue', 'music', 'sfx', 'ambience'] as const;
export type StemName = (typeof stemNames)[number];

export interface AudioLayout {
  sampleRate: number;
  channels: number;
}

/** The next frames of every stem, interleaved like the input; the four stems of a block sum to the input's frames. */
export type StemBlock = Record<StemName, Float32Array>;

export interface Separator {
  engine: string;
  modelId: string;
  /** Notes on how well this input suits the engine (e.g. a rate below the models'). */
  warnings(layout: AudioLayout): string[];
  /** Separates interleaved input blocks of any size as they arrive; the yielded blocks cover the input exactly once, in order. */
  separate(input: AsyncIterable<Float32Array>, layout: AudioLayout, signal?: AbortSignal): AsyncGenerator<StemBlock>;
  close(): Promise<void>;
}

/** Four zeroed stems of `length` samples each. */
export function emptyStems(length: number): StemBlock {
  return {
    dialogue: new Float32Array(length),
    music: new Float32Array(length),
    sfx: new Float32Array(length),
    ambience: new Float32Array(length),
  };
}

/** Separates a waveform held in memory (short clips, tests, benchmarks): the four stems at the input's shape. */
export async function separateWaveform(separator: Separator, input: Waveform, signal?: AbortSignal): Promise<Record<StemName, Waveform>> {
  const { sampleRate, channels } = input;
  const stems = emptyStems(input.samples.length);
  let offset = 0;
  async function* whole(): AsyncGenerator<Float32Array> {
    yield input.samples;
  }
  for await (const block of separator.separate(whole(), { sampleRate, channels }, signal)) {
    for (const name of stemNames) stems[name].set(block[name], offset);
    offset += block.dialogue.length;
  }
  return Object.fromEntries(stemNames.map((name) => [name, { samples: stems[name], sampleRate, channels }])) as Record<StemName, Waveform>;
}
