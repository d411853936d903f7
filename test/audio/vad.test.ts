import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decodeFile } from '../../src/audio/decode.js';
import { SileroVad, speechSegments, vadWindowSamples } from '../../src/audio/vad.js';
import { evalDir, sharedModelsDir } from '../helpers/app.js';

describe('Silero VAD on real audio', () => {
  let vad: SileroVad;
  before(async () => {
    vad = await SileroVad.load(path.join(sharedModelsDir, 'silero-vad/silero_vad.onnx'));
  });
  after(async () => vad.close());

  test('finds the pauses of jfk.wav and nothing in digital silence', async () => {
    const speech = await decodeFile(path.join(evalDir, 'asr/whisper_cpp/jfk.wav'), { sampleRate: 16000, channels: 1 });
    const padded = new Float32Array(speech.samples.length + 3 * 16000);
    padded.set(speech.samples, 16000);
    const probabilities = await vad.probabilities(padded);
    assert.equal(probabilities.length, Math.ceil(padded.length / vadWindowSamples));
    const segments = speechSegments(probabilities, padded.length / 16000);
    assert.ok(segments.length >= 3, `several phrases: ${JSON.stringify(segments)}`);
    assert.ok(segments[0]!.startSeconds > 1.1, 'the leading second of silence is not speech');
    assert.ok(segments.at(-1)!.endSeconds < 12 + 0.1, 'the trailing silence is not speech');
    const speechSeconds = segments.reduce((sum, s) => sum + s.endSeconds - s.startSeconds, 0);
    assert.ok(speechSeconds > 6 && speechSeconds < 10.5, `speech seconds ${speechSeconds}`);
    const silence = await vad.probabilities(new Float32Array(5 * 16000));
    assert.deepEqual(speechSegments(silence, 5), []);
  });

  test('streaming in odd-sized blocks gives the same probabilities as one call', async () => {
    const speech = await decodeFile(path.join(evalDir, 'asr/pv_leopard/test.wav'), { sampleRate: 16000, channels: 1 });
    const whole = await vad.probabilities(speech.samples);
    const stream = vad.stream();
    const parts: number[] = [];
    for (let offset = 0; offset < speech.samples.length; offset += 7001)
      parts.push(...(await stream.push(speech.samples.subarray(offset, offset + 7001))));
    parts.push(...(await stream.flush()));
    assert.equal(parts.length, whole.length);
    assert.ok(parts.every((p, i) => Math.abs(p - whole[i]!) < 1e-5));
  });

  test('long speech is split under maxSpeechSeconds at the quietest point', () => {
    const probabilities = new Float32Array(1000).fill(0.9);
    probabilities[400] = 0.2;
    const segments = speechSegments(probabilities, 32, { maxSpeechSeconds: 20, padBeforeSeconds: 0, padAfterSeconds: 0 });
    assert.ok(segments.length >= 2);
    assert.ok(segments.every((s) => s.endSeconds - s.startSeconds <= 20 + 1e-9));
    assert.ok(Math.abs(segments[0]!.endSeconds - 400 * 0.032) < 1e-9);
  });
});
