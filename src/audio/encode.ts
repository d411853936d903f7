/** Waveform -> encoded bytes, through ffmpeg. Peak-safe: a waveform over full scale is scaled down, never clipped. */
import { VoxError } from '../errors.js';
import { ffmpegBaseArgs, runProcess } from './ffmpeg.js';
import { peak, type Waveform } from './waveform.js';

export const audioFormats = ['mp3', 'wav', 'opus', 'flac', 'pcm'] as const;
export type AudioFormat = (typeof audioFormats)[number];
export const wavSampleFormats = ['s16', 's24', 'f32'] as const;
export type WavSampleFormat = (typeof wavSampleFormats)[number];

export const contentTypes: Record<AudioFormat, string> = {
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  opus: 'audio/ogg; codecs=opus',
  flac: 'audio/flac',
  pcm: 'audio/L16',
};

/** Rates libopus accepts; other requested rates are served at 48 kHz. */
const opusSampleRates = [8000, 12000, 16000, 24000, 48000];

export interface EncodeOptions {
  format: AudioFormat;
  /** Output rate; default the waveform's own. */
  sampleRate?: number;
  /** wav only. Default s16. */
  wavSampleFormat?: WavSampleFormat;
  signal?: AbortSignal;
}

/** The rate a format will actually be written at. */
export function outputSampleRate(format: AudioFormat, requested: number): number {
  if (format === 'opus' && !opusSampleRates.includes(requested)) return 48000;
  if (format === 'mp3' && requested > 48000) return 48000;
  return requested;
}

function codecArgs(options: EncodeOptions): string[] {
  switch (options.format) {
    case 'wav': {
      const codec = { s16: 'pcm_s16le', s24: 'pcm_s24le', f32: 'pcm_f32le' }[options.wavSampleFormat ?? 's16'];
      return ['-c:a', codec, '-f', 'wav'];
    }
    case 'mp3':
      return ['-c:a', 'libmp3lame', '-b:a', '128k', '-f', 'mp3'];
    case 'opus':
      return ['-c:a', 'libopus', '-b:a', '64k', '-f', 'ogg'];
    case 'flac':
      return ['-c:a', 'flac', '-f', 'flac'];
    case 'pcm':
      return ['-c:a', 'pcm_s16le', '-f', 's16le'];
  }
}

/** Scales the waveform down when its peak exceeds full scale (leaves 0.1 dB headroom). */
export function peakSafe(samples: Float32Array): Float32Array {
  const max = peak(samples);
  const limit = 0.989;
  if (max <= limit) return samples;
  const gain = limit / max;
  const scaled = new Float32Array(samples.length);
  for (let i = 0; i < samples.length; i++) scaled[i] = samples[i]! * gain;
  return scaled;
}

export async function encodeWaveform(waveform: Waveform, options: EncodeOptions): Promise<Buffer> {
  return encodeTo(waveform, options, 'pipe:1');
}

/** Encodes into a file (for results stored as blobs). */
export async function encodeWaveformToFile(waveform: Waveform, options: EncodeOptions, path: string): Promise<void> {
  await encodeTo(waveform, options, path);
}

async function encodeTo(waveform: Waveform, options: EncodeOptions, output: string): Promise<Buffer> {
  const sampleRate = outputSampleRate(options.format, options.sampleRate ?? waveform.sampleRate);
  const samples = peakSafe(waveform.samples);
  const input = Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
  const args = [
    ...ffmpegBaseArgs,
    '-f', 'f32le', '-ar', String(waveform.sampleRate), '-ac', String(waveform.channels), '-i', 'pipe:0',
    ...(sampleRate !== waveform.sampleRate ? ['-af', 'aresample=resampler=soxr:precision=28'] : []),
    '-ar', String(sampleRate),
    ...codecArgs(options),
    output,
  ];
  const result = await runProcess('ffmpeg', args, { input, signal: options.signal });
  if (result.exitCode !== 0) throw new VoxError('internal', 'Audio encoding failed.', { cause: result.stderr });
  return result.stdout;
}
