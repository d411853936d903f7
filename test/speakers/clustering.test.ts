import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { averageLinkage, clusterEmbeddings, cosineDistanceMatrix, cutDendrogram, smoothLabels } from '../../src/speakers/clustering.js';

function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

/** Points scattered around `centres` on the unit sphere; `spread` is the noise scale. */
function blobs(
  centres: number,
  perCentre: number,
  spread: number,
  seed: number,
  dimension = 16,
): { points: Float32Array[]; truth: number[] } {
  const next = random(seed);
  const directions = Array.from({ length: centres }, () => Float32Array.from({ length: dimension }, () => next() * 2 - 1));
  const points: Float32Array[] = [];
  const truth: number[] = [];
  for (let i = 0; i < centres * perCentre; i++) {
    const c = i % centres;
    points.push(directions[c]!.map((v) => v + spread * (next() * 2 - 1)));
    truth.push(c);
  }
  return { points, truth };
}

/** Same partition up to renaming. */
function samePartition(a: number[], b: number[]): boolean {
  const forward = new Map<number, number>();
  const backward = new Map<number, number>();
  return a.every((x, i) => {
    const y = b[i]!;
    if ((forward.has(x) && forward.get(x) !== y) || (backward.has(y) && backward.get(y) !== x)) return false;
    forward.set(x, y);
    backward.set(y, x);
    return true;
  });
}

describe('average-linkage clustering', () => {
  test('the nearest-neighbour chain gives the same merge heights as the naive algorithm', () => {
    const { points } = blobs(4, 6, 0.8, 3);
    const n = points.length;
    const distances = cosineDistanceMatrix(points);
    const fast = averageLinkage(distances, n).map((m) => m.distance);
    // Naive: repeatedly merge the closest pair, cluster distance = mean pairwise item distance.
    let clusters = points.map((_, i) => [i]);
    const naive: number[] = [];
    while (clusters.length > 1) {
      let best = { a: 0, b: 1, d: Infinity };
      for (let a = 0; a < clusters.length; a++) {
        for (let b = a + 1; b < clusters.length; b++) {
          let sum = 0;
          for (const i of clusters[a]!) for (const j of clusters[b]!) sum += distances[i * n + j]!;
          const d = sum / (clusters[a]!.length * clusters[b]!.length);
          if (d < best.d) best = { a, b, d };
        }
      }
      naive.push(best.d);
      clusters = [...clusters.filter((_, k) => k !== best.a && k !== best.b), [...clusters[best.a]!, ...clusters[best.b]!]];
    }
    assert.equal(fast.length, naive.length);
    for (const [i, d] of fast.entries()) assert.ok(Math.abs(d - naive[i]!) < 1e-5, `merge ${i}: ${d} vs ${naive[i]}`);
    assert.deepEqual(
      cutDendrogram(averageLinkage(distances, n), n, n),
      points.map((_, i) => i),
    );
  });

  test('finds the number of well-separated speakers by itself', () => {
    for (const speakers of [1, 2, 3, 5]) {
      const { points, truth } = blobs(speakers, 12, 0.25, 10 + speakers);
      const labels = clusterEmbeddings(points, { distanceThreshold: 0.3 });
      assert.equal(new Set(labels).size, speakers, `${speakers} speakers`);
      assert.ok(samePartition(labels, truth));
    }
  });

  test('honours numSpeakers, minSpeakers and maxSpeakers', () => {
    const { points } = blobs(4, 10, 0.25, 21);
    assert.equal(new Set(clusterEmbeddings(points, { numSpeakers: 2 })).size, 2);
    assert.equal(new Set(clusterEmbeddings(points, { numSpeakers: 6, minClusterSize: 1 })).size, 6);
    assert.equal(new Set(clusterEmbeddings(points, { maxSpeakers: 3 })).size, 3);
    const { points: pair } = blobs(2, 10, 0.25, 22);
    assert.equal(new Set(clusterEmbeddings(pair, { minSpeakers: 3, minClusterSize: 1 })).size, 3);
    assert.deepEqual(clusterEmbeddings([]), []);
    assert.deepEqual(clusterEmbeddings([pair[0]!]), [0]);
  });

  /**
   * Two voices of 12 windows each and three windows of a stretch where both talk at once: those three share a component
   * (like each other) and mix the two directions, the first leaning towards B and the others towards A (AMI dev01's
   * pattern).
   */
  function overlapStretch(): { points: Float32Array[]; mixed: boolean[] } {
    const next = random(6);
    const direction = (): Float32Array => Float32Array.from({ length: 16 }, () => next() * 2 - 1);
    const [a, b, shared] = [direction(), direction(), direction()];
    const noisy = (v: Float32Array, spread: number): Float32Array => v.map((x) => x + spread * (next() * 2 - 1));
    const voiceA = Array.from({ length: 12 }, () => noisy(a, 0.3));
    const voiceB = Array.from({ length: 12 }, () => noisy(b, 0.3));
    const both = (weightA: number): Float32Array =>
      noisy(
        a.map((x, k) => weightA * x + (1 - weightA) * b[k]! + 0.8 * shared[k]!),
        0.1,
      );
    const points = [...voiceA, ...voiceB, both(0.45), both(0.7), both(0.6)];
    return { points, mixed: points.map((_, i) => i >= 24) };
  }

  test('a few windows holding two voices at once are not a speaker of their own, and each joins the voice nearest to it', () => {
    const { points, mixed } = overlapStretch();
    // Unmarked, the overlap windows are a third speaker, and with two speakers all three ride with A.
    assert.equal(new Set(clusterEmbeddings(points, { distanceThreshold: 0.5 })).size, 3);
    const unmarked = clusterEmbeddings(points, { numSpeakers: 2 });
    assert.deepEqual(unmarked.slice(24), [unmarked[0], unmarked[0], unmarked[0]]);
    const labels = clusterEmbeddings(points, { distanceThreshold: 0.5, mixed });
    assert.equal(new Set(labels).size, 2);
    assert.ok(
      labels.slice(0, 12).every((l) => l === labels[0]) && labels.slice(12, 24).every((l) => l === labels[12]) && labels[0] !== labels[12],
    );
    assert.deepEqual(labels.slice(24), [labels[12], labels[0], labels[0]]);
    assert.deepEqual(clusterEmbeddings(points, { numSpeakers: 2, mixed }), labels);
  });

  test('a voice heard only in overlap is still a speaker when it has enough windows', () => {
    const { points, truth } = blobs(2, 12, 0.25, 41);
    const labels = clusterEmbeddings(points, { distanceThreshold: 0.5, mixed: truth.map((t) => t === 1) });
    assert.ok(samePartition(labels, truth));
  });

  test('a stray window does not become a speaker of its own', () => {
    const { points, truth } = blobs(2, 15, 0.25, 31);
    const stray = Float32Array.from({ length: 16 }, (_, i) => (i % 2 ? 1 : -1));
    const labels = clusterEmbeddings([...points, stray]);
    assert.equal(new Set(labels).size, 2);
    assert.ok(samePartition(labels.slice(0, -1), truth));
  });
});

describe('smoothing window labels', () => {
  test('mode filter removes one-window flips but keeps real changes', () => {
    assert.deepEqual(smoothLabels([0, 0, 1, 0, 0, 1, 1, 1, 1], 3), [0, 0, 0, 0, 0, 1, 1, 1, 1]);
  });
});
