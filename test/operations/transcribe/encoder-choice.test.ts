/** Which encoder the service's whisper.cpp engine runs: the model's ONNX encoder when installed, unless VOXD_ASR_ENCODER says otherwise. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { WhisperCppTranscriber } from '../../../src/operations/transcribe/engines/whisper-cpp.js';
import { buildTestApp } from '../../helpers/app.js';
import { modelFile } from '../../helpers/models.js';

test("the service transcribes with whisper-base's ONNX encoder by default; VOXD_ASR_ENCODER=onnx-int8 or ggml picks the others", {
  timeout: 120_000,
}, async () => {
  await Promise.all([modelFile('whisper-base-encoder', 'encoder.onnx'), modelFile('whisper-base-encoder-int8', 'encoder-int8.onnx')]);
  for (const [setting, encoder] of [
    [undefined, 'onnxruntime'],
    ['onnx-int8', 'onnxruntime'],
    ['ggml', 'whisper.cpp'],
  ] as const) {
    const t = await buildTestApp({ VOXD_PRELOAD_MODELS: 'false', ...(setting ? { VOXD_ASR_ENCODER: setting } : {}) });
    try {
      const transcriber = (await t.container.asr.get()) as WhisperCppTranscriber;
      assert.equal(transcriber.encoder, encoder, setting ?? 'default');
    } finally {
      await t.close();
    }
  }
});
