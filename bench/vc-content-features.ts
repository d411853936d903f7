/**
 * Which frame feature matches the same sound across speakers (issue 36, kNN voice conversion's content features):
 * Whisper base's encoder after each of its 6 blocks (the residual stream, no final LayerNorm) against log-mel and MFCC.
 * Writes bench/results/vc-content-features.json.
 *
 * Data: Kokoro says the same 6 English sentences in 8 US voices (4 women, 4 men); the voices are split into a tuning set
 * (the layer is picked there) and a held-out set (reported), each giving its 6 voice pairs. Per pair, each sentence of
 * voice A is aligned to the same sentence of voice B by DTW on a consensus distance (every candidate feature's cosine
 * distance over its mean, averaged, so no candidate is favoured). Retrieval: every speech frame of A (20 ms, within
 * 35 dB of the loudest) looks up its nearest frames by cosine among all of B's frames (all 6 sentences pooled, as kNN
 * conversion pools a target's frames); top-1 is right when it lies in the same sentence within +-1 frame of a frame DTW
 * aligned it to; precision@4 is the share of the 4 nearest that are right (kNN conversion averages 4).
 * Each feature raw and with the speaker's mean frame removed ("centred": speaker identity sits partly in the mean).
 * Issue 36 check (B's audio after 1 s of silence, "-shifted": its frames of speech lie 50 positions later): retrieval
 * does not collapse (held out, block 4 97.1% -> 96.6% top-1, block 3 70% -> 66%), and the same audio encoded at two
 * offsets gives cosine 0.96 for the same sound at another position against 0.56 for another sound at the same position
 * (block 4), so the absolute positional embedding is not what makes block 4 match. Without it (graph option positions
 * 'none', or its mean row for every frame: 'mean') the blocks lose the sound (block 4 13% / 8% top-1): Whisper's blocks
 * need it. What is left to explain the high scores is context: both voices say the same sentences, and attention over
 * the utterance makes a frame encode its neighbours; a conversion's target never says the source's sentences.
 *
 * Run: VOXD_SHARED_DIR=/work/shared node --import tsx bench/vc-content-features.ts
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { whisperLogMel } from '../src/audio/mel.js';
import { resample } from '../src/audio/resample.js';
import { buildWhisperEncoderOnnx, readGgmlEncoder } from '../src/models/convert/whisper-encoder-to-onnx.js';
import { ContentEncoder, contentHopSamples } from '../src/operations/convert/content-encoder.js';
import { makeTempDir } from '../test/helpers/app.js';
import { modelFile } from '../test/helpers/models.js';
import { collect, loadKokoro } from '../test/helpers/tts.js';
import { repoRoot } from '../test/helpers/vc-assets.js';
import { otherVoiceKokoro, roundTripKokoro } from './lib/sentences.js';

const sentences = [...roundTripKokoro['en-us']!, ...otherVoiceKokoro['en-us']!.sentences];
const voiceSets = {
  tuning: ['af_heart', 'am_adam', 'af_sarah', 'am_eric'],
  heldOut: ['af_bella', 'am_michael', 'af_nicole', 'am_liam'],
} as const;
const speechRangeDb = 35;
const mfccCoefficients = 20;
/** The shifted condition's leading silence, in content frames (1 s). */
const shiftFrames = 50;
const positionChoices = ['absolute', 'mean', 'none'] as const;
type Positions = (typeof positionChoices)[number];

interface Feature {
  frames: number;
  dims: number;
  data: Float32Array;
}

/** Per voice: per sentence, every candidate feature and which frames are speech. */
type VoiceFeatures = Array<{ features: Record<string, Feature>; shiftedFeatures: Record<string, Feature>; speech: Uint8Array }>;

