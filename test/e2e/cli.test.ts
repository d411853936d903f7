/** The `voxd` command line (the built entry point, as users run it) on local files. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { test } from 'node:test';
import yauzl from 'yauzl';
import { loadConfig } from '../../src/config.js';
import { packageRoot } from '../../src/core/version.js';
import { evalDir, makeTempDir, sharedModelsDir } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';

const run = promisify(execFile);

test('voxd separate --out writes a zip of the stems; nothing is left beside the input or in the temp area', async () => {
  await Promise.all([
    modelFile('dtln', 'model_1.onnx'),
    modelFile('deepfilternet3', 'enc.onnx'),
    modelFile('spleeter-2stems', 'vocals.onnx'),
  ]);
  const dir = makeTempDir('cli');
  const dataDir = path.join(dir, 'data');
  mkdirSync(dataDir);
  const out = path.join(dir, 'stems.zip');
  const env = {
    ...process.env,
    VOXD_DATA_DIR: dataDir,
    VOXD_MODELS_DIR: loadConfig({ ...process.env, VOXD_LOG_LEVEL: 'silent' }).modelsDir,
    VOXD_LOCAL_MODEL_DIRS: sharedModelsDir,
    VOXD_LOG_LEVEL: 'silent',
  };
  // The eval directory is read-only: stems must not be written beside the input.
  const input = path.join(evalDir, 'sep/dnr_mix01/mixture.wav');
  const { stdout } = await run(
    process.execPath,
    [path.join(packageRoot, 'dist/src/cli/main.js'), 'separate', input, '--stems', 'dialogue', '--out', out],
    { env },
  );
  assert.match(stdout, /wrote .*stems\.zip/);
  const zip = await yauzl.openPromise(out, { lazyEntries: true });
  const names: string[] = [];
  for await (const entry of zip.eachEntry()) names.push(entry.fileName);
  zip.close();
  assert.deepEqual(names.sort(), ['dialogue.wav', 'residual.wav']);
  assert.deepEqual(readdirSync(path.join(dataDir, 'tmp')), []);
});
