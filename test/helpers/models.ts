/** Models for tests: pulled once through the real model manager into the same cache the service uses. */
import { readdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { catalog } from '../../src/models/catalog/index.js';
import { ModelManager } from '../../src/models/manager.js';
import { OnnxWhisperEncoder } from '../../src/operations/transcribe/engines/whisper-onnx-encoder.js';
import { makeTempDir, sharedModelsDir } from './app.js';

export const testModelsDir = loadConfig({ ...process.env, VOXD_LOG_LEVEL: 'silent' }).modelsDir;
const manager = new ModelManager({ modelsDir: testModelsDir, localModelDirs: [sharedModelsDir], catalog });
const pulls = new Map<string, Promise<string>>();

/** Path of one verified file of a catalog model. */
export function modelFile(id: string, file: string): Promise<string> {
  let pulled = pulls.get(id);
  if (!pulled) {
    pulled = manager.pull(id);
    pulls.set(id, pulled);
  }
  return pulled.then((dir) => path.join(dir, file));
}

export const ge2eModelPath = (): Promise<string> => modelFile('resemblyzer-ge2e', 'ge2e.onnx');
export const camppModelPath = (): Promise<string> => modelFile('campplus', 'campplus.onnx');
export const segmentationModelPath = (): Promise<string> => modelFile('pyannote-segmentation-3', 'segmentation-3.0.onnx');

let baseEncoder: Promise<OnnxWhisperEncoder> | undefined;
/**
 * whisper-base's ONNX encoder as the service picks it: float32 by default (pulled with the model), int8 under
 * VOXD_ASR_ENCODER=onnx-int8, none under VOXD_ASR_ENCODER=ggml; so whisper tests can be run with each.
 */
export async function whisperBaseEncoder(): Promise<OnnxWhisperEncoder | undefined> {
  const file = await whisperBaseEncoderPath();
  if (!file) return undefined;
  baseEncoder ??= OnnxWhisperEncoder.load(file, { threads: 2 });
  return baseEncoder;
}

/** The file of that encoder, for WhisperCppTranscriber.load. */
export async function whisperBaseEncoderPath(): Promise<string | undefined> {
  switch (process.env.VOXD_ASR_ENCODER) {
    case 'ggml':
      return undefined;
    case 'onnx-int8':
      return modelFile('whisper-base-encoder-int8', 'encoder-int8.onnx');
    default:
      return modelFile('whisper-base-encoder', 'encoder.onnx');
  }
}

/**
 * A models directory of its own holding links to every installed model, so what is derived from them (built-in voices'
 * analyses, kept beside the models) starts empty: for tests of what is computed when.
 */
export function modelsDirWithoutDerived(): string {
  const dir = makeTempDir('models');
  for (const entry of readdirSync(testModelsDir, { withFileTypes: true })) {
    if (entry.isDirectory() && !entry.name.startsWith('.')) symlinkSync(path.join(testModelsDir, entry.name), path.join(dir, entry.name));
  }
  return dir;
}
