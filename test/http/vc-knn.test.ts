/**
 * The knn conversion engine (VOXD_VC_ENGINE=knn, issue 36) through the service, on real eval audio: a female reader
 * (LibriSpeech 3080) cloned from one clip, a male reader's clip (LibriSpeech 2033) converted to her; judged on her other
 * clip by CAM++, which the engine never sees.
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decodeFile } from '../../src/audio/decode.js';
import { CamppEncoder } from '../../src/speakers/campplus.js';
import { cosineSimilarity } from '../../src/speakers/embedding.js';
import { buildTestApp, createVoice, evalDir, makeTempDir, multipartBody, type TestApp } from '../helpers/app.js';
import { camppModelPath, ge2eModelPath, modelFile } from '../helpers/models.js';
import { worldAddon } from '../helpers/vc-assets.js';

const evalClip = (name: string): string => path.join(evalDir, 'vc', 'resemblyzer_librispeech', name);

describe('POST /v1/audio/vc with the knn engine', () => {
  let t: TestApp;
  let dir: string;
  before(async () => {
    await Promise.all([
      modelFile('silero-vad', 'silero_vad.onnx'),
      modelFile('whisper-base-content', ''),
      ge2eModelPath(),
      camppModelPath(),
      worldAddon(),
    ]);
    t = await buildTestApp({ VOXD_VC_ENGINE: 'knn' });
    dir = makeTempDir('vc-knn');
  });
  after(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the output keeps the length and is nearer the target than the source was, and nearer the target than its source', async () => {
    const auth = { authorization: `Bearer ${t.key}` };
    const created = await createVoice(
      t,
      { name: 'Reader 3080' },
      {
        filename: 'enrollment.wav',
        content: readFileSync(evalClip('3080-5032-0001.wav')),
        contentType: 'audio/wav',
      },
    );
    const sourceFile = evalClip('2033-164914-0001.wav');
    const convertForm = multipartBody(
      { target_voice_id: created.voice_id, preserve_emotion: 'true' },
      { audio: { filename: 'source.wav', content: readFileSync(sourceFile), contentType: 'audio/wav' } },
    );
    const converted = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/vc',
      headers: { ...auth, 'content-type': convertForm.contentType },
      payload: convertForm.body,
    });
    assert.equal(converted.statusCode, 200, converted.body);
    assert.ok(Number(converted.headers['x-f0-correlation']) >= 0.85, `F0 correlation ${converted.headers['x-f0-correlation']}`);
    const outputFile = path.join(dir, 'output.wav');
    writeFileSync(outputFile, converted.rawPayload);

    const [sourceNative, outputNative] = await Promise.all([decodeFile(sourceFile), decodeFile(outputFile)]);
    assert.equal(outputNative.sampleRate, sourceNative.sampleRate);
    assert.equal(outputNative.samples.length, sourceNative.samples.length);
    const [source, output, target] = await Promise.all(
      [sourceFile, outputFile, evalClip('3080-5032-0004.wav')].map((file) => decodeFile(file, { sampleRate: 16000, channels: 1 })),
    );
    const campplus = await CamppEncoder.load(await camppModelPath());
    try {
      const [s, o, g] = [
        await campplus.embedUtterance(source!),
        await campplus.embedUtterance(output!),
        await campplus.embedUtterance(target!),
      ];
      const [outputToTarget, sourceToTarget, outputToSource] = [cosineSimilarity(o, g), cosineSimilarity(s, g), cosineSimilarity(o, s)];
      const figures = `CAM++: output to target ${outputToTarget.toFixed(3)}, source to target ${sourceToTarget.toFixed(3)}, output to source ${outputToSource.toFixed(3)}`;
      assert.ok(outputToTarget > sourceToTarget + 0.05, figures);
      assert.ok(outputToTarget > outputToSource, figures);
    } finally {
      await campplus.close();
    }
  });
});
