import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { relativeErrorDb, siSdr } from '../../../bench/lib/sisdr.js';
import { decodeFile } from '../../../src/audio/decode.js';
import { stft } from '../../../src/audio/stft.js';
import { defaultSoundtrackOptions, SoundtrackSeparator } from '../../../src/operations/separate/engines/soundtrack.js';
import { SpleeterModel, spleeterBins, spleeterStft } from '../../../src/operations/separate/engines/spleeter.js';
import { separateWaveform, stemNames } from '../../../src/operations/separate/separator.js';
import { evalDir } from '../../helpers/app.js';
import { modelFile, testModelsDir } from '../../helpers/models.js';

const manifest = JSON.parse(readFileSync(path.join(evalDir, 'manifest.json'), 'utf8')) as {
  sep: Array<{ id: string; mixture: string; stems: Record<string, string> }>;
};
const dnrMixtures = manifest.sep.filter((entry) => entry.stems.speech);

describe('Spleeter in the soundtrack separator', () => {
  before(() =>
    Promise.all([modelFile('dtln', 'model_1.onnx'), modelFile('deepfilternet3', 'enc.onnx'), modelFile('spleeter-2stems', 'vocals.onnx')]),
  );

  it('vocal ratio: one value in [0, 1] per frame and bin below 11 kHz, for lengths that are not whole pieces', async () => {
    const spleeter = await SpleeterModel.load(path.join(testModelsDir, 'spleeter-2stems'));
    after(() => spleeter.close());
    // 12 s at 44.1 kHz: 517 frames, two pieces of 320 (the second partly zero padded).
    const mixture = await decodeFile(path.join(evalDir, dnrMixtures[1]!.mixture));
    const spec = stft(mixture.samples, spleeterStft);
    assert.ok(spec.frames > 512 && spec.frames % 64 !== 0);
    const { frames, vocals } = await spleeter.vocalRatio(spec, 0.5);
    assert.equal(frames, spec.frames);
    assert.equal(vocals.length, frames * spleeterBins);
    assert.ok(vocals.every((v) => v >= 0 && v <= 1));
    // Speech is in it: the ratio is not flat.
    const mean = vocals.reduce((a, b) => a + b, 0) / vocals.length;
    assert.ok(mean > 0.05 && mean < 0.95, `mean vocal ratio ${mean}`);
  });

  it('dialogue and music improve on the speech-models-only recipe on the real mixtures; stems still sum to the input', async () => {
    const withSpleeter = await SoundtrackSeparator.load(testModelsDir);
    const { spleeter: _unused, ...speechModelsOnly } = defaultSoundtrackOptions;
    const previous = await SoundtrackSeparator.load(testModelsDir, speechModelsOnly);
    after(() => Promise.all([withSpleeter.close(), previous.close()]));
    assert.equal(withSpleeter.modelId, 'deepfilternet3+dtln+spleeter-2stems');
    const gains = { dialogue: [] as number[], music: [] as number[] };
    for (const entry of dnrMixtures) {
      const mixture = await decodeFile(path.join(evalDir, entry.mixture));
      const [now, before] = await Promise.all([separateWaveform(withSpleeter, mixture), separateWaveform(previous, mixture)]);
      const sum = new Float32Array(mixture.samples.length);
      for (const name of stemNames)
        now[name].samples.forEach((v, i) => {
          sum[i]! += v;
        });
      assert.ok(
        relativeErrorDb(
          sum.map((v, i) => v - mixture.samples[i]!),
          mixture.samples,
        ) < -60,
        `${entry.id}: stems sum to the input`,
      );
      for (const [stem, reference] of [
        ['dialogue', 'speech'],
        ['music', 'music'],
      ] as const) {
        const target = (await decodeFile(path.join(evalDir, entry.stems[reference]!))).samples;
        gains[stem].push(siSdr(now[stem].samples, target) - siSdr(before[stem].samples, target));
      }
    }
    const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / values.length;
    // Measured: dialogue -1.7 / +3.9 / +4.5 dB, music +2.0 / +8.4 / +3.0 dB against the speech models alone.
    assert.ok(mean(gains.dialogue) > 1.5, `dialogue gains ${gains.dialogue.map((g) => g.toFixed(2)).join(', ')}`);
    assert.ok(mean(gains.music) > 2, `music gains ${gains.music.map((g) => g.toFixed(2)).join(', ')}`);
  });
});
