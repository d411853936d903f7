/** Tempo change keeping pitch (ffmpeg's atempo: WSOLA), for speech that must fit a shorter slot. */
import { VoxError } from '../core/errors.js';
import { ffmpegBaseArgs, runProcess } from './ffmpeg.js';
import { float32FromBytes, type Waveform } from './waveform.js';

/** Plays `waveform` `factor` times as fast (0.5..2: one atempo stage keeps the best quality). */
export async function changeTempo(waveform: Waveform, factor: number, signal?: AbortSignal): Promise<Waveform> {
  if (factor === 1) return waveform;
  if (!(factor >= 0.5 && factor <= 2)) throw new VoxError('internal', `Tempo factor ${factor} is outside 0.5..2.`);
  const fmt = ['-f', 'f32le', '-ac', String(waveform.channels), '-ar', String(waveform.sampleRate)];
  const input = Buffer.from(waveform.samples.buffer, waveform.samples.byteOffset, waveform.samples.byteLength);
  const result = await runProcess(
    'ffmpeg',
    [...ffmpegBaseArgs, ...fmt, '-i', 'pipe:0', '-af', `atempo=${factor.toFixed(6)}`, ...fmt, 'pipe:1'],
    { input, ...(signal ? { signal } : {}) },
  );
  if (result.exitCode !== 0) throw new VoxError('internal', 'Changing the tempo failed.', { cause: result.stderr });
  return { samples: float32FromBytes(result.stdout), sampleRate: waveform.sampleRate, channels: waveform.channels };
}
