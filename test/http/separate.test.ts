/** Separation through HTTP with the real engines on the eval mixtures. */
import assert from 'node:assert/strict';
import { createWriteStream, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { setTimeout } from 'node:timers/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import yauzl from 'yauzl';
import { relativeErrorDb, siSdr } from '../../bench/lib/sisdr.js';
import { decodeFile } from '../../src/audio/decode.js';
import { encodeWaveform } from '../../src/audio/encode.js';
import { peak, rmsDb, type Waveform } from '../../src/audio/waveform.js';
import { buildTestApp, evalDir, makeTempDir, multipartBody, type TestApp } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';

const manifest = JSON.parse(readFileSync(path.join(evalDir, 'manifest.json'), 'utf8')) as {
  sep: Array<{ id: string; mixture: string; stems: Record<string, string> }>;
};
const mix = manifest.sep.find((m) => m.id === 'dnr_mix01')!;
const mixturePath = path.join(evalDir, mix.mixture);

interface StemInfo {
  name: string;
  url: string;
  rms_db: number | null;
  peak_db: number | null;
  active_fraction: number;
}

describe('POST /v1/audio/separate', () => {
  let t: TestApp;
  let mixture: Waveform;
  before(async () => {
    await Promise.all([
      modelFile('dtln', 'model_1.onnx'),
      modelFile('deepfilternet3', 'enc.onnx'),
      modelFile('spleeter-2stems', 'vocals.onnx'),
    ]);
    t = await buildTestApp();
    mixture = await decodeFile(mixturePath);
  });
  after(async () => t.close());

  const separate = (fields: Record<string, string>) => {
    const form = multipartBody(fields, { audio: { filename: 'mixture.wav', content: readFileSync(mixturePath) } });
    return t.app.inject({
      method: 'POST',
      url: '/v1/audio/separate',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': form.contentType },
      payload: form.body,
    });
  };
  const download = async (url: string): Promise<Waveform> => {
    const r = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${t.key}` } });
    assert.equal(r.statusCode, 200);
    const file = path.join(makeTempDir('stem'), 'stem.wav');
    writeFileSync(file, r.rawPayload);
    return decodeFile(file);
  };

  test('JSON: four stems with the input shape that sum to it; dialogue better than the mixture; files expire', async () => {
    const r = await separate({});
    assert.equal(r.statusCode, 200, r.body);
    const body = r.json() as { duration: number; sample_rate: number; stems: StemInfo[] };
    assert.deepEqual(
      body.stems.map((s) => s.name),
      ['dialogue', 'music', 'sfx', 'ambience'],
    );
    assert.equal(body.sample_rate, mixture.sampleRate);
    const sum = new Float32Array(mixture.samples.length);
    const stems = new Map<string, Waveform>();
    for (const info of body.stems) {
      const stem = await download(info.url);
      assert.equal(stem.samples.length, mixture.samples.length);
      assert.equal(stem.channels, mixture.channels);
      stem.samples.forEach((v, i) => {
        sum[i]! += v;
      });
      stems.set(info.name, stem);
      // dnr_mix01 has no ambience source: its ambience stem is the stationary floor only (active 0.46 since Spleeter's music).
      const minActive = info.name === 'ambience' ? 0.3 : 0.5;
      assert.ok(info.active_fraction > minActive && info.active_fraction <= 1, `${info.name} active ${info.active_fraction}`);
      // Levels describe the file as written.
      assert.ok(Math.abs(info.rms_db! - rmsDb(stem.samples)) < 0.1, `${info.name} rms ${info.rms_db} vs ${rmsDb(stem.samples)}`);
      assert.ok(Math.abs(info.peak_db! - 20 * Math.log10(peak(stem.samples))) < 0.1, `${info.name} peak`);
    }
    // 16-bit files: the sum matches to quantisation error.
    const error = relativeErrorDb(
      sum.map((v, i) => v - mixture.samples[i]!),
      mixture.samples,
    );
    assert.ok(error < -60, `sum error ${error.toFixed(1)} dB`);
    const speech = await decodeFile(path.join(evalDir, mix.stems.speech!));
    const gain = siSdr(stems.get('dialogue')!.samples, speech.samples) - siSdr(mixture.samples, speech.samples);
    assert.ok(gain > 3, `dialogue SI-SDR improvement ${gain.toFixed(2)} dB`);

    assert.equal(await t.container.files.sweep(new Date(Date.now() + (t.config.fileTtlSeconds + 1) * 1000)), 4);
    const gone = await t.app.inject({ method: 'GET', url: body.stems[0]!.url, headers: { authorization: `Bearer ${t.key}` } });
    assert.equal(gone.statusCode, 404);
  });

  test('a subset comes with the residual; duplicates are ignored; flac at another rate', async () => {
    const r = await separate({ stems: 'dialogue, dialogue', format: 'flac', sample_rate: '16000' });
    assert.equal(r.statusCode, 200, r.body);
    const body = r.json() as { sample_rate: number; stems: StemInfo[] };
    assert.deepEqual(
      body.stems.map((s) => s.name),
      ['dialogue', 'residual'],
    );
    assert.equal(body.sample_rate, 16000);
    const dialogue = await download(body.stems[0]!.url);
    assert.equal(dialogue.sampleRate, 16000);
  });

  test('zip: one archive with a file per stem, summing to the input; no scratch files remain', async () => {
    const r = await separate({ response_format: 'zip', stems: 'music,sfx' });
    assert.equal(r.statusCode, 200);
    assert.equal(r.headers['content-type'], 'application/zip');
    const zip = await yauzl.fromBufferPromise(r.rawPayload, { lazyEntries: true });
    const names: string[] = [];
    const sum = new Float32Array(mixture.samples.length);
    const dir = makeTempDir('zip');
    for await (const entry of zip.eachEntry()) {
      names.push(entry.fileName);
      const file = path.join(dir, entry.fileName);
      await pipeline(await zip.openReadStreamPromise(entry), createWriteStream(file));
      (await decodeFile(file)).samples.forEach((v, i) => {
        sum[i]! += v;
      });
    }
    assert.deepEqual(names.sort(), ['music.wav', 'residual.wav', 'sfx.wav']);
    const error = relativeErrorDb(
      sum.map((v, i) => v - mixture.samples[i]!),
      mixture.samples,
    );
    assert.ok(error < -60, `sum error ${error.toFixed(1)} dB`);
    const tempDir = path.dirname(t.container.scratch.path());
    await setTimeout(100);
    assert.deepEqual(
      readdirSync(tempDir).filter((name) => name.endsWith('-stems')),
      [],
    );
  });

  test('digital silence: every stem is silence with active_fraction 0, not an error', async () => {
    const silence = await encodeWaveform({ samples: new Float32Array(2 * 48000 * 3), sampleRate: 48000, channels: 2 }, { format: 'wav' });
    const form = multipartBody({}, { audio: { filename: 'silence.wav', content: silence } });
    const r = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/separate',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': form.contentType },
      payload: form.body,
    });
    assert.equal(r.statusCode, 200, r.body);
    const body = r.json() as { duration: number; channels: number; stems: StemInfo[] };
    assert.equal(body.duration, 3);
    assert.equal(body.channels, 2);
    for (const info of body.stems) {
      assert.equal(info.active_fraction, 0, info.name);
      assert.equal(info.rms_db, null, info.name);
      assert.equal(peak((await download(info.url)).samples), 0, info.name);
    }
  });

  test('garbage -> 415; unknown stem -> 422', async () => {
    const form = multipartBody({}, { audio: { filename: 'x.wav', content: Buffer.from('not audio'.repeat(50)) } });
    const garbage = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/separate',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': form.contentType },
      payload: form.body,
    });
    assert.equal(garbage.statusCode, 415);
    assert.equal((await separate({ stems: 'vocals' })).statusCode, 422);
  });
});
