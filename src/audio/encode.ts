/** Waveform -> encoded bytes, through ffmpeg. Peak-safe: a waveform over full scale is scaled down, never clipped. */
import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { VoxError } from '../core/errors.js';
import { ffmpegBaseArgs, runProcess } from './ffmpeg.js';
import { peak, type Waveform } from './waveform.js';

export const audioFormats = ['mp3', 'wav', 'opus', 'flac', 'pcm', 'aac'] as const;
export type AudioFormat = (typeof audioFormats)[number];
export const wavSampleFormats = ['s16', 's24', 'f32'] as const;
export type WavSampleFormat = (typeof wavSampleFormats)[number];

export const contentTypes: Record<AudioFormat, string> = {
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  opus: 'audio/ogg; codecs=opus',
  flac: 'audio/flac',
  pcm: 'audio/L16',
  aac: 'audio/aac',
};

/** Rates libopus accepts; other requested rates are served at 48 kHz. */
const opusSampleRates = [8000, 12000, 16000, 24000, 48000];
/** The MPEG rates: libmp3lame and ffmpeg's aac encoder refuse any other. */
const mpegSampleRates = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000];

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
  // The nearest MPEG rate at or above the one asked for, so nothing requested is lost.
  if (format === 'mp3' || format === 'aac') return mpegSampleRates.find((rate) => rate >= requested) ?? 48000;
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
    case 'aac':
      return ['-c:a', 'aac', '-b:a', '128k', '-f', 'adts'];
  }
}

/** The highest peak written: 0.1 dB below full scale, so integer formats and lossy decoders do not clip. */
export const peakLimit = 0.989;

/** Scales the waveform down when its peak exceeds `peakLimit`. */
export function peakSafe(samples: Float32Array): Float32Array {
  const max = peak(samples);
  if (max <= peakLimit) return samples;
  const gain = peakLimit / max;
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

export interface StreamingEncoder {
  /** Encoded bytes as they are produced. */
  output: Readable;
  /** Feeds the next chunk (same rate and channels as announced); resolves when ffmpeg accepted it. */
  write(samples: Float32Array): Promise<void>;
  end(): void;
  /** Stops the encoder (e.g. the client went away). */
  abort(): void;
}

/**
 * One long-lived encoder for audio produced in pieces (streamed TTS): a single ffmpeg process, so there are no
 * gaps or clicks between chunks. Each chunk is made peak-safe on its own.
 */
export function startEncoder(options: EncodeOptions & { inputSampleRate: number; channels: number }): StreamingEncoder {
  const sampleRate = outputSampleRate(options.format, options.sampleRate ?? options.inputSampleRate);
  const args = [
    ...ffmpegBaseArgs,
    // Raw input needs no probing; by default ffmpeg reads ~5 s of input (or to its end) before writing anything.
    '-probesize',
    '32',
    '-analyzeduration',
    '0',
    '-f',
    'f32le',
    '-ar',
    String(options.inputSampleRate),
    '-ac',
    String(options.channels),
    '-i',
    'pipe:0',
    ...(sampleRate !== options.inputSampleRate ? ['-af', 'aresample=resampler=soxr:precision=28'] : []),
    '-ar',
    String(sampleRate),
    // Streamed wav cannot know its length up front: ffmpeg writes a header that players treat as open-ended.
    ...codecArgs(options),
    ...(options.format === 'mp3' || options.format === 'opus' ? ['-flush_packets', '1'] : []),
    'pipe:1',
  ];
  const child = spawn('ffmpeg', args, { stdio: ['pipe', 'pipe', 'ignore'] });
  child.on('error', () => undefined);
  child.stdin.on('error', () => undefined);
  return {
    output: child.stdout,
    write: (samples) => {
      const safe = peakSafe(samples);
      return new Promise<void>((resolve, reject) => {
        child.stdin.write(Buffer.from(safe.buffer, safe.byteOffset, safe.byteLength), (error) => (error ? reject(error) : resolve()));
      });
    },
    end: () => child.stdin.end(),
    abort: () => child.kill('SIGKILL'),
  };
}

/**
 * Encodes raw interleaved float32 samples from `input` (a file path, or 'pipe:0' for stdin) into `output`
 * (a file path, or 'pipe:1'). `gain` scales the whole signal (e.g. to keep a stem that exceeds full scale unclipped).
 */
function encodeRaw(
  layout: { sampleRate: number; channels: number },
  options: EncodeOptions & { gain?: number },
  input: string,
  output: string,
  stdin?: Buffer,
) {
  const sampleRate = outputSampleRate(options.format, options.sampleRate ?? layout.sampleRate);
  const filters = [
    ...(options.gain !== undefined && options.gain !== 1 ? [`volume=${options.gain.toFixed(6)}`] : []),
    ...(sampleRate !== layout.sampleRate ? ['aresample=resampler=soxr:precision=28'] : []),
  ];
  const args = [
    ...ffmpegBaseArgs,
    '-f',
    'f32le',
    '-ar',
    String(layout.sampleRate),
    '-ac',
    String(layout.channels),
    '-i',
    input,
    ...(filters.length > 0 ? ['-af', filters.join(',')] : []),
    '-ar',
    String(sampleRate),
    ...codecArgs(options),
    output,
  ];
  return runProcess('ffmpeg', args, { ...(stdin ? { input: stdin } : {}), signal: options.signal });
}

async function encodeTo(waveform: Waveform, options: EncodeOptions, output: string): Promise<Buffer> {
  const samples = peakSafe(waveform.samples);
  const result = await encodeRaw(waveform, options, 'pipe:0', output, Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength));
  if (result.exitCode !== 0) throw new VoxError('internal', 'Audio encoding failed.', { cause: result.stderr });
  return result.stdout;
}

/** Encodes a file of raw interleaved float32 samples into `output`, scaled by `gain`; memory stays flat in duration. */
export async function encodeRawFile(
  rawPath: string,
  layout: { sampleRate: number; channels: number },
  options: EncodeOptions & { gain?: number },
  output: string,
): Promise<void> {
  const result = await encodeRaw(layout, options, rawPath, output);
  if (result.exitCode !== 0) throw new VoxError('internal', 'Audio encoding failed.', { cause: result.stderr });
}