async function main(): Promise<void> {
  const dir = makeTempDir('vc-content-features');
  const encoderGgml = readGgmlEncoder(await readFile(await modelFile('whisper-base', 'ggml-base.bin')));
  const encoders = {} as Record<Positions, ContentEncoder>;
  for (const positions of positionChoices) {
    const graphPath = path.join(dir, `encoder-blocks-${positions}.onnx`);
    await writeFile(
      graphPath,
      buildWhisperEncoderOnnx(encoderGgml, 'float32', { layers: encoderGgml.layers, blockOutputs: true, positions }),
    );
    encoders[positions] = await ContentEncoder.load(graphPath, { threads: 2 });
  }
  const kokoro = await loadKokoro(2);
  const blockFeatures = async (positions: Positions, samples: Float32Array): Promise<Record<string, Feature>> => {
    const outputs = await encoders[positions].allOutputs(samples);
    return Object.fromEntries(Object.entries(outputs).map(([name, f]) => [name === 'embd' ? `block_${encoderGgml.layers}` : name, f]));
  };
  const silence = new Float32Array(shiftFrames * contentHopSamples);

  const voices = new Map<string, VoiceFeatures>();
  const positionCheck: Record<string, { sameSound: number[]; samePosition: number[] }> = {};
  for (const voice of [...voiceSets.tuning, ...voiceSets.heldOut]) {
    const perSentence: VoiceFeatures = [];
    for (const text of sentences) {
      const audio = await collect(kokoro.synthesize({ text, language: 'en-us', voice: { id: voice } }));
      const samples = (await resample({ samples: audio.samples, sampleRate: audio.sampleRate, channels: 1 }, 16000)).samples;
      const shifted = new Float32Array(silence.length + samples.length);
      shifted.set(samples, silence.length);
      const features: Record<string, Feature> = {};
      const shiftedFeatures: Record<string, Feature> = {};
      const speech = speechFrames(samples, Math.ceil(whisperLogMel(samples).frames / 2));
      for (const positions of positionChoices) {
        const suffix = positions === 'absolute' ? '' : `-pos_${positions}`;
        const plain = await blockFeatures(positions, samples);
        const late = await blockFeatures(positions, shifted);
        for (const [name, feature] of Object.entries(plain)) {
          features[`${name}${suffix}`] = feature;
          // The shifted audio's frames of the speech, indexed as the unshifted ones.
          shiftedFeatures[`${name}${suffix}`] = dropFrames(late[name]!, shiftFrames);
          const check = (positionCheck[`${name}${suffix}`] ??= { sameSound: [], samePosition: [] });
          const { sameSound, samePosition } = positionCosines(feature, late[name]!, speech);
          check.sameSound.push(sameSound);
          check.samePosition.push(samePosition);
        }
      }
      Object.assign(features, melBaselines(samples, features[`block_${encoderGgml.layers}`]!.frames));
      perSentence.push({ features, shiftedFeatures, speech });
    }
    voices.set(voice, perSentence);
    process.stderr.write(`${voice}: ${perSentence.reduce((n, s) => n + s.speech.length, 0)} frames\n`);
  }
  await kokoro.close();
  for (const encoder of Object.values(encoders)) await encoder.close();

  const allNames = Object.keys(voices.get(voiceSets.tuning[0])![0]!.features).sort();
  // The DTW consensus uses the features a position cannot favour beyond the originals: Whisper's own and the mel ones.
  const alignNames = allNames.filter((name) => !name.includes('-pos_'));
  const results: Record<string, Record<string, { top1: number; precisionAt4: number }>> = {};
  for (const [setName, set] of Object.entries(voiceSets)) {
    const perFeature: Record<string, { top1: number[]; precisionAt4: number[] }> = {};
    for (let a = 0; a < set.length; a++) {
      for (let b = a + 1; b < set.length; b++) {
        const [voiceA, voiceB] = [voices.get(set[a]!)!, voices.get(set[b]!)!];
        const alignments = voiceA.map((sentence, s) => align(sentence.features, voiceB[s]!.features, alignNames));
        for (const name of allNames) {
          const whisper = name.startsWith('block_');
          const variants: Array<{ label: string; centred: boolean; shifted: boolean }> = [
            { label: name, centred: false, shifted: false },
            ...(name.includes('-pos_') ? [] : [{ label: `${name}-centred`, centred: true, shifted: false }]),
            ...(whisper ? [{ label: `${name}-shifted`, centred: false, shifted: true }] : []),
          ];
          for (const { label, centred, shifted } of variants) {
            const score = retrieval(voiceA, voiceB, alignments, name, centred, shifted);
            perFeature[label] ??= { top1: [], precisionAt4: [] };
            perFeature[label].top1.push(score.top1);
            perFeature[label].precisionAt4.push(score.precisionAt4);
          }
        }
        process.stderr.write(`${setName} ${set[a]} / ${set[b]} done\n`);
      }
    }
    results[setName] = Object.fromEntries(
      Object.entries(perFeature).map(([label, s]) => [label, { top1: mean(s.top1), precisionAt4: mean(s.precisionAt4) }]),
    );
  }
  // The layer is picked on the shifted condition: a conversion's target frames lie at unrelated offsets.
  const pick = (suffix: string) => {
    const labels = Object.keys(results.tuning!).filter((label) => label.startsWith('block_') && label.endsWith(`${suffix}-shifted`));
    const best = labels.filter((label) => suffix !== '' || !label.includes('-pos_'));
    return best.reduce((x, y) => (results.tuning![y]!.top1 > results.tuning![x]!.top1 ? y : x));
  };
  const picked = Object.fromEntries(
    positionChoices.map((positions) => {
      const label = pick(positions === 'absolute' ? '' : `-pos_${positions}`);
      const unshifted = label.replace(/-shifted$/, '');
      return [positions, { label, heldOut: results.heldOut![label], heldOutUnshifted: results.heldOut![unshifted] }];
    }),
  );
  const report = {
    description:
      'Frame-level same-sound retrieval between two Kokoro voices saying the same 6 sentences (DTW-aligned, top-1 within +-1 ' +
      'frame of 20 ms among all frames of the other voice; precision@4 of the 4 nearest). Whisper base encoder blocks ' +
      '(residual stream) vs log-mel and MFCC; "-centred": the speaker mean frame removed; "-shifted": the other voice\'s ' +
      `audio has ${shiftFrames * 20} ms of silence prepended (its frames of the speech lie ${shiftFrames} positions later); ` +
      '"-pos_mean": the graph adds the mean positional-embedding row to every frame instead of Whisper\'s absolute positional ' +
      'embedding, "-pos_none": nothing. The layer is picked on the tuning voices (shifted condition), reported on the held-out ones. ' +
      'positionCheck: mean cosine between the features of the same audio encoded plain and after the silence: of a frame of ' +
      'speech and its own sound at the shifted position (sameSound) vs the different sound at its position (samePosition).',
    sentences,
    voiceSets,
    shiftSeconds: (shiftFrames * contentHopSamples) / 16000,
    picked,
    positionCheck: Object.fromEntries(
      Object.entries(positionCheck).map(([name, c]) => [name, { sameSound: mean(c.sameSound), samePosition: mean(c.samePosition) }]),
    ),
    heldOut: sortByTop1(results.heldOut!),
    tuning: sortByTop1(results.tuning!),
    loadAverage: os.loadavg()[0],
  };
  const out = path.join(repoRoot, 'bench', 'results', 'vc-content-features.json');
  await mkdir(path.dirname(out), { recursive: true });
  await writeFile(out, `${JSON.stringify(report, null, 2)}\n`);
  console.log(JSON.stringify({ picked, positionCheck: report.positionCheck }, null, 2));
}

