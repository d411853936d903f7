/**
 * Streams a separation from an audio file into one encoded file per returned stem, measuring each stem's levels on
 * the way. Stems are first written as raw float32 beside their final files and encoded once complete, because a stem
 * that exceeds full scale can only be scaled down (instead of clipped) once its peak is known.
 */
import { open, rm } from 'node:fs/promises';
import path from 'node:path';
import { decodeBlocks } from '../../audio/decode.js';
import { encodeRawFile, peakLimit, type AudioFormat } from '../../audio/encode.js';
import { stemNames, type AudioLayout, type Separator, type StemName } from './separator.js';

export type OutputStemName = StemName | 'residual';

export interface StemFile {
  name: OutputStemName;
  path: string;
  fileName: string;
  /** Levels of the file as written (after any scaling). */
  rmsDb: number;
  peakDb: number;
  /** Share of 50 ms frames louder than -50 dBFS: how much of the stem has something in it. */
  activeFraction: number;
}

export interface StemFilesRequest {
  separator: Separator;
  inputPath: string;
  layout: AudioLayout;
  /** Requested stems; a subset is completed by `residual`, the sum of the others, so the files always sum to the input. */
  stems: StemName[];
  format: AudioFormat;
  extension: string;
  /** Rate of the written files. */
  sampleRate: number;
  dir: string;
  maxSeconds: number;
  signal?: AbortSignal;
  /** The input's length as measured before decoding, for progress (NaN: none reported while separating). */
  expectedSeconds?: number;
  onProgress?: (progress: { stage: string; fraction: number }) => void;
}

/** Share of the progress bar for separation; encoding the stem files is the rest. */
const separationShare = 0.9;

export interface StemFilesResult {
  files: StemFile[];
  warnings: string[];
  durationSeconds: number;
}

const activeFrameSeconds = 0.05;
const activeThresholdDb = -50;

/** Running level statistics of an interleaved stream. */
export class LevelMeter {
  private sumSquares = 0;
  private count = 0;
  private maxAbs = 0;
  private frameSumSquares = 0;
  private frameCount = 0;
  private activeFrames = 0;
  private frames = 0;
  private readonly frameSamples: number;

  constructor(layout: AudioLayout) {
    this.frameSamples = Math.max(1, Math.round(layout.sampleRate * activeFrameSeconds) * layout.channels);
  }

  add(samples: Float32Array): void {
    for (let i = 0; i < samples.length; i++) {
      const v = samples[i]!;
      const square = v * v;
      this.sumSquares += square;
      const abs = Math.abs(v);
      if (abs > this.maxAbs) this.maxAbs = abs;
      this.frameSumSquares += square;
      if (++this.frameCount === this.frameSamples) this.closeFrame();
    }
    this.count += samples.length;
  }

  /** Levels scaled by `gain`; a last partial frame counts as a frame. */
  levels(gain = 1): { rmsDb: number; peakDb: number; activeFraction: number } {
    if (this.frameCount > 0) this.closeFrame();
    const gainDb = 20 * Math.log10(gain);
    return {
      rmsDb: this.count === 0 ? -Infinity : 10 * Math.log10(this.sumSquares / this.count) + gainDb,
      peakDb: 20 * Math.log10(this.maxAbs) + gainDb,
      activeFraction: this.frames === 0 ? 0 : this.activeFrames / this.frames,
    };
  }

  get peak(): number {
    return this.maxAbs;
  }

  private closeFrame(): void {
    if (10 * Math.log10(this.frameSumSquares / this.frameCount) > activeThresholdDb) this.activeFrames++;
    this.frames++;
    this.frameSumSquares = 0;
    this.frameCount = 0;
  }
}

export async function writeStemFiles(request: StemFilesRequest): Promise<StemFilesResult> {
  const { separator, layout, dir, signal } = request;
  const names: OutputStemName[] = [...request.stems, ...(request.stems.length < stemNames.length ? ['residual' as const] : [])];
  const others = stemNames.filter((name) => !request.stems.includes(name));
  const outputs = await Promise.all(
    names.map(async (name) => {
      const rawPath = path.join(dir, `${name}.f32`);
      return { name, rawPath, handle: await open(rawPath, 'w'), meter: new LevelMeter(layout) };
    }),
  );
  let frames = 0;
  try {
    const input = decodeBlocks(request.inputPath, {
      ...layout,
      blockFrames: layout.sampleRate * 5,
      maxSeconds: request.maxSeconds,
      ...(signal ? { signal } : {}),
    });
    for await (const block of separator.separate(input, layout, signal)) {
      frames += block.dialogue.length / layout.channels;
      for (const output of outputs) {
        let samples: Float32Array;
        if (output.name !== 'residual') samples = block[output.name];
        else {
          samples = new Float32Array(block.dialogue.length);
          for (const other of others) for (let i = 0; i < samples.length; i++) samples[i]! += block[other][i]!;
        }
        output.meter.add(samples);
        await output.handle.write(Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength));
      }
      const expected = request.expectedSeconds ?? Number.NaN;
      if (Number.isFinite(expected) && expected > 0)
        request.onProgress?.({ stage: 'separating', fraction: separationShare * Math.min(1, frames / layout.sampleRate / expected) });
    }
  } finally {
    await Promise.all(outputs.map((output) => output.handle.close()));
  }

  const warnings = separator.warnings(layout);
  const files: StemFile[] = [];
  for (const { name, rawPath, meter } of outputs) {
    const gain = meter.peak > peakLimit ? peakLimit / meter.peak : 1;
    if (gain < 1)
      warnings.push(
        `The ${name} stem peaks at ${(20 * Math.log10(meter.peak)).toFixed(1)} dBFS; it was scaled down by ` +
          `${(-20 * Math.log10(gain)).toFixed(1)} dB instead of clipped, so the stems no longer sum exactly to the input.`,
      );
    const fileName = `${name}.${request.extension}`;
    const target = path.join(dir, fileName);
    await encodeRawFile(
      rawPath,
      layout,
      { format: request.format, sampleRate: request.sampleRate, gain, ...(signal ? { signal } : {}) },
      target,
    );
    await rm(rawPath, { force: true });
    files.push({ name, path: target, fileName, ...meter.levels(gain) });
    request.onProgress?.({ stage: 'encoding stems', fraction: separationShare + (1 - separationShare) * (files.length / outputs.length) });
  }
  return { files, warnings, durationSeconds: frames / layout.sampleRate };
}
