/** A short film-style clip for dubbing tests: two eval speakers (a woman, then a man) over a music bed, as audio and video. */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { evalDir } from './app.js';

const run = promisify(execFile);

/** Where each speaker's recording is placed in the clip (seconds). */
export const placements = [
  { file: 'vc/resemblyzer_librispeech/3080-5032-0001.wav', atSeconds: 0.5 },
  { file: 'vc/resemblyzer_librispeech/2033-164914-0001.wav', atSeconds: 9.3 },
];
export const clipSeconds = 16.5;

/** The clip written into `dir`: `clip.wav` (mono, 44.1 kHz) and `clip.mp4` (a test picture with that sound). */
export async function dubbingClip(dir: string): Promise<{ audio: string; video: string }> {
  // Two speakers (a woman, then a man) over a music bed looped to the clip's length, about 8 dB under the speech.
  const audio = path.join(dir, 'clip.wav');
  await run('ffmpeg', [
    '-v',
    'error',
    ...placements.flatMap((p) => ['-i', path.join(evalDir, p.file)]),
    '-stream_loop',
    '-1',
    '-i',
    path.join(evalDir, 'sep/dnr_mix01/music.wav'),
    '-filter_complex',
    [
      ...placements.map((p, i) => `[${i}:a]aresample=44100,adelay=${Math.round(p.atSeconds * 1000)}:all=1[s${i}]`),
      `[${placements.length}:a]aresample=44100,atrim=0:${clipSeconds}[m]`,
      `${placements.map((_, i) => `[s${i}]`).join('')}[m]amix=inputs=${placements.length + 1}:normalize=0:duration=longest,atrim=0:${clipSeconds}[out]`,
    ].join(';'),
    '-map',
    '[out]',
    '-ac',
    '1',
    audio,
  ]);
  const video = path.join(dir, 'clip.mp4');
  await run('ffmpeg', [
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    `testsrc=size=160x120:rate=10:duration=${clipSeconds}`,
    '-i',
    audio,
    '-c:v',
    'mpeg4',
    '-c:a',
    'aac',
    '-shortest',
    video,
  ]);
  return { audio, video };
}
