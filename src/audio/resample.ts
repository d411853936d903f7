/** Sample-rate conversion (SoX resampler inside ffmpeg: band-limited, high precision). */
import { VoxError } from '../core/errors.js';
import { ffmpegBaseArgs, runProcess } from './ffmpeg.js';
import type { Waveform } from './waveform.js';

export async function resample(waveform: Waveform, sampleRate: number, signal?: AbortSignal): Promise<Waveform> {
  if (waveform.sampleRate === sampleRate) return waveform;
  const input = Buffer.from(waveform.samples.buffer, waveform.samples.byteOffset, waveform.samples.byteLength);
  const fmt = ['-f', 'f32le', '-ac', String(waveform.channels)];
  const result = await runProcess(
    'ffmpeg',
    [
      ...ffmpegBaseArgs,
      ...fmt,
      '-ar',
      String(waveform.sampleRate),
      '-i',
      'pipe:0',
      '-af',
      'aresample=resampler=soxr:precision=28',
      ...fmt,
      '-ar',
      String(sampleRate),
      'pipe:1',
    ],
    { input, signal },
  );
  if (result.exitCode !== 0) throw new VoxError('internal', 'Resampling failed.', { cause: result.stderr });
  const bytes = result.stdout;
  const samples = new Float32Array(bytes.length / 4);
  for (let i = 0; i < samples.length; i++) samples[i] = bytes.readFloatLE(i * 4);
  return { samples, sampleRate, channels: waveform.channels };
}
