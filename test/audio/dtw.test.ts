/** Dynamic time warping (src/audio/dtw.ts): the path through a stretched copy finds where each frame went. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { warpingPath } from '../../src/audio/dtw.js';

describe('warpingPath', () => {
  test('each frame of the template is paired with the frames of its stretched copy, in order', () => {
    // Template: 4 distinct 2-d frames; the sequence holds them 1, 3, 2 and 1 times.
    const template = Float32Array.of(0, 0, 1, 0, 0, 1, 1, 1);
    const sequence = Float32Array.of(0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 0, 1, 1, 1);
    const { firstA, lastA } = warpingPath(sequence, template, 2);
    assert.deepEqual([...firstA], [0, 1, 4, 6]);
    assert.deepEqual([...lastA], [0, 3, 5, 6]);
  });

  test('no frames on a side is an error', () => {
    assert.throws(() => warpingPath(new Float32Array(0), Float32Array.of(1), 1), RangeError);
  });
});
