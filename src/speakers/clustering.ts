/**
 * Clustering of speaker-embedding windows for diarization, and the smoothing of window labels.
 * Pure functions over arrays.
 *
 * Clustering is agglomerative with average linkage on cosine distance, built with the nearest-neighbour-chain algorithm
 * (O(n^2) time and memory, so an hour of 0.75 s windows, about 5,000, stays cheap). The number of speakers is the one
 * asked for, else one more than the number of merges above `distanceThreshold` that join two large enough clusters,
 * kept within [minSpeakers, maxSpeakers]. Labels are then refined by reassigning each window to its nearest cluster
 * centroid, which windows holding two voices at once do not shape.
 */

export interface ClusteringOptions {
  numSpeakers?: number;
  minSpeakers?: number;
  maxSpeakers?: number;
  /** Average cosine distance above which clusters are not merged (when the count is free). */
  distanceThreshold?: number;
  /** Smaller clusters are not speakers (default 10% of the items, within 2..10; 1 below 10 items). */
  minClusterSize?: number;
  /** Centroid reassignment passes after the cut. Default 2. */
  refinementPasses?: number;
  /**
   * Per item: it holds more than one voice (overlapped speech). Such an item still gets a speaker, but a cluster's
   * centroid is the mean of its other items when it has any: a stretch of overlap that joined one speaker's cluster
   * would otherwise pull that centroid towards itself and keep its windows there.
   */
  mixed?: boolean[];
}

/** Chosen on the eval diarization files with the GE2E encoder and 1.5 s windows (see test/speakers). */
export const defaultDistanceThreshold = 0.3;

/**
 * A cluster under this many times the minimum size is not a speaker when most of its items are `mixed`: the few windows
 * around a stretch where two people talk at once are like each other and like neither voice (they made a third speaker
 * of AMI dev01's two, 1.2 s of one talking over the other). Chosen leave-one-out with the distance threshold over the
 * eval files and the generated conversations (bench/diarization.ts), where 1.5 to 3 score the same.
 */
const mixedClusterSizeFactor = 2;

export interface Merge {
  /** Cluster ids as in scipy's linkage: 0..n-1 are the inputs, n+i is the cluster made by merge i. */
  left: number;
  right: number;
  distance: number;
  size: number;
}

/** Average-linkage dendrogram of `n` items from their full distance matrix (row-major n x n); merges sorted by distance. */
export function averageLinkage(distances: Float32Array, n: number): Merge[] {
  // Working copy: the Lance-Williams update overwrites rows of merged clusters in place.
  const d = Float32Array.from(distances);
  const size = new Array<number>(n).fill(1);
  const active = new Uint8Array(n).fill(1);
  const raw: Array<{ a: number; b: number; distance: number }> = [];
  const chain: number[] = [];
  let remaining = n;
  while (remaining > 1) {
    if (chain.length === 0) chain.push(active.indexOf(1));
    for (;;) {
      const current = chain[chain.length - 1]!;
      const previous = chain.length > 1 ? chain[chain.length - 2]! : -1;
      // Nearest active neighbour; ties go to the previous chain element so the chain terminates.
      let nearest = previous;
      let best = previous >= 0 ? d[current * n + previous]! : Infinity;
      for (let j = 0; j < n; j++) {
        if (!active[j] || j === current) continue;
        const value = d[current * n + j]!;
        if (value < best) {
          best = value;
          nearest = j;
        }
      }
      if (nearest === previous) {
        chain.pop();
        chain.pop();
        const a = Math.min(current, previous);
        const b = Math.max(current, previous);
        raw.push({ a, b, distance: best });
        // Cluster b joins a; a's row becomes the size-weighted average of both (average linkage).
        for (let k = 0; k < n; k++) {
          if (!active[k] || k === a || k === b) continue;
          const value = (size[a]! * d[a * n + k]! + size[b]! * d[b * n + k]!) / (size[a]! + size[b]!);
          d[a * n + k] = value;
          d[k * n + a] = value;
        }
        size[a] = size[a]! + size[b]!;
        active[b] = 0;
        remaining--;
        break;
      }
      chain.push(nearest);
    }
  }
  // Order merges by height and give them scipy-style ids (a stable sort keeps the chain's order for ties).
  raw.sort((x, y) => x.distance - y.distance);
  const id = Array.from({ length: n }, (_, i) => i);
  const leader = Array.from({ length: n }, (_, i) => i);
  const find = (i: number): number => (leader[i] === i ? i : (leader[i] = find(leader[i]!)));
  const clusterSize = new Array<number>(n).fill(1);
  return raw.map((merge, index) => {
    const ra = find(merge.a);
    const rb = find(merge.b);
    const result: Merge = { left: id[ra]!, right: id[rb]!, distance: merge.distance, size: clusterSize[ra]! + clusterSize[rb]! };
    leader[rb] = ra;
    clusterSize[ra] = result.size;
    id[ra] = n + index;
    return result;
  });
}