/** Frames `count` onwards. */
function dropFrames(feature: Feature, count: number): Feature {
  return { frames: feature.frames - count, dims: feature.dims, data: feature.data.slice(count * feature.dims) };
}

/**
 * Mean cosines over speech frames t >= shiftFrames: plain frame t against the shifted encoding's frame t + shiftFrames
 * (same sound, other position) and its frame t (same position, the sound shiftFrames earlier).
 */
function positionCosines(plain: Feature, shifted: Feature, speech: Uint8Array): { sameSound: number; samePosition: number } {
  const cosine = (x: Float32Array, i: number, y: Float32Array, j: number, dims: number) => {
    let [dot, xx, yy] = [0, 1e-12, 1e-12];
    for (let d = 0; d < dims; d++) {
      const [a, b] = [x[i * dims + d]!, y[j * dims + d]!];
      dot += a * b;
      xx += a * a;
      yy += b * b;
    }
    return dot / Math.sqrt(xx * yy);
  };
  const sameSound: number[] = [];
  const samePosition: number[] = [];
  for (let t = shiftFrames; t < Math.min(plain.frames, speech.length); t++) {
    if (!speech[t] || !speech[t - shiftFrames]) continue;
    sameSound.push(cosine(plain.data, t, shifted.data, t + shiftFrames, plain.dims));
    samePosition.push(cosine(plain.data, t, shifted.data, t, plain.dims));
  }
  return { sameSound: mean(sameSound), samePosition: mean(samePosition) };
}

