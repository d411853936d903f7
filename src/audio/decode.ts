/** Bytes on disk -> Waveform, through ffmpeg. */
import { spawn } from 'node:child_process';
import { VoxError } from '../errors.js';
import { ffmpegBaseArgs, runProcess } from './ffmpeg.js';
import type { Waveform } from './waveform.js';

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
    ['-v', 'error', '-show_entries', 'format=format_name,duration:stream=codec_type,codec_name,sample_rate,channels,duration', '-of', 'json', path],
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

export interface DecodeOptions {
  /** Output rate; default: the file's own. */
  sampleRate?: number;
  /** Output channel count; default: the file's own. */
  channels?: number;
  /** Stops with 413 past this duration: the guard for streams whose container declares none. */
  maxSeconds?: number;
  /** The request field the file came in, named by errors. Default 'audio'. */
  param?: string;
  signal?: AbortSignal;
}

/**
 * Streams decoded float PCM from a file in blocks of `blockFrames` frames (the last one may be shorter).
 * Memory stays flat however long the file is. Non-finite samples are replaced by 0.
 */
export async function* decodeBlocks(
  path: string,
  options: DecodeOptions & { blockFrames: number },
): AsyncGenerator<Float32Array> {
  const probe = options.channels && options.sampleRate ? undefined : await probeAudio(path, options.signal);
  const channels = options.channels ?? probe?.channels ?? 1;
  const sampleRate = options.sampleRate ?? probe?.sampleRate ?? 16000;
  const args = [...ffmpegBaseArgs, '-i', path, '-map', '0:a:0', '-vn', '-f', 'f32le', '-acodec', 'pcm_f32le', '-ac', String(channels), '-ar', String(sampleRate), 'pipe:1'];
  const child = spawn('ffmpeg', args, { stdio: ['ignore', 'pipe', 'pipe'], signal: options.signal });
  const stderr: Buffer[] = [];
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  const exited = new Promise<number>((resolve, reject) => {
    child.on('error', (error) => reject(error.name === 'AbortError' ? new VoxError('aborted', 'The request was cancelled.') : error));
    child.on('close', (code) => resolve(code ?? -1));
  });
  exited.catch(() => undefined);

  const blockBytes = options.blockFrames * channels * 4;
  let pending: Buffer = Buffer.alloc(0);
  let emittedFrames = 0;
  try {
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      while (pending.length >= blockBytes) {
        yield toFloat(pending.subarray(0, blockBytes));
        emittedFrames += options.blockFrames;
        pending = pending.subarray(blockBytes);
        if (options.maxSeconds !== undefined && emittedFrames / sampleRate > options.maxSeconds) {
          throw new VoxError('payload_too_large', `The audio lasts more than ${options.maxSeconds} s, the limit (VOXD_MAX_AUDIO_SECONDS).`, { param: options.param ?? 'audio' });
        }
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
  const channels = options.channels ?? probe.channels;
  const sampleRate = options.sampleRate ?? probe.sampleRate;
  const blocks: Float32Array[] = [];
  let total = 0;
  for await (const block of decodeBlocks(path, { ...options, channels, sampleRate, blockFrames: sampleRate * 10 })) {
    blocks.push(block);
    total += block.length;
  }
  const samples = new Float32Array(total);
  let offset = 0;
  for (const block of blocks) {
    samples.set(block, offset);
    offset += block.length;
  }
  return { samples, sampleRate, channels };
}
