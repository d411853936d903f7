/** Dubbing's line placement and its voices field (pure functions; the whole dub is tested in test/http/dubbing.test.ts). */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { maxTempo, parseVoices, placeLine } from '../../../src/operations/dub/service.js';
import { VoxError } from '../../../src/core/errors.js';

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
