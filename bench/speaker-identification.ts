/**
 * Speaker-identification benchmark over the clean speakers of ../shared/eval/vc (12 speakers, 17 clips).
 *
 * 1. Embeddings, GE2E against CAM++: every clip cut in two halves; the similarity of halves of the same speaker
 *    (other clip or same clip) against halves of different speakers: equal error rate and both distributions.
 * 2. Named speakers: each speaker is enrolled from one clip (the first half of its only clip) and heard in conversations
 *    built from its other clip (the second half) with bench/lib/conversations.ts, 24 of them with two or three
 *    speakers and overlaps; the conversation is diarized (segmentation-3.0 + CAM++) and matched to profiles by
 *    speakers/identification.ts, through a WAV file as the service does. Each conversation lists the profiles of all its
 *    speakers but one, plus two of absent speakers: the unlisted one must stay anonymous. The threshold used for a
 *    conversation is chosen without its unlisted speaker (leave one speaker out): on the similarities of every other
 *    conversation's speakers to profiles, neither of that speaker. The threshold shipped is chosen the same way on all.
 *
 * Adds a `speaker_identification` section to bench/results/transcription.json (the rest of the file is kept).
 * Run: VOXD_SHARED_DIR=/work/shared node --import tsx bench/speaker-identification.ts
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeFile } from '../src/audio/decode.js';
import { encodeWaveformToFile } from '../src/audio/encode.js';
import { loadConfig } from '../src/config.js';
import { catalog } from '../src/models/catalog/index.js';
import { ModelManager } from '../src/models/manager.js';
import { cosineSimilarity, SpeakerEncoder } from '../src/speakers/embedding.js';
import { embedSpeakers, matchSpeakers, speechOfSpeakers, speechToEmbed, speakerMatchSimilarity } from '../src/speakers/identification.js';
import { DiarizationModels, OverlapDiarizer } from '../src/speakers/overlap-diarization.js';
import { packageRoot } from '../src/core/version.js';
import { buildConversation, conversationSampleRate as sampleRate, levelled, random, trimmed } from './lib/conversations.js';

const evalDir = path.resolve(process.env.VOXD_SHARED_DIR ?? path.join(packageRoot, '..', 'shared'), 'eval');
const resultsPath = path.join(packageRoot, 'bench', 'results', 'transcription.json');
const manifest = JSON.parse(readFileSync(path.join(evalDir, 'manifest.json'), 'utf8')) as {
  vc: Array<{ id: string; audio: string; speaker: string }>;
};
const config = loadConfig({ ...process.env, VOXD_LOG_LEVEL: 'silent' });
const models = new ModelManager({ modelsDir: config.modelsDir, localModelDirs: config.localModelDirs, catalog });
const [segmentationDir, camppDir, ge2eDir] = await Promise.all([
  models.pull('pyannote-segmentation-3'),
  models.pull('campplus'),
  models.pull('resemblyzer-ge2e'),
]);
const diarizationModels = await DiarizationModels.load(
  { segmentation: path.join(segmentationDir, 'segmentation-3.0.onnx'), campplus: path.join(camppDir, 'campplus.onnx') },
  { threads: 1 },
);
const ge2e = await SpeakerEncoder.load(path.join(ge2eDir, 'ge2e.onnx'), { threads: 1 });
const campp = diarizationModels.encoder;
const round = (v: number, digits = 4): number => Math.round(v * 10 ** digits) / 10 ** digits;
const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / Math.max(values.length, 1);
const deviation = (values: number[]): number => Math.sqrt(mean(values.map((v) => (v - mean(values)) ** 2)));
const waveform = (samples: Float32Array) => ({ samples, sampleRate, channels: 1 });

const clips = await Promise.all(
  manifest.vc.map(async (entry) => ({
    ...entry,
    samples: levelled(trimmed((await decodeFile(path.join(evalDir, entry.audio), { sampleRate, channels: 1 })).samples)),
  })),
);
const speakers = [...new Set(clips.map((c) => c.speaker))].sort();

/** Equal error rate of scores (higher = same speaker), and the threshold where it falls. */
function equalErrorRate(targets: number[], impostors: number[]): { eer: number; threshold: number } {
  let best = { eer: 1, threshold: 0, gap: Infinity };
  for (const threshold of [...targets, ...impostors].sort((a, b) => a - b)) {
    const miss = targets.filter((s) => s < threshold).length / targets.length;
    const falseAccept = impostors.filter((s) => s >= threshold).length / impostors.length;
    if (Math.abs(miss - falseAccept) < best.gap) best = { eer: (miss + falseAccept) / 2, threshold, gap: Math.abs(miss - falseAccept) };
  }
  return { eer: best.eer, threshold: best.threshold };
}

