/**
 * Quantises a whisper.cpp ggml model (f16) with whisper.cpp's own quantize tool, built by native/build-whisper.sh.
 * The tool is deterministic: the same input and type give the same bytes.
 */
import { spawn } from 'node:child_process';
import { access, constants, rename } from 'node:fs/promises';
import path from 'node:path';
import { packageRoot } from '../../core/version.js';

export const whisperQuantizePath = path.join(packageRoot, 'native/build/whisper-quantize');

export type GgmlQuantization = 'q8_0' | 'q5_0' | 'q5_1' | 'q4_0';

export async function quantizeWhisperGgml(input: { inputPath: string; outputPath: string; type: GgmlQuantization }): Promise<void> {
  try {
    await access(whisperQuantizePath, constants.X_OK);
  } catch {
    throw new Error(`${whisperQuantizePath} is missing: run native/build-whisper.sh`);
  }
  // Written beside the target and renamed, so a failed run leaves no partial model behind.
  const partial = `${input.outputPath}.partial`;
  await new Promise<void>((resolve, reject) => {
    const child = spawn(whisperQuantizePath, [input.inputPath, partial, input.type], { stdio: ['ignore', 'pipe', 'pipe'] });
    const output: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`whisper-quantize failed (exit ${code}): ${Buffer.concat(output).toString('utf8').slice(-2000)}`)),
    );
  });
  await rename(partial, input.outputPath);
}
