/** Bytes on disk -> Waveform, through ffmpeg. */
import { spawn } from 'node:child_process';
import { VoxError } from '../core/errors.js';
import { ffmpegBaseArgs, runProcess } from './ffmpeg.js';
import { concatSamples, type Waveform } from './waveform.js';

export interface AudioProbe {
  durationSeconds: number;
  sampleRate: number;
  channels: number;
  codec: string;
  container: string;
}

interface FfprobeJson {
  streams?: Array<{ codec_type?: string; codec_name?: string; sample_rate?: string; channels?: number; duration?: string }>;
  format?: { format_name?: string; duration?: string };
}

/** Reads the container header: fast, no full decode. Not audio -> 415. */
export async function probeAudio(path: string, signal?: AbortSignal): Promise<AudioProbe> {
  const result = await runProcess(
    'ffprobe',
    [
      '-v',
      'error',
      '-show_entries',
      'format=format_name,duration:stream=codec_type,codec_name,sample_rate,channels,duration',
      '-of',
      'json',
      path,
    ],
    { signal },
  );
  let parsed: FfprobeJson = {};
  try {
    parsed = JSON.parse(result.stdout.toString('utf8')) as FfprobeJson;
  } catch {
    parsed = {};
  }
  const stream = parsed.streams?.find((s) => s.codec_type === 'audio');
  if (result.exitCode !== 0 || !stream) {
    throw new VoxError('unsupported_media_type', 'The upload could not be read as audio (no decodable audio stream).', {
      param: 'audio',
      cause: result.stderr.trim() || undefined,
    });
  }
  const durationSeconds = Number(stream.duration ?? parsed.format?.duration ?? NaN);
  return {
    durationSeconds: Number.isFinite(durationSeconds) ? durationSeconds : NaN,
    sampleRate: Number(stream.sample_rate ?? 0),
    channels: stream.channels ?? 0,
    codec: stream.codec_name ?? 'unknown',
    container: parsed.format?.format_name ?? 'unknown',
  };
}

/** Decoding and scanning run this far past a limit, so that going over it shows. */
const overrunSeconds = 1;

/**
 * Audio seconds in the first audio stream by a demux-only packet scan (timestamps, no decoding), stopping just past
 * `stopAfterSeconds`; NaN when ffmpeg cannot tell. For containers that declare no length (FLAC or Matroska written to a
 * pipe): 3 h of FLAC silence (1.5 MB) scans in 0.3 s, where decoding it to find out took a minute and gigabytes.
 */
export async function scanAudioSeconds(path: string, stopAfterSeconds: number, signal?: AbortSignal): Promise<number> {
  const result = await runProcess(
    'ffmpeg',
    [
      ...ffmpegBaseArgs,
      '-i',
      path,
      '-map',
      '0:a:0',
      '-c',
      'copy',
      '-t',
      String(stopAfterSeconds + overrunSeconds),
      '-f',
      'null',
      '-progress',
      'pipe:1',
      '-',
    ],
    { signal },
  );
  // -progress reports key=value lines; the last out_time_us is the last packet's time.
  const times = [...result.stdout.toString('utf8').matchAll(/^out_time_us=(\d+)$/gm)];
  const last = times.at(-1)?.[1];
  return result.exitCode === 0 && last !== undefined ? Number(last) / 1e6 : NaN;
}

/** 413 for audio over a duration limit; `lastsSeconds` when known, else it lasts "more than" the limit. */
export function audioTooLong(param: string, maxSeconds: number, limitName = 'VOXD_MAX_AUDIO_SECONDS', lastsSeconds?: number): VoxError {
  const limit = Number(maxSeconds.toFixed(1));
  const lasts = lastsSeconds === undefined ? `more than ${limit}` : lastsSeconds.toFixed(1);
  return new VoxError('payload_too_large', `The audio lasts ${lasts} s; the limit is ${limit} s (${limitName}).`, { param });
}

export interface DecodeOptions {
  /** Output rate; default: the file's own. */
  sampleRate?: number;
  /** Output channel count; default: the file's own. */
  channels?: number;
  /** Only this channel of the file (0-based), as mono output: `channels` is then 1. */
  channel?: number;
  /**
   * Stops with 413 past this duration (and ffmpeg stops just after it on its own): the backstop for containers that
   * declare no length or a false one. Every decode of an upload passes it.
   */
  maxSeconds?: number;
  /** Names the limit in the 413 message. Default: VOXD_MAX_AUDIO_SECONDS. */
  limitName?: string;
  /** The request field the file came in, named by errors. Default 'audio'. */
  param?: string;
  signal?: AbortSignal;
}

