/**
 * Quantised whisper base (catalog entries whisper-base-q8_0 / -q5_0): made from the converted f16 model by whisper.cpp's
 * quantize tool through the model manager, with reproducible bytes (the manager checks size and sha256), still accurate.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { errorRate } from '../../bench/lib/wer.js';
import { decodeFile } from '../../src/audio/decode.js';
import { catalog } from '../../src/models/catalog/index.js';
import { ModelManager } from '../../src/models/manager.js';
import { WhisperModel } from '../../src/operations/transcribe/engines/whisper-native.js';
import { evalDir, sharedModelsDir } from '../helpers/app.js';
import { testModelsDir } from '../helpers/models.js';

test('whisper-base-q8_0 is pulled from whisper-base, verified, and transcribes', { timeout: 300_000 }, async () => {
  const shared = new ModelManager({ modelsDir: testModelsDir, localModelDirs: [sharedModelsDir], catalog });
  await shared.pull('whisper-base');
  // Forced: the conversion itself runs every time.
  const dir = await shared.pull('whisper-base-q8_0', { force: true });
  assert.deepEqual(await shared.verify('whisper-base-q8_0'), []);
  const model = await WhisperModel.load(path.join(dir, 'ggml-base-q8_0.bin'));
  assert.equal(model.info().type, 'base');
  const samples = (await decodeFile(path.join(evalDir, 'asr/pv_leopard/test.wav'), { sampleRate: 16000, channels: 1 })).samples;
  const result = await model.transcribe(samples, { language: 'en', threads: 2 });
  const text = result.segments.map((s) => s.text).join('');
  assert.ok(
    errorRate('Mr. Quilter is the apostle of the middle classes and we are glad to welcome his gospel.', text, 'en').rate <= 0.1,
    text,
  );
});
