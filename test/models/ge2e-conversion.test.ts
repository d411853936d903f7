import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as ort from 'onnxruntime-node';
import { catalog } from '../../src/models/catalog/index.js';
import { convertGe2eToOnnx } from '../../src/models/convert/ge2e-to-onnx.js';
import { readLegacyTorchStateDict, type NamedTensor } from '../../src/models/convert/torch-legacy.js';
import { hashFile, pipDownload, unpack } from '../../src/models/fetch.js';
import { makeTempDir } from '../helpers/app.js';
import { testModelsDir } from '../helpers/models.js';

const spec = catalog.find((s) => s.id === 'resemblyzer-ge2e')!;

describe('Resemblyzer GE2E checkpoint -> ONNX', () => {
  let workDir: string;
  let torchPath: string;
  let tensors: Map<string, NamedTensor>;

  before(async () => {
    workDir = makeTempDir('ge2e');
    // Same download cache as the model manager uses.
    const wheel = await pipDownload('resemblyzer==0.1.4', path.join(testModelsDir, '.downloads'), false);
    await unpack(wheel, path.join(workDir, 'wheel'));
    torchPath = path.join(workDir, 'wheel', 'resemblyzer', 'pretrained.pt');
    tensors = await readLegacyTorchStateDict(torchPath, { entry: 'model_state' });
  });
  after(() => rmSync(workDir, { recursive: true, force: true }));

  test('the legacy pickle reader finds every weight with its shape', () => {
    const expected: Record<string, number[]> = {
      'lstm.weight_ih_l0': [1024, 40],
      'linear.weight': [256, 256],
      'linear.bias': [256],
      similarity_weight: [1],
    };
    for (const layer of [0, 1, 2]) {
      expected[`lstm.weight_hh_l${layer}`] = [1024, 256];
      expected[`lstm.bias_ih_l${layer}`] = [1024];
      expected[`lstm.bias_hh_l${layer}`] = [1024];
      if (layer > 0) expected[`lstm.weight_ih_l${layer}`] = [1024, 256];
    }
    for (const [name, shape] of Object.entries(expected)) assert.deepEqual(tensors.get(name)?.shape, shape, name);
    // The LSTM weights share one flattened (cuDNN) storage: offsets must be honoured, so no two tensors start alike.
    const starts = new Set([...tensors.values()].map((t) => t.data.slice(0, 4).join(',')));
    assert.equal(starts.size, tensors.size);
    for (const tensor of tensors.values()) assert.ok(tensor.data.every(Number.isFinite));
  });

  test('conversion is deterministic and reproduces the catalogued sha256', async () => {
    const first = path.join(workDir, 'a.onnx');
    const second = path.join(workDir, 'b.onnx');
    await convertGe2eToOnnx({ torchPath, outputPath: first });
    await convertGe2eToOnnx({ torchPath, outputPath: second });
    const digest = await hashFile(first);
    assert.equal(digest, await hashFile(second));
    assert.equal(digest, spec.files[0]!.sha256);
  });

  test('onnxruntime output equals a plain PyTorch-order LSTM forward pass of the checkpoint', async () => {
    const modelPath = path.join(workDir, 'check.onnx');
    await convertGe2eToOnnx({ torchPath, outputPath: modelPath });
    const session = await ort.InferenceSession.create(modelPath, { intraOpNumThreads: 1 });
    const batch = 2;
    const frames = 25;
    const mels = new Float32Array(batch * frames * 40);
    let seed = 7;
    for (let i = 0; i < mels.length; i++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      mels[i] = (seed / 2 ** 31) * 2;
    }
    const output = await session.run({ mels: new ort.Tensor('float32', mels, [batch, frames, 40]) });
    assert.deepEqual(output.embedding!.dims, [batch, 256]);
    const onnxEmbeddings = output.embedding!.data as Float32Array;
    for (let b = 0; b < batch; b++) {
      const reference = referenceForward(tensors, mels.subarray(b * frames * 40, (b + 1) * frames * 40), frames);
      const ours = onnxEmbeddings.subarray(b * 256, (b + 1) * 256);
      const maxDifference = Math.max(...reference.map((v, i) => Math.abs(v - ours[i]!)));
      assert.ok(maxDifference < 1e-4, `max difference ${maxDifference}`);
      assert.ok(Math.abs(Math.hypot(...ours) - 1) < 1e-5, 'unit norm');
    }
    await session.release();
  });
});

/** torch.nn.LSTM (gates i, f, g, o) x3 -> Linear -> ReLU -> L2 norm, in float64. */
function referenceForward(tensors: Map<string, NamedTensor>, mels: Float32Array, frames: number): number[] {
  const hidden = 256;
  const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));
  let sequence: number[][] = Array.from({ length: frames }, (_, t) => Array.from(mels.subarray(t * 40, (t + 1) * 40)));
  for (let layer = 0; layer < 3; layer++) {
    const wIh = tensors.get(`lstm.weight_ih_l${layer}`)!.data;
    const wHh = tensors.get(`lstm.weight_hh_l${layer}`)!.data;
    const bIh = tensors.get(`lstm.bias_ih_l${layer}`)!.data;
    const bHh = tensors.get(`lstm.bias_hh_l${layer}`)!.data;
    const inputSize = sequence[0]!.length;
    let h = new Array<number>(hidden).fill(0);
    const c = new Array<number>(hidden).fill(0);
    const outputs: number[][] = [];
    for (const x of sequence) {
      const gates = new Array<number>(4 * hidden);
      for (let row = 0; row < 4 * hidden; row++) {
        let sum = bIh[row]! + bHh[row]!;
        for (let k = 0; k < inputSize; k++) sum += wIh[row * inputSize + k]! * x[k]!;
        for (let k = 0; k < hidden; k++) sum += wHh[row * hidden + k]! * h[k]!;
        gates[row] = sum;
      }
      const next = new Array<number>(hidden);
      for (let j = 0; j < hidden; j++) {
        const i = sigmoid(gates[j]!);
        const f = sigmoid(gates[hidden + j]!);
        const g = Math.tanh(gates[2 * hidden + j]!);
        const o = sigmoid(gates[3 * hidden + j]!);
        c[j] = f * c[j]! + i * g;
        next[j] = o * Math.tanh(c[j]!);
      }
      h = next;
      outputs.push(h);
    }
    sequence = outputs;
  }
  const last = sequence[frames - 1]!;
  const weight = tensors.get('linear.weight')!.data;
  const bias = tensors.get('linear.bias')!.data;
  const out = Array.from({ length: 256 }, (_, row) => {
    let sum = bias[row]!;
    for (let k = 0; k < hidden; k++) sum += weight[row * hidden + k]! * last[k]!;
    return Math.max(0, sum);
  });
  const norm = Math.hypot(...out);
  return out.map((v) => v / norm);
}
