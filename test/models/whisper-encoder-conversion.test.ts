/**
 * Whisper base's encoder as ONNX (catalog whisper-base-encoder, float32, and whisper-base-encoder-int8; the truncated
 * whisper-base-content of voice conversion): converted at pull time from the ggml file with reproducible bytes, and equal,
 * within its precision, to whisper.cpp's own encoder on a real 30 s window. Whisper's log-mel computed in TypeScript (the
 * content encoder's input) matches whisper.cpp's.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import * as ort from 'onnxruntime-node';
import { decodeFile } from '../../src/audio/decode.js';
import { whisperLogMel } from '../../src/audio/mel.js';
import { catalog } from '../../src/models/catalog/index.js';
import { buildWhisperEncoderOnnx, readGgmlEncoder } from '../../src/models/convert/whisper-encoder-to-onnx.js';
import { ModelManager } from '../../src/models/manager.js';
import { WhisperModel } from '../../src/operations/transcribe/engines/whisper-native.js';
import { evalDir, sharedModelsDir } from '../helpers/app.js';
import { modelFile, testModelsDir } from '../helpers/models.js';

test('the encoders are converted from whisper-base and verified; the float32 one is pulled with it', { timeout: 300_000 }, async () => {
  const manager = new ModelManager({ modelsDir: testModelsDir, localModelDirs: [sharedModelsDir], catalog });
  await manager.pull('whisper-base');
  assert.equal(await manager.installed('whisper-base-encoder'), true);
  // Forced: the conversion itself runs every time, and must give the catalog's bytes.
  for (const id of ['whisper-base-encoder', 'whisper-base-encoder-int8', 'whisper-base-content']) {
    await manager.pull(id, { force: true });
    assert.deepEqual(await manager.verify(id), []);
  }
});

/** Largest absolute difference, and the difference's norm relative to the reference's. */
function difference(actual: Float32Array, expected: Float32Array): { maxAbsolute: number; relative: number } {
  let maxAbsolute = 0;
  let squared = 0;
  let norm = 0;
  for (let i = 0; i < expected.length; i++) {
    const d = actual[i]! - expected[i]!;
    maxAbsolute = Math.max(maxAbsolute, Math.abs(d));
    squared += d * d;
    norm += expected[i]! * expected[i]!;
  }
  return { maxAbsolute, relative: Math.sqrt(squared / norm) };
}

test("the ONNX encoder gives whisper.cpp's encoder output on a real window: float32 within 1%, int8 within 5% (relative norm)", {
  timeout: 120_000,
}, async () => {
  const ggmlPath = await modelFile('whisper-base', 'ggml-base.bin');
  const model = await WhisperModel.load(ggmlPath);
  const samples = (await decodeFile(path.join(evalDir, 'asr/whisper_cpp/jfk.wav'), { sampleRate: 16000, channels: 1 })).samples;
  const reference = await model.encodeWithWhisperCpp(samples, { threads: 2 });
  assert.equal(reference.frames, 3000);
  assert.equal(reference.embedding.length, 1500 * 512);
  const encoder = readGgmlEncoder(await readFile(ggmlPath));
  const bounds = { float32: 0.01, int8: 0.05 };
  for (const precision of ['float32', 'int8'] as const) {
    const session = await ort.InferenceSession.create(buildWhisperEncoderOnnx(encoder, precision), { intraOpNumThreads: 2 });
    const outputs: ort.InferenceSession.OnnxValueMapType = await session.run({
      mel: new ort.Tensor('float32', reference.mel, [1, 80, reference.frames]),
    });
    const embedding: ort.Tensor = outputs.embd!;
    assert.deepEqual(embedding.dims, [1, 1500, 512]);
    const { maxAbsolute, relative } = difference(embedding.data as Float32Array, reference.embedding);
    assert.ok(relative < bounds[precision], `${precision}: relative difference ${relative}, largest ${maxAbsolute}`);
    await session.release();
  }
});

test("Whisper's log-mel in TypeScript matches whisper.cpp's on a real clip", { timeout: 120_000 }, async () => {
  const model = await WhisperModel.load(await modelFile('whisper-base', 'ggml-base.bin'));
  const samples = (await decodeFile(path.join(evalDir, 'asr/whisper_cpp/jfk.wav'), { sampleRate: 16000, channels: 1 })).samples;
  const reference = await model.encodeWithWhisperCpp(samples, { threads: 2 });
  const mel = whisperLogMel(samples);
  assert.equal(mel.frames, Math.floor(samples.length / 160));
  // whisper.cpp's mel is band-major over its 30 s window (the clip, then silence).
  let sum = 0;
  let largest = 0;
  for (let t = 0; t < mel.frames; t++) {
    for (let b = 0; b < mel.melBands; b++) {
      const d = Math.abs(mel.data[t * mel.melBands + b]! - reference.mel[b * reference.frames + t]!);
      sum += d;
      largest = Math.max(largest, d);
    }
  }
  const meanDifference = sum / (mel.frames * mel.melBands);
  assert.ok(meanDifference < 0.01 && largest < 0.3, `mean difference ${meanDifference}, largest ${largest}`);
});