// 1. GE2E against CAM++ on halves of every clip.
const halves = clips.flatMap((clip) => {
  const middle = Math.floor(clip.samples.length / 2);
  return [clip.samples.subarray(0, middle), clip.samples.subarray(middle)].map((samples, half) => ({
    clip: clip.id,
    speaker: clip.speaker,
    half,
    samples,
  }));
});
async function compare(name: string, embed: (samples: Float32Array) => Promise<Float32Array>) {
  const embeddings = [];
  for (const half of halves) embeddings.push(await embed(half.samples));
  const same: number[] = [];
  const sameOtherClip: number[] = [];
  const different: number[] = [];
  for (let i = 0; i < halves.length; i++) {
    for (let j = i + 1; j < halves.length; j++) {
      const score = cosineSimilarity(embeddings[i]!, embeddings[j]!);
      if (halves[i]!.speaker !== halves[j]!.speaker) different.push(score);
      else (halves[i]!.clip === halves[j]!.clip ? same : sameOtherClip).push(score);
    }
  }
  const targets = [...same, ...sameOtherClip];
  const { eer, threshold } = equalErrorRate(targets, different);
  const separation = (mean(targets) - mean(different)) / Math.sqrt((deviation(targets) ** 2 + deviation(different) ** 2) / 2);
  return {
    model: name,
    eer: round(eer),
    eer_threshold: round(threshold),
    same_speaker: {
      pairs: targets.length,
      other_clip_pairs: sameOtherClip.length,
      mean: round(mean(targets)),
      sd: round(deviation(targets)),
      min: round(Math.min(...targets)),
      min_other_clip: round(Math.min(...sameOtherClip)),
    },
    different_speakers: {
      pairs: different.length,
      mean: round(mean(different)),
      sd: round(deviation(different)),
      max: round(Math.max(...different)),
    },
    separation_d_prime: round(separation, 2),
  };
}
const embeddingComparison = [
  await compare('resemblyzer-ge2e', (samples) => ge2e.embedUtterance(waveform(samples))),
  await compare('campplus', (samples) => campp.embedUtterance(waveform(samples))),
];
for (const row of embeddingComparison) process.stdout.write(`${JSON.stringify(row)}\n`);

// 2. Named speakers in generated conversations.
const enrolment = new Map<string, Float32Array>();
const heard = new Map<string, Float32Array[]>();
for (const speaker of speakers) {
  const own = clips.filter((c) => c.speaker === speaker);
  if (own.length >= 2) {
    enrolment.set(speaker, await campp.embedUtterance(waveform(own[0]!.samples)));
    heard.set(
      speaker,
      own.slice(1).map((c) => c.samples),
    );
  } else {
    const middle = Math.floor(own[0]!.samples.length / 2);
    enrolment.set(speaker, await campp.embedUtterance(waveform(own[0]!.samples.subarray(0, middle))));
    heard.set(speaker, [own[0]!.samples.subarray(middle)]);
  }
}

interface Cluster {
  conversation: number;
  truth: string;
  embedding: Float32Array;
}
const work = mkdtempSync(path.join(os.tmpdir(), 'voxd-identification-'));
const conversations: Array<{ present: string[]; clusters: Cluster[]; clusterIds: string[] }> = [];
const conversationCount = 24;
for (let n = 0; n < conversationCount; n++) {
  const next = random(5000 + n);
  const count = n % 2 === 0 ? 2 : 3;
  const present: string[] = [];
  while (present.length < count) {
    const speaker = speakers[Math.floor(next() * speakers.length)]!;
    if (!present.includes(speaker)) present.push(speaker);
  }
  const { samples, reference } = buildConversation(heard, present, next, count * 3);
  const file = path.join(work, `conversation-${n}.wav`);
  await encodeWaveformToFile(waveform(samples), { format: 'wav' }, file);
  const diarizer = new OverlapDiarizer(diarizationModels);
  for (let i = 0; i < samples.length; i += 10 * sampleRate) await diarizer.addAudio(samples.subarray(i, i + 10 * sampleRate));
  const turns = await diarizer.finish();
  const embeddings = await embedSpeakers(campp, await speechOfSpeakers(file, speechToEmbed(turns), { maxAudioSeconds: 3600 }));
  const clusters: Cluster[] = [];
  const clusterIds: string[] = [];
  for (const [id, embedding] of embeddings) {
    // The cluster is the reference speaker it shares the most time with.
    const overlapWith = (speaker: string): number =>
      turns
        .filter((t) => t.speaker === id)
        .reduce(
          (sum, t) =>
            sum +
            reference
              .filter((r) => r.speaker === speaker)
              .reduce((s, r) => s + Math.max(0, Math.min(t.endSeconds, r.endSeconds) - Math.max(t.startSeconds, r.startSeconds)), 0),
          0,
        );
    clusters.push({ conversation: n, truth: present.reduce((a, b) => (overlapWith(b) > overlapWith(a) ? b : a)), embedding });
    clusterIds.push(id);
  }
  conversations.push({ present, clusters, clusterIds });
  process.stdout.write(`conversation ${n}: ${count} speakers, ${clusters.length} found\n`);
}
rmSync(work, { recursive: true, force: true });