/**
 * Streams decoded float PCM from a file in blocks of `blockFrames` frames (the last one may be shorter).
 * Memory stays flat however long the file is. Non-finite samples are replaced by 0.
 */
export async function* decodeBlocks(path: string, options: DecodeOptions & { blockFrames: number }): AsyncGenerator<Float32Array> {
  const probe =
    (options.channels || options.channel !== undefined) && options.sampleRate ? undefined : await probeAudio(path, options.signal);
  const channels = options.channel !== undefined ? 1 : (options.channels ?? probe?.channels ?? 1);
  const pickChannel = options.channel !== undefined ? ['-af', `pan=mono|c0=c${options.channel}`] : [];
  const sampleRate = options.sampleRate ?? probe?.sampleRate ?? 16000;
  const maxSeconds = options.maxSeconds ?? Infinity;
  const limit = Number.isFinite(maxSeconds) ? ['-t', String(maxSeconds + overrunSeconds)] : [];
  const args = [
    ...ffmpegBaseArgs,
    '-i',
    path,
    '-map',
    '0:a:0',
    '-vn',
    ...limit,
    ...pickChannel,
    '-f',
    'f32le',
    '-acodec',
    'pcm_f32le',
    '-ac',
    String(channels),
    '-ar',
    String(sampleRate),
    'pipe:1',
  ];
  const child = spawn('ffmpeg', args, { stdio: ['ignore', 'pipe', 'pipe'], signal: options.signal });
  const stderr: Buffer[] = [];
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  const exited = new Promise<number>((resolve, reject) => {
    child.on('error', (error) => reject(error.name === 'AbortError' ? new VoxError('aborted', 'The request was cancelled.') : error));
    child.on('close', (code) => resolve(code ?? -1));
  });
  exited.catch(() => undefined);

  const blockBytes = options.blockFrames * channels * 4;
  const maxBytes = maxSeconds * sampleRate * channels * 4;
  let decodedBytes = 0;
  let pending: Buffer = Buffer.alloc(0);
  let emittedFrames = 0;
  try {
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
      // Counted as ffmpeg writes, before anything is kept or handed on.
      decodedBytes += chunk.length;
      if (decodedBytes > maxBytes) throw audioTooLong(options.param ?? 'audio', maxSeconds, options.limitName);
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      while (pending.length >= blockBytes) {
        yield toFloat(pending.subarray(0, blockBytes));
        emittedFrames += options.blockFrames;
        pending = pending.subarray(blockBytes);
      }
    }
    const exitCode = await exited;
    const usable = pending.length - (pending.length % (channels * 4));
    if (usable > 0) {
      yield toFloat(pending.subarray(0, usable));
      emittedFrames += usable / channels / 4;
    }
    if (emittedFrames === 0) {
      throw new VoxError('unsupported_media_type', 'The upload contains no decodable audio samples.', {
        param: options.param ?? 'audio',
        cause: `ffmpeg exit ${exitCode}: ${Buffer.concat(stderr).toString('utf8').trim()}`,
      });
    }
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}

function toFloat(bytes: Buffer): Float32Array {
  const samples = new Float32Array(bytes.length / 4);
  for (let i = 0; i < samples.length; i++) {
    const v = bytes.readFloatLE(i * 4);
    samples[i] = Number.isFinite(v) ? v : 0;
  }
  return samples;
}

/** Decodes a whole file into memory. Use `decodeBlocks` for long inputs. */
export async function decodeFile(path: string, options: DecodeOptions = {}): Promise<Waveform> {
  const probe = await probeAudio(path, options.signal);
  const channels = options.channel !== undefined ? 1 : (options.channels ?? probe.channels);
  const sampleRate = options.sampleRate ?? probe.sampleRate;
  const blocks: Float32Array[] = [];
  for await (const block of decodeBlocks(path, { ...options, channels, sampleRate, blockFrames: sampleRate * 10 })) blocks.push(block);
  return { samples: concatSamples(blocks), sampleRate, channels };
}
