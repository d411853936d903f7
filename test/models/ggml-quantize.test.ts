/** q8_0 quantisation of the converted whisper base with whisper.cpp's quantize tool: reproducible bytes, still accurate. */
import assert from 'node:assert/strict';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { errorRate } from '../../bench/lib/wer.js';
import { decodeFile } from '../../src/audio/decode.js';
import { quantizeWhisperGgml } from '../../src/models/convert/ggml-quantize.js';
import { hashFile } from '../../src/models/fetch.js';
import { WhisperModel } from '../../src/operations/transcribe/engines/whisper-native.js';
import { evalDir } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';

test('whisper base f16 -> q8_0', { timeout: 300_000 }, async () => {
  const work = await mkdtemp(path.join(tmpdir(), 'voxd-quantize-'));
  try {
    const outputPath = path.join(work, 'ggml-base-q8_0.bin');
    await quantizeWhisperGgml({ inputPath: await modelFile('whisper-base', 'ggml-base.bin'), outputPath, type: 'q8_0' });
    assert.equal((await stat(outputPath)).size, 81768585);
    assert.equal(await hashFile(outputPath), '81cfccb75eb8eb4eecf9829be7448c60e3d4abcb5bdb0f00e2c8a726f7ae2f25');
    const model = await WhisperModel.load(outputPath);
    assert.equal(model.info().type, 'base');
    const samples = (await decodeFile(path.join(evalDir, 'asr/pv_leopard/test.wav'), { sampleRate: 16000, channels: 1 })).samples;
    const result = await model.transcribe(samples, { language: 'en', threads: 2 });
    const text = result.segments.map((s) => s.text).join('');
    assert.ok(errorRate('Mr. Quilter is the apostle of the middle classes and we are glad to welcome his gospel.', text, 'en').rate <= 0.1, text);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
});