/** Log-mel (Whisper's, pairs of 10 ms frames averaged to the encoder's 20 ms) and MFCC (DCT-II of it, c1..c20). */
function melBaselines(samples: Float32Array, frames: number): Record<string, Feature> {
  const mel = whisperLogMel(samples);
  const bands = mel.melBands;
  const logMel = new Float32Array(frames * bands);
  for (let t = 0; t < frames; t++) {
    const pair = [2 * t, Math.min(2 * t + 1, mel.frames - 1)];
    for (let b = 0; b < bands; b++) logMel[t * bands + b] = (mel.data[pair[0]! * bands + b]! + mel.data[pair[1]! * bands + b]!) / 2;
  }
  const mfcc = new Float32Array(frames * mfccCoefficients);
  for (let t = 0; t < frames; t++) {
    for (let c = 1; c <= mfccCoefficients; c++) {
      let sum = 0;
      for (let b = 0; b < bands; b++) sum += logMel[t * bands + b]! * Math.cos((Math.PI * c * (b + 0.5)) / bands);
      mfcc[t * mfccCoefficients + c - 1] = sum;
    }
  }
  return { logmel: { frames, dims: bands, data: logMel }, mfcc: { frames, dims: mfccCoefficients, data: mfcc } };
}

function speechFrames(samples: Float32Array, frames: number): Uint8Array {
  const db = Float64Array.from({ length: frames }, (_, t) => {
    let sum = 1e-12;
    const end = Math.min(samples.length, (t + 1) * contentHopSamples);
    for (let i = t * contentHopSamples; i < end; i++) sum += samples[i]! * samples[i]!;
    return 10 * Math.log10(sum / contentHopSamples);
  });
  const loudest = Math.max(...db);
  return Uint8Array.from(db, (v) => (v > loudest - speechRangeDb ? 1 : 0));
}

/** Unit-length rows (optionally after removing the mean row over all of a voice's sentences). */
function normalisedRows(features: Feature[], centred: boolean): Float32Array[] {
  const dims = features[0]!.dims;
  const meanRow = new Float64Array(dims);
  if (centred) {
    let count = 0;
    for (const f of features) {
      for (let t = 0; t < f.frames; t++) for (let d = 0; d < dims; d++) meanRow[d] = meanRow[d]! + f.data[t * dims + d]!;
      count += f.frames;
    }
    for (let d = 0; d < dims; d++) meanRow[d] = meanRow[d]! / count;
  }
  return features.map((f) => {
    const out = new Float32Array(f.frames * dims);
    for (let t = 0; t < f.frames; t++) {
      let norm = 1e-12;
      for (let d = 0; d < dims; d++) {
        const v = f.data[t * dims + d]! - meanRow[d]!;
        out[t * dims + d] = v;
        norm += v * v;
      }
      const scale = 1 / Math.sqrt(norm);
      for (let d = 0; d < dims; d++) out[t * dims + d] = out[t * dims + d]! * scale;
    }
    return out;
  });
}

