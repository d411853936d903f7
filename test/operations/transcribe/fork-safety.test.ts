/**
 * Regression: with OpenBLAS's pthreads build, a child process started (libuv forks) while whisper.cpp ran BLAS on
 * another thread hung the whole process in OpenBLAS's fork handler within seconds. The load runs in a child process so
 * that a hang fails this test by timeout instead of freezing the test runner.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { packageRoot } from '../../../src/core/version.js';
import { evalDir } from '../../helpers/app.js';
import { modelFile } from '../../helpers/models.js';

const loadSeconds = 20;

test('transcriptions on two threads while the process keeps starting child processes never hang', async () => {
  const modelPath = await modelFile('whisper-base', 'ggml-base.bin');
  const module = (file: string): string => pathToFileURL(path.join(packageRoot, 'dist/src', file)).href;
  const script = `
    import { spawn } from 'node:child_process';
    import { WhisperModel } from '${module('operations/transcribe/engines/whisper-native.js')}';
    import { decodeFile } from '${module('audio/decode.js')}';
    const model = await WhisperModel.load(${JSON.stringify(modelPath)});
    const { samples } = await decodeFile(${JSON.stringify(path.join(evalDir, 'asr/whisper_cpp/jfk.wav'))}, { sampleRate: 16000, channels: 1 });
    const end = Date.now() + ${loadSeconds * 1000};
    let transcribed = 0, started = 0;
    const transcribe = async () => { while (Date.now() < end) { await model.transcribe(samples, { language: 'en', threads: 2 }); transcribed++; } };
    const startChildren = async () => {
      while (Date.now() < end) {
        await new Promise((resolve) => spawn('true').on('close', resolve).on('error', resolve));
        started++;
      }
    };
    await Promise.all([transcribe(), transcribe(), startChildren(), startChildren()]);
    process.stdout.write(JSON.stringify({ transcribed, started }));
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  // A healthy run ends a little after loadSeconds (the last transcriptions finish); a hung one never does.
  const timeout = setTimeout(() => child.kill('SIGKILL'), (loadSeconds + 60) * 1000);
  const code = await exited;
  clearTimeout(timeout);
  assert.equal(code, 0, `the process hung or failed (killed after ${loadSeconds + 60} s): ${stderr.slice(-2000)}`);
  const counts = JSON.parse(stdout) as { transcribed: number; started: number };
  assert.ok(counts.transcribed >= 2 && counts.started >= 50, `both kinds of work ran: ${stdout}`);
});
