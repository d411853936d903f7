/** The only place that starts ffmpeg/ffprobe child processes. */
import { spawn } from 'node:child_process';
import { VoxError } from '../core/errors.js';

export interface ProcessResult {
  stdout: Buffer;
  stderr: string;
  exitCode: number;
}

export interface RunOptions {
  input?: Buffer | Uint8Array;
  signal?: AbortSignal;
}

/** Runs a program to completion, collecting stdout; rejects only when it cannot start or is aborted. */
export function runProcess(program: string, args: string[], options: RunOptions = {}): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ['pipe', 'pipe', 'pipe'], signal: options.signal });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (error.name === 'AbortError') reject(new VoxError('aborted', 'The request was cancelled.', { cause: error }));
      else if (error.code === 'ENOENT') reject(new VoxError('internal', `${program} is not installed.`, { cause: error }));
      else reject(error);
    });
    child.on('close', (code) => {
      resolve({ stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8'), exitCode: code ?? -1 });
    });
    child.stdin.on('error', () => {
      // The program may exit before reading all input (e.g. on a decode error); its exit code tells.
    });
    if (options.input) child.stdin.end(options.input);
    else child.stdin.end();
  });
}

/** Common flags: quiet, no interaction, no stdin surprises. */
export const ffmpegBaseArgs = ['-hide_banner', '-nostdin', '-v', 'error', '-y'];
