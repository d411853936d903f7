/** Voice conversion through HTTP: a real clip re-voiced as a profile cloned from real clips, and as a built-in voice. */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decodeFile } from '../../src/audio/decode.js';
import { rmsDb } from '../../src/audio/waveform.js';
import { defaultWorldAddonPath, World } from '../../src/audio/world.js';
import { buildTestApp, createVoice, evalDir, evalFile, makeTempDir, multipartBody, type TestApp } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';
import { worldAddon } from '../helpers/vc-assets.js';

const clip = (name: string): Buffer => readFileSync(path.join(evalDir, 'vc/resemblyzer_librispeech', name));
/** Source: a male reader; target: a female reader cloned from two clips. */
const sourceName = '2033-164914-0001.wav';

describe('POST /v1/audio/vc', () => {
  let t: TestApp;
  let voiceId: string;
  before(async () => {
    await Promise.all([
      modelFile('silero-vad', 'silero_vad.onnx'),
      modelFile('resemblyzer-ge2e', 'ge2e.onnx'),
      modelFile('kokoro-82m', ''),
      modelFile('kokoro-voices', ''),
      worldAddon(),
    ]);
    t = await buildTestApp();
    const clips = ['3080-5032-0001.wav', '3080-5032-0004.wav'].map((name) => evalFile(`vc/resemblyzer_librispeech/${name}`));
    voiceId = (await createVoice(t, { name: 'Reader 3080' }, clips)).voice_id;
  });
  after(async () => t.close());

  const convert = (fields: Record<string, string>, content = clip(sourceName)) => {
    const form = multipartBody(fields, { audio: { filename: 'source.wav', content } });
    return t.app.inject({
      method: 'POST',
      url: '/v1/audio/vc',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': form.contentType },
      payload: form.body,
    });
  };

  test('same duration, audible, closer to the target than the source was; preserve_emotion changes the F0 range', async () => {
    const source = await decodeFile(path.join(evalDir, 'vc/resemblyzer_librispeech', sourceName));
    const results = new Map<string, { file: string; headers: Record<string, unknown> }>();
    for (const preserve of ['true', 'false']) {
      const r = await convert({ target_voice_id: voiceId, preserve_emotion: preserve });
      assert.equal(r.statusCode, 200, r.body);
      assert.equal(r.headers['content-type'], 'audio/wav');
      const file = path.join(makeTempDir('vc'), `out-${preserve}.wav`);
      writeFileSync(file, r.rawPayload);
      results.set(preserve, { file, headers: r.headers });
    }
    const output = await decodeFile(results.get('true')!.file);
    assert.equal(output.sampleRate, source.sampleRate);
    assert.equal(output.samples.length, source.samples.length);
    assert.ok(rmsDb(output.samples) > -40, 'not silent');
    const headers = results.get('true')!.headers;
    const toTarget = Number(headers['x-similarity-to-target']);
    const sourceToTarget = Number(headers['x-source-similarity-to-target']);
    assert.ok(toTarget > sourceToTarget, `similarity to target ${toTarget} vs source ${sourceToTarget}`);
    assert.ok(Number(headers['x-f0-correlation']) > 0.8);

    const world = World.load(defaultWorldAddonPath());
    const f0Spread = async (file: string): Promise<number> => {
      const { samples } = await decodeFile(file, { sampleRate: 16000, channels: 1 });
      const f0 = await world.f0(samples, {
        sampleRate: 16000,
        framePeriodMs: 5,
        fftSize: 1024,
        f0FloorHz: 60,
        f0CeilHz: 700,
        harvest: true,
      });
      const logs = Array.from(f0)
        .filter((v) => v > 0)
        .map(Math.log)
        .sort((a, b) => a - b);
      return logs[Math.floor(logs.length * 0.9)]! - logs[Math.floor(logs.length * 0.1)]!;
    };
    const [kept, flattened] = [await f0Spread(results.get('true')!.file), await f0Spread(results.get('false')!.file)];
    assert.ok(Math.abs(kept - flattened) > 0.02, `F0 spread with emotion ${kept.toFixed(3)} vs flattened ${flattened.toFixed(3)}`);
  });

  test('json variant: download URL and the metrics', async () => {
    const r = await convert({ target_voice_id: voiceId, response_format: 'json', format: 'mp3' });
    assert.equal(r.statusCode, 200, r.body);
    const body = r.json();
    assert.match(body.url, /^\/v1\/audio\/files\//);
    for (const key of ['similarity_to_target', 'similarity_to_source', 'f0_correlation']) assert.equal(typeof body[key], 'number');
  });

  test('a built-in voice as target: analysed once from its own speech (kept beside the models), then converted toward it', async () => {
    const first = await convert({ target_voice_id: 'af_heart', response_format: 'json' });
    assert.equal(first.statusCode, 200, first.body);
    const body = first.json();
    assert.ok(
      body.similarity_to_target > body.source_similarity_to_target,
      `to target ${body.similarity_to_target}, source was ${body.source_similarity_to_target}`,
    );
    // The analysis is stored beside the models and reused.
    const stores = path.join(t.config.modelsDir, '.builtin-voices');
    assert.ok(readdirSync(stores).some((store) => existsSync(path.join(stores, store, 'af_heart', 'world-dsp.json'))));
    const computed = t.container.voices.builtinAnalysesComputed;
    const second = await convert({ target_voice_id: 'af_heart', response_format: 'json' });
    assert.equal(t.container.voices.builtinAnalysesComputed, computed);
    assert.equal(second.statusCode, 200);
    assert.equal(second.json().similarity_to_target, body.similarity_to_target);
  });

  test('unknown target -> 404; garbage audio -> 415', async () => {
    assert.equal((await convert({ target_voice_id: 'voice_missing' })).statusCode, 404);
    const garbage = await convert({ target_voice_id: voiceId }, Buffer.from('garbage'.repeat(200)));
    assert.equal(garbage.statusCode, 415);
  });
});