/** Flat labels from the first `n - clusters` merges. Labels are numbered by first appearance. */
export function cutDendrogram(merges: Merge[], n: number, clusters: number): number[] {
  const leader = Array.from({ length: 2 * n - 1 }, (_, i) => i);
  const find = (i: number): number => (leader[i] === i ? i : (leader[i] = find(leader[i]!)));
  for (let m = 0; m < n - clusters; m++) {
    const merge = merges[m]!;
    leader[find(merge.left)] = n + m;
    leader[find(merge.right)] = n + m;
  }
  return renumber(Array.from({ length: n }, (_, i) => find(i)));
}

export function cosineDistanceMatrix(embeddings: Float32Array[]): Float32Array {
  const n = embeddings.length;
  const unit = embeddings.map((e) => {
    let norm = 0;
    for (const v of e) norm += v * v;
    norm = Math.sqrt(norm) || 1;
    return e.map((v) => v / norm);
  });
  const d = new Float32Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      let dot = 0;
      const a = unit[i]!;
      const b = unit[j]!;
      for (let k = 0; k < a.length; k++) dot += a[k]! * b[k]!;
      d[i * n + j] = d[j * n + i] = 1 - dot;
    }
  }
  return d;
}

/** The clusters of a flat labelling whose size and number of `mixed` items pass `keep`. */
function clustersWhere(labels: number[], mixed: boolean[], keep: (size: number, mixedItems: number) => boolean): number[] {
  const counts = new Map<number, { size: number; mixedItems: number }>();
  labels.forEach((label, i) => {
    const count = counts.get(label) ?? { size: 0, mixedItems: 0 };
    count.size++;
    if (mixed[i] === true) count.mixedItems++;
    counts.set(label, count);
  });
  return [...counts].filter(([, count]) => keep(count.size, count.mixedItems)).map(([label]) => label);
}

/**
 * Cluster labels (0-based, numbered by first appearance) for each embedding.
 *
 * Clusters smaller than `minClusterSize` (a stray window of laughter, noise or overlap), or under twice that and mostly
 * `mixed`, do not count as speakers: the dendrogram is cut as deep as needed to get the wanted number of speaker
 * clusters, and every item then goes to the nearest speaker cluster's centroid.
 */
