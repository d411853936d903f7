/** Models for tests: pulled once through the real model manager into the same cache the service uses. */
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { catalog } from '../../src/models/catalog.js';
import { ModelManager } from '../../src/models/manager.js';
import { sharedModelsDir } from './app.js';

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