/**
 * The threshold from speaker-to-profile similarities: midway between the highest impostor and the lowest target when
 * they are apart; else the one with the fewest errors, a false accept weighing four misses.
 */
function chooseThreshold(targets: number[], impostors: number[]): number {
  const highestImpostor = Math.max(...impostors);
  const lowestTarget = Math.min(...targets);
  if (highestImpostor < lowestTarget) return (highestImpostor + lowestTarget) / 2;
  let best = { threshold: lowestTarget, cost: Infinity };
  for (const threshold of [...targets, ...impostors].sort((a, b) => a - b)) {
    const cost = targets.filter((s) => s < threshold).length + 4 * impostors.filter((s) => s >= threshold).length;
    if (cost < best.cost) best = { threshold, cost };
  }
  return best.threshold;
}
function similaritiesWithout(excluded: string | undefined): { targets: number[]; impostors: number[] } {
  const targets: number[] = [];
  const impostors: number[] = [];
  for (const cluster of conversations.flatMap((c) => c.clusters)) {
    if (cluster.truth === excluded) continue;
    for (const [speaker, embedding] of enrolment) {
      if (speaker === excluded) continue;
      (speaker === cluster.truth ? targets : impostors).push(cosineSimilarity(cluster.embedding, embedding));
    }
  }
  return { targets, impostors };
}
function thresholdWithout(excluded: string | undefined): number {
  const { targets, impostors } = similaritiesWithout(excluded);
  return chooseThreshold(targets, impostors);
}

let listedClusters = 0;
let correct = 0;
let unlistedClusters = 0;
let unlistedNamed = 0;
let wrongNames = 0;
const heldOutThresholds: number[] = [];
conversations.forEach((conversation, n) => {
  const next = random(9000 + n);
  const unlisted = conversation.present[n % conversation.present.length]!;
  const absent = speakers.filter((s) => !conversation.present.includes(s));
  const distractors: string[] = [];
  while (distractors.length < 2) {
    const speaker = absent[Math.floor(next() * absent.length)]!;
    if (!distractors.includes(speaker)) distractors.push(speaker);
  }
  const listed = [...conversation.present.filter((s) => s !== unlisted), ...distractors];
  const threshold = thresholdWithout(unlisted);
  heldOutThresholds.push(threshold);
  const matches = matchSpeakers(
    new Map(conversation.clusters.map((c, i) => [conversation.clusterIds[i]!, c.embedding])),
    listed.map((s) => ({ voiceId: s, embedding: enrolment.get(s)! })),
    threshold,
  );
  conversation.clusters.forEach((cluster, i) => {
    const named = matches.get(conversation.clusterIds[i]!)?.voiceId;
    if (named !== undefined && named !== cluster.truth) wrongNames++;
    if (listed.includes(cluster.truth)) {
      listedClusters++;
      if (named === cluster.truth) correct++;
    } else {
      unlistedClusters++;
      if (named !== undefined) unlistedNamed++;
    }
  });
});
const clusterCount = listedClusters + unlistedClusters;
const shipped = thresholdWithout(undefined);
const all = similaritiesWithout(undefined);
const summary = {
  measured_at: new Date().toISOString(),
  speakers: speakers.length,
  clips: clips.length,
  embedding_comparison: embeddingComparison,
  conversations: conversationCount,
  speakers_found: clusterCount,
  speakers_true: conversations.reduce((sum, c) => sum + c.present.length, 0),
  threshold_shipped: speakerMatchSimilarity,
  threshold_chosen_on_all: round(shipped),
  held_out_thresholds: { min: round(Math.min(...heldOutThresholds)), max: round(Math.max(...heldOutThresholds)) },
  speaker_to_own_profile: { pairs: all.targets.length, min: round(Math.min(...all.targets)), mean: round(mean(all.targets)) },
  speaker_to_other_profiles: { pairs: all.impostors.length, max: round(Math.max(...all.impostors)), mean: round(mean(all.impostors)) },
  false_accepts_at_shipped_threshold: all.impostors.filter((s) => s >= speakerMatchSimilarity).length,
  accuracy: round(correct / listedClusters),
  listed_speakers: listedClusters,
  false_accept_rate: round(wrongNames / clusterCount),
  wrong_names: wrongNames,
  unlisted_named_rate: round(unlistedNamed / Math.max(unlistedClusters, 1)),
  unlisted_speakers: unlistedClusters,
  notes:
    'accuracy: speakers whose profile is listed that get its name; false_accept_rate: speakers given a name not theirs ' +
    '(an unlisted speaker named, or a listed one named as someone else), over all speakers found; thresholds held out ' +
    '(leave one speaker out). A speaker diarization splits in two counts twice.',
};
const results = JSON.parse(readFileSync(resultsPath, 'utf8')) as Record<string, unknown>;
results.speaker_identification = summary;
writeFileSync(resultsPath, `${JSON.stringify(results, null, 2)}\n`);
process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
await Promise.all([diarizationModels.close(), ge2e.close()]);
