/** Runs an ffmpeg audio filter chain and resamples (SoX resampler) in one pass. */
import { VoxError } from '../core/errors.js';
import { ffmpegBaseArgs, runProcess } from './ffmpeg.js';
import type { Waveform } from './waveform.js';

export async function filterAndResample(
  waveform: Waveform,
  options: { sampleRate: number; filters: string[] },
  signal?: AbortSignal,
): Promise<Waveform> {
  const input = Buffer.from(waveform.samples.buffer, waveform.samples.byteOffset, waveform.samples.byteLength);
  const fmt = ['-f', 'f32le', '-ac', String(waveform.channels)];
  const chain = [...options.filters, `aresample=${options.sampleRate}:resampler=soxr:precision=28`].join(',');
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
      chain,
      ...fmt,
      '-ar',
      String(options.sampleRate),
      'pipe:1',
    ],
    {
      input,
      signal,
    },
  );
  if (result.exitCode !== 0) throw new VoxError('internal', 'Audio filtering failed.', { cause: result.stderr });
  const bytes = result.stdout;
  const samples = new Float32Array(bytes.length / 4);
  for (let i = 0; i < samples.length; i++) samples[i] = bytes.readFloatLE(i * 4);
  return { samples, sampleRate: options.sampleRate, channels: waveform.channels };
}

/** Mono 16-bit PCM WAV bytes (as espeak-ng writes them, possibly with a streaming placeholder size) -> Waveform. */
export function parsePcm16Wav(bytes: Buffer): Waveform {
  if (bytes.toString('ascii', 0, 4) !== 'RIFF' || bytes.toString('ascii', 8, 12) !== 'WAVE')
    throw new VoxError('internal', 'Not a WAV stream.');
  let offset = 12;
  let sampleRate = 0;
  let channels = 1;
  while (offset + 8 <= bytes.length) {
    const id = bytes.toString('ascii', offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    if (id === 'fmt ') {
      channels = bytes.readUInt16LE(offset + 10);
      sampleRate = bytes.readUInt32LE(offset + 12);
      if (bytes.readUInt16LE(offset + 22) !== 16) throw new VoxError('internal', 'Only 16-bit WAV is expected here.');
    } else if (id === 'data') {
      const end = Math.min(bytes.length, offset + 8 + size);
      const frames = Math.floor((end - offset - 8) / 2);
      const samples = new Float32Array(frames);
      for (let i = 0; i < frames; i++) samples[i] = bytes.readInt16LE(offset + 8 + 2 * i) / 32768;
      return { samples, sampleRate, channels };
    }
    offset += 8 + size + (size % 2);
  }
  throw new VoxError('internal', 'WAV stream has no data.');
}
