/** Pearson correlation and mean absolute difference of two log-mel spectrograms over their common frames. */
export function compareMels(a: Float32Array, b: Float32Array): { correlation: number; meanAbsDifference: number } {
  const n = Math.min(a.length, b.length);
  let meanA = 0;
  let meanB = 0;
  for (let i = 0; i < n; i++) {
    meanA += a[i]! / n;
    meanB += b[i]! / n;
  }
  let ab = 0;
  let aa = 0;
  let bb = 0;
  let absDifference = 0;
  for (let i = 0; i < n; i++) {
    const x = a[i]! - meanA;
    const y = b[i]! - meanB;
    ab += x * y;
    aa += x * x;
    bb += y * y;
    absDifference += Math.abs(a[i]! - b[i]!);
  }
  return { correlation: ab / Math.sqrt(aa * bb), meanAbsDifference: absDifference / n };
}
