/**
 * The WORLD vocoder (native addon built by native/build-world.sh): F0, spectral envelope and aperiodicity analysis,
 * and resynthesis. All calls run on the libuv thread pool.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { VoxError } from '../core/errors.js';
import { packageRoot } from '../core/version.js';

export interface WorldOptions {
  sampleRate: number;
  framePeriodMs: number;
  fftSize: number;
  f0FloorHz: number;
  f0CeilHz: number;
  /** Harvest (robust, slow) instead of DIO + StoneMask (fast). */
  harvest?: boolean;
}

export interface WorldAnalysis {
  /** Hz per frame, 0 where unvoiced. */
  f0: Float64Array;
  /** Power envelope, frames x (fftSize/2 + 1), row-major. */
  spectrogram: Float64Array;
  /** Aperiodicity 0..1, same shape. */
  aperiodicity: Float64Array;
}

interface WorldAddon {
  f0(samples: Float32Array | Float64Array, options: Record<string, number>): Promise<Float64Array>;
  analyse(samples: Float32Array | Float64Array, options: Record<string, number>): Promise<WorldAnalysis>;
  synthesise(
    f0: Float64Array,
    spectrogram: Float64Array,
    aperiodicity: Float64Array,
    options: Record<string, number>,
  ): Promise<Float64Array>;
}

export class World {
  private constructor(private readonly addon: WorldAddon) {}

  /** Loads the addon; `model_unavailable` when it has not been built. */
  static load(addonPath: string): World {
    if (!existsSync(addonPath)) {
      throw new VoxError('model_unavailable', `The WORLD vocoder addon is not built (${addonPath}): run native/build-world.sh.`);
    }
    return new World(createRequire(import.meta.url)(addonPath) as WorldAddon);
  }

  f0(samples: Float32Array | Float64Array, options: WorldOptions): Promise<Float64Array> {
    return this.addon.f0(samples, flatten(options));
  }

  analyse(samples: Float32Array | Float64Array, options: WorldOptions): Promise<WorldAnalysis> {
    return this.addon.analyse(samples, flatten(options));
  }

  synthesise(analysis: WorldAnalysis, outputLength: number, options: WorldOptions): Promise<Float64Array> {
    return this.addon.synthesise(analysis.f0, analysis.spectrogram, analysis.aperiodicity, { ...flatten(options), outputLength });
  }
}

/** Where native/build-world.sh puts the addon (beside the whisper.cpp one). */
export function defaultWorldAddonPath(): string {
  return path.join(packageRoot, 'native', 'build', 'world.node');
}

function flatten(options: WorldOptions): Record<string, number> {
  return {
    sampleRate: options.sampleRate,
    framePeriodMs: options.framePeriodMs,
    fftSize: options.fftSize,
    f0FloorHz: options.f0FloorHz,
    f0CeilHz: options.f0CeilHz,
    harvest: options.harvest ? 1 : 0,
  };
}
