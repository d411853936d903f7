/** The world-dsp voice converter on real clips: male source -> female target (profile from one clip, judged on another). */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decodeFile } from '../../../src/audio/decode.js';
import { rmsDb, type Waveform } from '../../../src/audio/waveform.js';
import { World } from '../../../src/audio/world.js';
import { speakerF0Range, WorldDspConverter } from '../../../src/operations/convert/engines/world-dsp.js';
import { loadProfileStats, storeProfileStats, type TargetProfileStats } from '../../../src/operations/convert/voice-converter.js';
import { SpeakerEncoder } from '../../../src/speakers/embedding.js';
import { ge2eModelPath } from '../../helpers/models.js';
import { sharedDir, worldAddon } from '../../helpers/vc-assets.js';

const clip = (name: string) => path.join(sharedDir, 'eval', 'vc', name);
const sourcePath = clip('resemblyzer_librispeech/2033-164914-0001.wav'); // male, 16 kHz
const vctkSourcePath = clip('rtvc_samples/p260_00000.wav'); // male, 24 kHz
const expressiveSourcePath = clip('pv_eagle/speaker_1_utt_1.wav'); // wide F0 range (about twice the target's)
const targetReference = clip('resemblyzer_librispeech/3080-5032-0001.wav'); // female
const targetHeldOut = clip('resemblyzer_librispeech/3080-5032-0004.wav');

describe('world-dsp voice conversion', { timeout: 300_000 }, () => {
  let world: World;
  let encoder: SpeakerEncoder;
  let converter: WorldDspConverter;
  let profile: TargetProfileStats;
  let source: Waveform;
  let emotional: Awaited<ReturnType<WorldDspConverter['convert']>>;

  before(async () => {
    world = World.load(await worldAddon());
    encoder = await SpeakerEncoder.load(await ge2eModelPath(), { threads: 2 });
    converter = new WorldDspConverter(world, encoder);
    const analysed = await converter.analyseTarget([await decodeFile(targetReference, { sampleRate: 16000, channels: 1 })]);
    // The lead stores the stats with the profile: convert from a stored copy.
    profile = loadProfileStats(storeProfileStats(analysed));
    source = await decodeFile(sourcePath, { channels: 1 });
    emotional = await converter.convert(source, profile, { preserveEmotion: true });
  });

  after(async () => {
    await encoder.close();
  });

  it('keeps the exact duration and sample rate, and is not silent', () => {
    assert.equal(emotional.waveform.sampleRate, source.sampleRate);
    assert.equal(emotional.waveform.samples.length, source.samples.length);
    const level = rmsDb(emotional.waveform.samples);
    assert.ok(
      Math.abs(level - rmsDb(source.samples)) < 6,
      `output level ${level.toFixed(1)} dB vs source ${rmsDb(source.samples).toFixed(1)} dB`,
    );
  });

  it('keeps the intonation: output F0 follows the source F0', () => {
    assert.ok(emotional.f0Correlation > 0.9, `F0 correlation ${emotional.f0Correlation}`);
  });

  it('moves F0 into the target register', async () => {
    const median = async (w: Waveform) => {
      const samples = w.sampleRate === 16000 ? w.samples : (await decodeFile(sourcePath, { sampleRate: 16000, channels: 1 })).samples;
      const options = { sampleRate: 16000, framePeriodMs: 5, fftSize: 1024, f0FloorHz: 60, f0CeilHz: 700, harvest: true };
      const f0 = await world.f0(samples, { ...options, ...(await speakerF0Range(world, samples, options)) });
      const voiced = Float64Array.from(f0.filter((v) => v > 0)).sort();
      return voiced[voiced.length >> 1]!;
    };
    const sourceHz = await median(source);
    const outputHz = await median(emotional.waveform);
    const targetHz = Number(profile.meta.medianF0Hz);
    assert.ok(
      Math.abs(Math.log(outputHz / targetHz)) < Math.log(1.12),
      `output median ${outputHz} Hz, target ${targetHz} Hz (source ${sourceHz} Hz)`,
    );
  });

  it('sounds more like the target than the source did (held-out target clip)', async () => {
    const heldOut = await encoder.embedUtterance(await decodeFile(targetHeldOut, { sampleRate: 16000, channels: 1 }));
    const cos = (a: Float32Array, b: Float32Array) => a.reduce((s, v, i) => s + v * b[i]!, 0);
    const before = cos(await encoder.embedUtterance(source), heldOut);
    const afterConversion = cos(await encoder.embedUtterance(emotional.waveform), heldOut);
    assert.ok(afterConversion > before + 0.1, `similarity to target ${afterConversion.toFixed(3)} vs source's ${before.toFixed(3)}`);
  });

  it('preserve_emotion=false maps an expressive source onto the target range; true keeps its range', async () => {
    const expressive = await decodeFile(expressiveSourcePath, { channels: 1 });
    const kept = await converter.convert(expressive, profile, { preserveEmotion: true });
    const neutral = await converter.convert(expressive, profile, { preserveEmotion: false });
    assert.equal(neutral.waveform.samples.length, expressive.samples.length);
    const spread = async (w: Waveform) => {
      const options = { sampleRate: 16000, framePeriodMs: 5, fftSize: 1024, f0FloorHz: 60, f0CeilHz: 700, harvest: true };
      const f0 = await world.f0(w.samples, { ...options, ...(await speakerF0Range(world, w.samples, options)) });
      const logs = Float64Array.from(f0.filter((v) => v > 0).map(Math.log)).sort();
      return logs[Math.floor(logs.length * 0.9)]! - logs[Math.floor(logs.length * 0.1)]!;
    };
    const [sourceSpread, keptSpread, neutralSpread] = [
      await spread(expressive),
      await spread(kept.waveform),
      await spread(neutral.waveform),
    ];
    assert.ok(Math.abs(Math.log(keptSpread / sourceSpread)) < 0.15, `kept range ${keptSpread} vs source ${sourceSpread}`);
    assert.ok(neutralSpread < 0.75 * keptSpread, `neutral range ${neutralSpread} vs kept ${keptSpread}`);
    assert.ok(neutral.f0Correlation > 0.85 && kept.f0Correlation > 0.85, `F0 correlation ${neutral.f0Correlation}, ${kept.f0Correlation}`);
  });

  it('converts a 24 kHz input and returns 24 kHz of the same length', async () => {
    const vctk = await decodeFile(vctkSourcePath, { channels: 1 });
    const result = await converter.convert(vctk, profile, { preserveEmotion: true });
    assert.equal(result.waveform.sampleRate, 24000);
    assert.equal(result.waveform.samples.length, vctk.samples.length);
    assert.ok(rmsDb(result.waveform.samples) > -40);
  });

  it('stops when aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(converter.convert(source, profile, { preserveEmotion: true, signal: controller.signal }));
  });
});

