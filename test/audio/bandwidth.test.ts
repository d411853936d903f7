import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import { isNarrowband, narrowbandEnergyShare, telephoneBand, upperBandEnergyShare } from '../../src/audio/bandwidth.js';
import { decodeFile } from '../../src/audio/decode.js';
import { evalDir } from '../helpers/app.js';

const decoded = async (name: string) => (await decodeFile(path.join(evalDir, name), { sampleRate: 16000, channels: 1 })).samples;

describe('telephone-band speech', () => {
  test('wideband eval speech is wideband; the same speech through the telephone line is narrowband, as long and as loud', async () => {
    for (const name of ['vc/resemblyzer_librispeech/3080-5032-0001.wav', 'asr/pv_leopard/test_es.wav']) {
      const samples = await decoded(name);
      assert.ok(upperBandEnergyShare(samples, 16000) > 5 * narrowbandEnergyShare, name);
      assert.equal(isNarrowband(samples, 16000), false, name);
      const line = await telephoneBand({ samples, sampleRate: 16000, channels: 1 });
      assert.equal(line.sampleRate, 16000);
      assert.ok(Math.abs(line.samples.length - samples.length) <= 16, `${line.samples.length} against ${samples.length}`);
      assert.ok(upperBandEnergyShare(line.samples, 16000) < narrowbandEnergyShare / 5, name);
      assert.equal(isNarrowband(line.samples, 16000), true, name);
      const energy = (v: Float32Array) => v.reduce((sum, x) => sum + x * x, 0);
      assert.ok(Math.abs(energy(line.samples) / energy(samples) - 1) < 0.2, name);
    }
  });

  test('a real telephone-era recording (jfk) is narrowband; silence and 8 kHz audio have no upper band', async () => {
    assert.equal(isNarrowband(await decoded('asr/whisper_cpp/jfk.wav'), 16000), true);
    assert.equal(upperBandEnergyShare(new Float32Array(16000), 16000), 0);
    assert.equal(
      upperBandEnergyShare(
        Float32Array.from({ length: 8000 }, (_, i) => Math.sin(i)),
        8000,
      ),
      0,
    );
  });
});