export function clusterEmbeddings(embeddings: Float32Array[], options: ClusteringOptions = {}): number[] {
  const n = embeddings.length;
  if (n === 0) return [];
  if (n === 1) return [0];
  const merges = averageLinkage(cosineDistanceMatrix(embeddings), n);
  const minSize = options.minClusterSize ?? (n >= 10 ? Math.min(10, Math.max(2, Math.ceil(0.1 * n))) : 1);
  const mixed = options.mixed ?? [];
  const isSpeaker = (size: number, mixedItems: number): boolean =>
    size >= minSize && (size >= mixedClusterSizeFactor * minSize || 2 * mixedItems < size);
  let wanted: number;
  if (options.numSpeakers !== undefined) {
    wanted = Math.min(Math.max(1, options.numSpeakers), n);
  } else {
    // One speaker, plus one for every merge above the threshold that would join two speaker clusters (a stray window
    // joining late is not a second speaker).
    const threshold = options.distanceThreshold ?? defaultDistanceThreshold;
    const sizeOf = (id: number): number => (id < n ? 1 : merges[id - n]!.size);
    const mixedItems: number[] = [];
    const mixedOf = (id: number): number => (id < n ? Number(mixed[id] === true) : mixedItems[id - n]!);
    for (const m of merges) mixedItems.push(mixedOf(m.left) + mixedOf(m.right));
    const splits = merges.filter(
      (m) => m.distance > threshold && isSpeaker(sizeOf(m.left), mixedOf(m.left)) && isSpeaker(sizeOf(m.right), mixedOf(m.right)),
    ).length;
    const low = Math.min(n, Math.max(1, options.minSpeakers ?? 1));
    const high = Math.max(low, Math.min(n, options.maxSpeakers ?? n));
    wanted = Math.min(Math.max(1 + splits, low), high);
  }
  const any = (): boolean => true;
  let labels = cutDendrogram(merges, n, wanted);
  let speakers = clustersWhere(labels, mixed, isSpeaker);
  for (let clusters = wanted + 1; clusters <= n && speakers.length < wanted; clusters++) {
    labels = cutDendrogram(merges, n, clusters);
    speakers = clustersWhere(labels, mixed, isSpeaker);
  }
  // Too few items for `wanted` speaker clusters: fall back to the plain cut.
  if (speakers.length < wanted) {
    labels = cutDendrogram(merges, n, wanted);
    speakers = clustersWhere(labels, mixed, any);
  }
  labels = assignToNearest(embeddings, centroidsOf(embeddings, labels, speakers, mixed));
  for (let pass = 0; pass < (options.refinementPasses ?? 2); pass++) {
    labels = assignToNearest(embeddings, centroidsOf(embeddings, labels, clustersWhere(labels, mixed, any), mixed));
  }
  return labels;
}

/** Unit-norm mean direction of each listed cluster: of its items not marked `mixed`, or of all of them if each one is. */
export function centroidsOf(embeddings: Float32Array[], labels: number[], clusters: number[], mixed: boolean[] = []): Float64Array[] {
  const dimension = embeddings[0]!.length;
  return clusters.map((cluster) => {
    const centroid = new Float64Array(dimension);
    const onlyMixed = labels.every((label, i) => label !== cluster || mixed[i] === true);
    embeddings.forEach((e, i) => {
      if (labels[i] !== cluster || (mixed[i] === true && !onlyMixed)) return;
      const norm = Math.hypot(...e) || 1;
      for (let k = 0; k < dimension; k++) centroid[k] = centroid[k]! + e[k]! / norm;
    });
    const norm = Math.hypot(...centroid) || 1;
    return centroid.map((v) => v / norm);
  });
}

/** Index of the most cosine-similar centroid for each item, renumbered by first appearance. */
export function assignToNearest(embeddings: Float32Array[], centroids: Float64Array[]): number[] {
  return renumber(
    embeddings.map((e) => {
      let best = 0;
      let bestScore = -Infinity;
      centroids.forEach((centroid, c) => {
        let dot = 0;
        for (let k = 0; k < e.length; k++) dot += e[k]! * centroid[k]!;
        if (dot > bestScore) {
          bestScore = dot;
          best = c;
        }
      });
      return best;
    }),
  );
}

/** Relabels to 0, 1, 2... in order of first appearance. */
export function renumber(labels: number[]): number[] {
  const map = new Map<number, number>();
  return labels.map((label) => {
    if (!map.has(label)) map.set(label, map.size);
    return map.get(label)!;
  });
}

/**
 * Mode filter over the window sequence: each label becomes the most frequent one among the `width` windows centred on
 * it (ties keep the window's own label), removing one-window flips inside a turn.
 */
export function smoothLabels(labels: number[], width = 5): number[] {
  const half = Math.floor(width / 2);
  return labels.map((own, i) => {
    const counts = new Map<number, number>();
    for (let j = Math.max(0, i - half); j <= Math.min(labels.length - 1, i + half); j++)
      counts.set(labels[j]!, (counts.get(labels[j]!) ?? 0) + 1);
    let best = own;
    for (const [label, count] of counts) if (count > counts.get(best)!) best = label;
    return best;
  });
}