describe('world-dsp voice conversion of a long input', { timeout: 300_000 }, () => {
  it('goes through in chunks: exact length, speech everywhere the source has it', async () => {
    const world = World.load(await worldAddon());
    const converter = new WorldDspConverter(world, null);
    const profile = await converter.analyseTarget([await decodeFile(targetReference, { sampleRate: 16000, channels: 1 })]);
    const parts = await Promise.all(
      [
        'resemblyzer_librispeech/2033-164914-0001.wav',
        'resemblyzer_librispeech/2033-164914-0003.wav',
        'rtvc_samples/1320_00000.wav',
        'rtvc_samples/8230_00000.wav',
        'resemblyzer_librispeech/3005-163389-0001.wav',
        'resemblyzer_librispeech/3005-163389-0008.wav',
      ].map((name) => decodeFile(clip(name), { sampleRate: 16000, channels: 1 })),
    );
    // Twice over: about 70 s, so three chunks and two cuts.
    const all = [...parts, ...parts];
    const samples = new Float32Array(all.reduce((n, p) => n + p.samples.length, 0));
    let offset = 0;
    for (const part of all) {
      samples.set(part.samples, offset);
      offset += part.samples.length;
    }
    const long: Waveform = { samples, sampleRate: 16000, channels: 1 };
    assert.ok(samples.length / 16000 > 2 * 20, 'needs more than two 20 s chunks');
    const result = await converter.convert(long, profile, { preserveEmotion: true });
    assert.equal(result.waveform.samples.length, samples.length);
    assert.ok(
      result.warnings.some((w) => w.includes('F0 ratio')),
      'without an embedder the warp comes from the F0 ratio',
    );
    for (let start = 0; start + 32000 <= samples.length; start += 32000) {
      const sourceDb = rmsDb(samples.subarray(start, start + 32000));
      const outputDb = rmsDb(result.waveform.samples.subarray(start, start + 32000));
      if (sourceDb > -45)
        assert.ok(
          Math.abs(outputDb - sourceDb) < 6,
          `at ${start / 16000} s: output ${outputDb.toFixed(1)} dB, source ${sourceDb.toFixed(1)} dB`,
        );
    }
    assert.ok(result.f0Correlation > 0.85, `F0 correlation ${result.f0Correlation}`);
  });
});
