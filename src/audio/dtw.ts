/**
 * Dynamic time warping of two feature sequences (frame-major, `dims` values a frame): the cheapest path from both first
 * frames to both last ones in steps of (1, 0), (0, 1) and (1, 1), a pair of frames costing their Euclidean distance.
 * Memory and time grow with the product of the lengths (a 10 s sentence at 100 frames a second: 1 M cells).
 */
export function warpingPath(a: Float32Array, b: Float32Array, dims: number): { firstA: Int32Array; lastA: Int32Array } {
  const n = a.length / dims;
  const m = b.length / dims;
  if (n === 0 || m === 0) throw new RangeError('warpingPath needs frames on both sides');
  const cost = new Float64Array(n * m);
  /** The step that reached each cell: 0 diagonal, 1 from the frame of `a` before, 2 from the frame of `b` before. */
  const step = new Uint8Array(n * m);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < m; j++) {
      let distance = 0;
      for (let d = 0; d < dims; d++) {
        const difference = a[i * dims + d]! - b[j * dims + d]!;
        distance += difference * difference;
      }
      distance = Math.sqrt(distance);
      if (i === 0 && j === 0) {
        cost[0] = distance;
        continue;
      }
      const diagonal = i > 0 && j > 0 ? cost[(i - 1) * m + j - 1]! : Infinity;
      const fromA = i > 0 ? cost[(i - 1) * m + j]! : Infinity;
      const fromB = j > 0 ? cost[i * m + j - 1]! : Infinity;
      const best = Math.min(diagonal, fromA, fromB);
      cost[i * m + j] = best + distance;
      step[i * m + j] = best === diagonal ? 0 : best === fromA ? 1 : 2;
    }
  }
  // For each frame of `b`, the first and last frames of `a` the path pairs with it.
  const firstA = new Int32Array(m).fill(n);
  const lastA = new Int32Array(m).fill(-1);
  let i = n - 1;
  let j = m - 1;
  for (;;) {
    firstA[j] = Math.min(firstA[j]!, i);
    lastA[j] = Math.max(lastA[j]!, i);
    if (i === 0 && j === 0) break;
    const s = step[i * m + j]!;
    if (s === 0) {
      i--;
      j--;
    } else if (s === 1) i--;
    else j--;
  }
  return { firstA, lastA };
}
