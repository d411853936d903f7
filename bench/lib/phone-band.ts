/** Named audio conditions built from the eval clips (issue 36): what a telephone line leaves of a clip, a clip's first seconds. */
import path from 'node:path';
import { ffmpegBaseArgs, runProcess } from '../../src/audio/ffmpeg.js';

async function ffmpeg(args: string[]): Promise<void> {
  const result = await runProcess('ffmpeg', [...ffmpegBaseArgs, ...args]);
  if (result.exitCode !== 0) throw new Error(`ffmpeg ${args.join(' ')}: ${result.stderr}`);
}

/** 8 kHz G.711 mu-law (`-ar 8000 -c:a pcm_mulaw`) and back to 16 kHz 16-bit PCM, written into `dir`. */
export async function phoneBand(file: string, dir: string): Promise<string> {
  const name = path.basename(file, path.extname(file));
  const narrow = path.join(dir, `${name}.8k.wav`);
  const back = path.join(dir, `${name}.phone.wav`);
  await ffmpeg(['-i', file, '-ar', '8000', '-ac', '1', '-c:a', 'pcm_mulaw', narrow]);
  await ffmpeg(['-i', narrow, '-ar', '16000', '-c:a', 'pcm_s16le', back]);
  return back;
}

/** The first `seconds` of a clip, written into `dir`. */
export async function firstSeconds(file: string, seconds: number, dir: string): Promise<string> {
  const out = path.join(dir, `${path.basename(file, path.extname(file))}.first${seconds}s.wav`);
  await ffmpeg(['-i', file, '-t', String(seconds), '-c:a', 'pcm_s16le', out]);
  return out;
}
