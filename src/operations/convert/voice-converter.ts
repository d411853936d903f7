/**
 * Voice conversion: re-voice a recording as a target speaker. An engine analyses a voice profile's reference clips once
 * (at profile creation) into `TargetProfileStats`, which the caller stores with the profile and passes back to `convert`.
 * The interface holds for a neural converter too: its stats would carry e.g. a speaker embedding or reference features.
 */
import { VoxError } from '../../core/errors.js';
import type { Waveform } from '../../audio/waveform.js';

/** Engine-specific statistics of a target voice: plain numbers plus named Float32Array blobs. */
export interface TargetProfileStats {
  engine: string;
  /** Format version of `meta`/`blobs` for this engine: stats of another version must be re-analysed. */
  version: number;
  /** Seconds of speech the statistics were computed from. */
  speechSeconds: number;
  meta: Record<string, number | string | boolean>;
  blobs: Record<string, Float32Array>;
}

export interface ConvertOptions {
  /**
   * true: keep the source's intonation shape, F0 range and energy dynamics relative to its own mean, moved into the
   * target's register. false: map them onto the target's habitual (neutral) range. Engines document the exact mapping.
   */
  preserveEmotion: boolean;
  signal?: AbortSignal;
}

export interface ConversionResult {
  /** Same duration (frame count) and sample rate as the input. */
  waveform: Waveform;
  /** Pearson correlation of output and source log-F0 over frames voiced in both (1 = same intonation shape). */
  f0Correlation: number;
  warnings: string[];
}

export interface VoiceConverter {
  readonly engine: string;
  readonly modelId: string;
  analyseTarget(clips: Waveform[], signal?: AbortSignal): Promise<TargetProfileStats>;
  convert(source: Waveform, target: TargetProfileStats, options: ConvertOptions): Promise<ConversionResult>;
  /** Releases model sessions (engines that hold any). */
  close?(): Promise<void>;
}

/** JSON-safe form of the stats for storage: `meta` as JSON, blobs as little-endian float32 bytes. */
export interface StoredProfileStats {
  json: string;
  blobs: Record<string, Buffer>;
}

export function storeProfileStats(stats: TargetProfileStats): StoredProfileStats {
  const blobs: Record<string, Buffer> = {};
  for (const [name, array] of Object.entries(stats.blobs)) {
    const bytes = Buffer.alloc(array.length * 4);
    for (let i = 0; i < array.length; i++) bytes.writeFloatLE(array[i]!, i * 4);
    blobs[name] = bytes;
  }
  return {
    json: JSON.stringify({ engine: stats.engine, version: stats.version, speechSeconds: stats.speechSeconds, meta: stats.meta }),
    blobs,
  };
}

export function loadProfileStats(stored: StoredProfileStats): TargetProfileStats {
  const head = JSON.parse(stored.json) as Omit<TargetProfileStats, 'blobs'>;
  const blobs: Record<string, Float32Array> = {};
  for (const [name, bytes] of Object.entries(stored.blobs)) {
    if (bytes.length % 4 !== 0) throw new VoxError('internal', `Voice profile blob ${name} is not float32 data.`);
    const array = new Float32Array(bytes.length / 4);
    for (let i = 0; i < array.length; i++) array[i] = bytes.readFloatLE(i * 4);
    blobs[name] = array;
  }
  return { engine: head.engine, version: head.version, speechSeconds: head.speechSeconds, meta: head.meta, blobs };
}
