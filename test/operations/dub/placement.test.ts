/** Dubbing's line placement and its voices field (pure functions; the whole dub is tested in test/http/dubbing.test.ts). */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import { decodeFile } from '../../../src/audio/decode.js';
import { SileroVad, speechSegments, vadSampleRate } from '../../../src/audio/vad.js';
import { maxTempo, onsetSegmentation, parseVoices, placeLine, speechOnsets } from '../../../src/operations/dub/service.js';
import { VoxError } from '../../../src/core/errors.js';
import { evalDir, sharedModelsDir } from '../../helpers/app.js';

describe('dubbed line placement', () => {
  const open = { ownPreviousEndSeconds: 0, nextOtherStartSeconds: Infinity, totalSeconds: 60 };

  test('speech that fits starts at the source start at its own pace', () => {
    assert.deepEqual(placeLine({ startSeconds: 2, endSeconds: 5 }, 2.5, open), { startSeconds: 2, tempo: 1, limitSeconds: 60 });
  });

  test('longer speech is sped up to fit, at most 1.25x', () => {
    assert.ok(Math.abs(placeLine({ startSeconds: 2, endSeconds: 5 }, 3.3, open).tempo - 1.1) < 1e-9);
    assert.equal(placeLine({ startSeconds: 2, endSeconds: 5 }, 6, open).tempo, maxTempo);
    assert.equal(maxTempo, 1.25);
  });

  test('it may run on into silence, but never past the next line of another speaker or the end', () => {
    assert.equal(placeLine({ startSeconds: 2, endSeconds: 5 }, 6, { ...open, nextOtherStartSeconds: 5.4 }).limitSeconds, 5.4);
    assert.equal(placeLine({ startSeconds: 2, endSeconds: 5 }, 6, { ...open, totalSeconds: 5.2 }).limitSeconds, 5.2);
  });

  test("a speaker's line waits for their previous one to end, and then has less time", () => {
    const placed = placeLine({ startSeconds: 2, endSeconds: 5 }, 3, { ...open, ownPreviousEndSeconds: 2.6 });
    assert.equal(placed.startSeconds, 2.6);
    assert.equal(placed.tempo, 1.25);
  });
});

describe('dubbed line onsets', () => {
  const speech = [
    { startSeconds: 1, endSeconds: 4 },
    { startSeconds: 5, endSeconds: 8 },
    { startSeconds: 8.2, endSeconds: 12 },
  ];

  test('a segment start late into a stretch of speech moves back to where the speech began', () => {
    assert.deepEqual(speechOnsets([{ startSeconds: 1.4, endSeconds: 4 }], speech), [1]);
  });

  test('a segment start in the pause before its speech moves on to the speech', () => {
    assert.deepEqual(speechOnsets([{ startSeconds: 4.6, endSeconds: 8 }], speech), [5]);
  });

  test("a segment start deep in speech (another line's end) moves on to the next onset within its line", () => {
    assert.deepEqual(speechOnsets([{ startSeconds: 7.5, endSeconds: 12 }], speech), [8.2]);
  });

  test('nothing near: the start stays', () => {
    assert.deepEqual(speechOnsets([{ startSeconds: 10.5, endSeconds: 11.5 }], speech), [10.5]);
    assert.deepEqual(speechOnsets([{ startSeconds: 4.2, endSeconds: 4.8 }], speech), [4.2]);
  });

  test("two lines in one stretch: the second moves back no further than just after the first's start", () => {
    const lines = [
      { startSeconds: 5.1, endSeconds: 5.2 },
      { startSeconds: 5.6, endSeconds: 8 },
    ];
    const [first, second] = speechOnsets(lines, speech);
    assert.equal(first, 5);
    assert.ok(Math.abs(second! - 5.4) < 1e-9, `${second}`);
  });

  test('on real speech with music left in, segment starts 0.5 s late or early land within 0.3 s of the onsets', async () => {
    const rate = vadSampleRate;
    const load = async (file: string) => (await decodeFile(path.join(evalDir, file), { sampleRate: rate, channels: 1 })).samples;
    // Each utterance from its first 20 ms frame within 40 dB of its loudest, as the dubbing bench's clips cut them.
    const fromOnset = (samples: Float32Array): Float32Array => {
      const frame = rate / 50;
      const levels: number[] = [];
      for (let i = 0; i + frame <= samples.length; i += frame) {
        let sum = 0;
        for (let j = i; j < i + frame; j++) sum += samples[j]! ** 2;
        levels.push(10 * Math.log10(sum / frame + 1e-12));
      }
      const peak = Math.max(...levels);
      return samples.subarray(levels.findIndex((l) => l > peak - 40) * frame);
    };
    const first = fromOnset(await load('asr/pv_leopard/test_it.wav'));
    const second = fromOnset(await load('asr/pv_leopard/test_pt.wav'));
    const music = await load('sep/dnr_mix01/music.wav');
    const secondAt = 1 + first.length / rate + 0.8;
    const mix = new Float32Array(Math.round((secondAt + second.length / rate + 1) * rate));
    mix.set(first, rate);
    mix.set(second, Math.round(secondAt * rate));
    // The music 30 dB under the speech: what a dialogue stem keeps of a film's music.
    const rms = (x: Float32Array) => Math.sqrt(x.reduce((sum, v) => sum + v * v, 0) / x.length);
    const musicGain = (rms(first) / rms(music)) * 10 ** (-30 / 20);
    for (let i = 0; i < mix.length; i++) mix[i]! += musicGain * music[i % music.length]!;
    const vad = await SileroVad.load(path.join(sharedModelsDir, 'silero-vad/silero_vad.onnx'));
    try {
      const trueOnsets = [1, secondAt];
      const regions = speechSegments(await vad.probabilities(mix), mix.length / rate, onsetSegmentation);
      // As Whisper placed lines on the bench: late into the first line's speech, early into the pause before the second.
      const lines = [
        { startSeconds: trueOnsets[0]! + 0.5, endSeconds: 1 + first.length / rate },
        { startSeconds: trueOnsets[1]! - 0.5, endSeconds: secondAt + second.length / rate },
      ];
      const onsets = speechOnsets(lines, regions);
      for (const [i, onset] of onsets.entries())
        assert.ok(Math.abs(onset - trueOnsets[i]!) < 0.3, `line ${i}: ${onset} s, speech at ${trueOnsets[i]} s (issue 40: within 0.3 s)`);
    } finally {
      await vad.close();
    }
  });
});

describe('voices field', () => {
  test('clone or nothing names no voice; a JSON object maps speakers to voices', () => {
    assert.equal(parseVoices(undefined).size, 0);
    assert.equal(parseVoices(' clone ').size, 0);
    assert.deepEqual(
      [...parseVoices('{"SPEAKER_1": "af_heart", "SPEAKER_2": " voice_x "}')],
      [
        ['SPEAKER_1', 'af_heart'],
        ['SPEAKER_2', 'voice_x'],
      ],
    );
  });

  test('anything else is a 400 naming voices', () => {
    for (const bad of ['somebody', '[]', '{}', '{"SPEAKER_1": 3}', '{"": "af_heart"}', '{"SPEAKER_1": ""}'])
      assert.throws(
        () => parseVoices(bad),
        (error: unknown) => error instanceof VoxError && error.status === 400 && error.param === 'voices',
        bad,
      );
  });
});