/** For every frame of A's sentence, the range of B's frames DTW aligns it to. */
function align(a: Record<string, Feature>, b: Record<string, Feature>, names: string[]): Array<[number, number]> {
  const n = a[names[0]!]!.frames;
  const m = b[names[0]!]!.frames;
  const cost = new Float64Array(n * m);
  for (const name of names) {
    const [x] = normalisedRows([a[name]!], false);
    const [y] = normalisedRows([b[name]!], false);
    const dims = a[name]!.dims;
    const distance = new Float64Array(n * m);
    let total = 0;
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < m; j++) {
        let dot = 0;
        for (let d = 0; d < dims; d++) dot += x![i * dims + d]! * y![j * dims + d]!;
        distance[i * m + j] = 1 - dot;
        total += 1 - dot;
      }
    }
    const meanDistance = total / (n * m);
    for (let k = 0; k < n * m; k++) cost[k] = cost[k]! + distance[k]! / meanDistance;
  }
  const accumulated = new Float64Array(n * m).fill(Infinity);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < m; j++) {
      const previous =
        i === 0 && j === 0
          ? 0
          : Math.min(
              i > 0 ? accumulated[(i - 1) * m + j]! : Infinity,
              j > 0 ? accumulated[i * m + j - 1]! : Infinity,
              i > 0 && j > 0 ? accumulated[(i - 1) * m + j - 1]! : Infinity,
            );
      accumulated[i * m + j] = previous + cost[i * m + j]!;
    }
  }
  const ranges: Array<[number, number]> = Array.from({ length: n }, () => [Infinity, -Infinity]);
  let [i, j] = [n - 1, m - 1];
  for (;;) {
    const range = ranges[i]!;
    range[0] = Math.min(range[0], j);
    range[1] = Math.max(range[1], j);
    if (i === 0 && j === 0) break;
    const options: Array<[number, number]> = [];
    if (i > 0 && j > 0) options.push([i - 1, j - 1]);
    if (i > 0) options.push([i - 1, j]);
    if (j > 0) options.push([i, j - 1]);
    [i, j] = options.reduce((best, o) => (accumulated[o[0] * m + o[1]]! < accumulated[best[0] * m + best[1]]! ? o : best));
  }
  return ranges;
}

function retrieval(
  voiceA: VoiceFeatures,
  voiceB: VoiceFeatures,
  alignments: Array<Array<[number, number]>>,
  name: string,
  centred: boolean,
  shifted: boolean,
): { top1: number; precisionAt4: number } {
  const dims = voiceA[0]!.features[name]!.dims;
  const rowsA = normalisedRows(
    voiceA.map((s) => s.features[name]!),
    centred,
  );
  const rowsB = normalisedRows(
    voiceB.map((s) => (shifted ? s.shiftedFeatures : s.features)[name]!),
    centred,
  );
  // B's frames pooled: (sentence, frame) of each pooled row.
  const pool: Array<[number, number]> = [];
  for (const [s, rows] of rowsB.entries()) for (let t = 0; t < rows.length / dims; t++) pool.push([s, t]);
  let queries = 0;
  let top1 = 0;
  let precision = 0;
  const scores = new Float32Array(pool.length);
  for (const [s, rows] of rowsA.entries()) {
    for (let t = 0; t < rows.length / dims; t++) {
      if (!voiceA[s]!.speech[t]) continue;
      for (const [p, [sb, tb]] of pool.entries()) {
        const y = rowsB[sb]!;
        let dot = 0;
        for (let d = 0; d < dims; d++) dot += rows[t * dims + d]! * y[tb * dims + d]!;
        scores[p] = dot;
      }
      const nearest = topIndices(scores, 4);
      const [low, high] = alignments[s]![t]!;
      const right = (p: number) => pool[p]![0] === s && pool[p]![1] >= low - 1 && pool[p]![1] <= high + 1;
      queries++;
      if (right(nearest[0]!)) top1++;
      precision += nearest.filter(right).length / nearest.length;
    }
  }
  return { top1: top1 / queries, precisionAt4: precision / queries };
}

function topIndices(scores: Float32Array, k: number): number[] {
  const best: number[] = [];
  for (let p = 0; p < scores.length; p++) {
    if (best.length < k || scores[p]! > scores[best[best.length - 1]!]!) {
      best.push(p);
      best.sort((x, y) => scores[y]! - scores[x]!);
      if (best.length > k) best.pop();
    }
  }
  return best;
}

function sortByTop1(results: Record<string, { top1: number; precisionAt4: number }>) {
  return Object.fromEntries(Object.entries(results).sort((a, b) => b[1].top1 - a[1].top1));
}

function mean(values: number[]): number {
  return values.reduce((s, v) => s + v, 0) / values.length;
}

await main();
