/**
 * Phone-band diarization and naming (issue 35, points 2 and 3). Every condition is built first from the clean clips of
 * ../shared/eval (vc and asr, at least 3 s, trimmed and levelled) and passed through 8 kHz G.711 and back with ffmpeg
 * (bench/lib/phone-band.ts); speakers' genders are the manifest's, else their median pitch (under 165 Hz: male).
 *
 * 1. Same-gender pairs of different languages: one two-speaker conversation per pair (bench/lib/conversations.ts),
 *    phone-band, diarized; a pair is kept apart when its two speakers' main diarized speakers differ. The pairs are split
 *    in two (alternately, in a seeded order): the clustering cut is chosen on the tuning half among the candidates
 *    (most pairs kept apart, then lowest DER), the other half reported, with each cut's DER and over-split pairs and the
 *    distance between each pair's two voices through the line (whole clips embedded: 0.55 or more on every pair, the
 *    merged ones up to 0.85, so a merged pair comes from too few windows of one voice rather than from the line).
 * 2. DER and overlap recall (share of the reference's overlapped time where two diarized speakers are active) on the
 *    diarization bench's 12 generated conversations, wideband and phone-band, at the shipped cut.
 * 3. Naming with short enrolments: every speaker with a second clip, or a clip long enough for 5 s and 3 s more, is
 *    enrolled from one 4-6 s stretch (wideband, as users enrol); 24 phone-band conversations of 2-3 speakers list all
 *    their enrolled speakers but one, plus two absent ones. Profiles are compared as they are (wideband) and through the
 *    same telephone channel (src/audio/bandwidth.ts), each with its threshold chosen leave-one-speaker-out (the
 *    unlisted speaker's similarities left out of the choice); the shipped narrowband threshold is chosen on all. Also
 *    profiles enrolled from the phone-band clip. (The issue's own call is the test test/http/phone-band-speakers.test.ts.)
 *
 * Writes bench/results/phone-band-speakers.json (held-out figures first in each part). PHONE_BAND_PARTS=pairs,der,naming
 * runs some parts only (each replaces its own section of the file); PHONE_BAND_PAIRS=n takes the first n pairs only.
 * Run: VOXD_SHARED_DIR=/work/shared node --import tsx bench/phone-band-speakers.ts
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isNarrowband, telephoneBand, upperBandEnergyShare } from '../src/audio/bandwidth.js';
import { decodeFile } from '../src/audio/decode.js';
import { encodeWaveformToFile } from '../src/audio/encode.js';
import { pitchStatistics, trackPitch } from '../src/audio/pitch.js';
import { loadConfig } from '../src/config.js';
import { packageRoot } from '../src/core/version.js';
import { catalog } from '../src/models/catalog/index.js';
import { ModelManager } from '../src/models/manager.js';
import { cosineSimilarity } from '../src/speakers/embedding.js';
import {
  embedSpeakers,
  matchSpeakers,
  narrowbandSpeakerMatchSimilarity,
  speakerMatchSimilarity,
  speechOfSpeakers,
  speechToEmbed,
} from '../src/speakers/identification.js';
import { DiarizationModels, OverlapDiarizer, overlapDistanceThreshold } from '../src/speakers/overlap-diarization.js';
import {
  buildConversation,
  conversationSampleRate as sampleRate,
  generatedConversations,
  levelled,
  random,
  trimmed,
} from './lib/conversations.js';
import { diarizationErrorRate, type Turn } from './lib/der.js';
import { phoneBand } from './lib/phone-band.js';

const evalDir = path.resolve(process.env.VOXD_SHARED_DIR ?? path.join(packageRoot, '..', 'shared'), 'eval');
const resultsPath = path.join(packageRoot, 'bench', 'results', 'phone-band-speakers.json');
interface Entry {
  id: string;
  audio: string;
  speaker: string;
  gender?: 'F' | 'M' | null;
  language: string;
  duration_s: number;
}
const manifest = JSON.parse(readFileSync(path.join(evalDir, 'manifest.json'), 'utf8')) as {
  vc: Entry[];
  asr: Entry[];
  diar: never[];
};
const only = new Set((process.env.PHONE_BAND_PARTS ?? 'pairs,der,naming').split(','));
const config = loadConfig({ ...process.env, VOXD_LOG_LEVEL: 'silent' });
const models = new ModelManager({ modelsDir: config.modelsDir, localModelDirs: config.localModelDirs, catalog });
const [segmentationDir, camppDir] = await Promise.all([models.pull('pyannote-segmentation-3'), models.pull('campplus')]);
const diarizationModels = await DiarizationModels.load(
  { segmentation: path.join(segmentationDir, 'segmentation-3.0.onnx'), campplus: path.join(camppDir, 'campplus.onnx') },
  { threads: 1 },
);
const campp = diarizationModels.encoder;
const work = mkdtempSync(path.join(os.tmpdir(), 'voxd-phone-band-'));
const round = (v: number, digits = 4): number => Math.round(v * 10 ** digits) / 10 ** digits;
const waveform = (samples: Float32Array) => ({ samples, sampleRate, channels: 1 });
const log = (line: string) => process.stdout.write(`${line}\n`);
let fileCount = 0;

/** `samples` through the line: written as WAV, G.711 and back with ffmpeg, decoded. */
async function lineOf(samples: Float32Array): Promise<Float32Array> {
  const file = path.join(work, `audio-${fileCount++}.wav`);
  await encodeWaveformToFile(waveform(samples), { format: 'wav' }, file);
  return (await decodeFile(await phoneBand(file, work), { sampleRate, channels: 1 })).samples;
}

// The clips, by speaker.
const entries = [...manifest.vc, ...manifest.asr].filter((e) => e.duration_s >= 3 && !e.id.startsWith('faster_whisper/'));
interface Speaker {
  id: string;
  language: string;
  gender: 'F' | 'M';
  clips: Float32Array[];
}
const speakerMap = new Map<string, Speaker>();
for (const entry of entries) {
  const clip = levelled(trimmed((await decodeFile(path.join(evalDir, entry.audio), { sampleRate, channels: 1 })).samples));
  const known = speakerMap.get(entry.speaker);
  if (known) known.clips.push(clip);
  else {
    const gender = entry.gender ?? (pitchStatistics(trackPitch(clip, sampleRate)).medianHz < 165 ? 'M' : 'F');
    speakerMap.set(entry.speaker, { id: entry.speaker, language: entry.language, gender, clips: [clip] });
  }
}
const speakers = [...speakerMap.values()].sort((a, b) => a.id.localeCompare(b.id));
log(`${speakers.length} speakers: ${speakers.map((s) => `${s.id}/${s.language}/${s.gender}`).join(' ')}`);

async function diarize(samples: Float32Array): Promise<OverlapDiarizer> {
  const diarizer = new OverlapDiarizer(diarizationModels);
  for (let i = 0; i < samples.length; i += 10 * sampleRate) await diarizer.addAudio(samples.subarray(i, i + 10 * sampleRate));
  return diarizer;
}

/** The diarized speaker sharing the most time with each reference speaker. */
function mainSpeakers(reference: Turn[], turns: Turn[]): Map<string, string | undefined> {
  const shared = (a: Turn, b: Turn) => Math.max(0, Math.min(a.endSeconds, b.endSeconds) - Math.max(a.startSeconds, b.startSeconds));
  const result = new Map<string, string | undefined>();
  for (const speaker of new Set(reference.map((r) => r.speaker))) {
    const own = reference.filter((r) => r.speaker === speaker);
    let best: { id: string | undefined; seconds: number } = { id: undefined, seconds: 0 };
    for (const id of new Set(turns.map((t) => t.speaker))) {
      const seconds = turns.filter((t) => t.speaker === id).reduce((sum, t) => sum + own.reduce((s, r) => s + shared(t, r), 0), 0);
      if (seconds > best.seconds) best = { id, seconds };
    }
    result.set(speaker, best.id);
  }
  return result;
}

/** Share of the reference's overlapped time (two or more speakers) where the diarization also has two or more. */
function overlapRecall(reference: Turn[], turns: Turn[], durationSeconds: number): { recall: number; seconds: number } {
  const frames = Math.ceil(durationSeconds * 100);
  const count = (list: Turn[]) => {
    const active = new Uint8Array(frames);
    for (const t of list)
      for (let f = Math.round(t.startSeconds * 100); f < Math.min(frames, Math.round(t.endSeconds * 100)); f++) active[f]!++;
    return active;
  };
  const truth = count(reference);
  const found = count(turns);
  let overlapped = 0;
  let recalled = 0;
  for (let f = 0; f < frames; f++) {
    if (truth[f]! < 2) continue;
    overlapped++;
    if (found[f]! >= 2) recalled++;
  }
  return { recall: overlapped > 0 ? recalled / overlapped : 1, seconds: overlapped / 100 };
}

// Parts run alone (PHONE_BAND_PARTS) replace their own sections of the results file.
const results: Record<string, unknown> = {
  ...(existsSync(resultsPath) ? (JSON.parse(readFileSync(resultsPath, 'utf8')) as Record<string, unknown>) : {}),
  measured_at: new Date().toISOString(),
};
const cuts = [0.3, 0.35, 0.4, 0.45, 0.5, 0.55];

// 1. Same-gender pairs of different languages.
if (only.has('pairs')) {
  const pairs: Array<[Speaker, Speaker]> = [];
  for (let i = 0; i < speakers.length; i++)
    for (let j = i + 1; j < speakers.length; j++)
      if (speakers[i]!.gender === speakers[j]!.gender && speakers[i]!.language !== speakers[j]!.language)
        pairs.push([speakers[i]!, speakers[j]!]);
  const order = random(77);
  // PHONE_BAND_PAIRS: the first n of the seeded order. The tuning/held-out split (alternate pairs of that order) is
  // fixed before any cut is tried.
  const shuffled = pairs
    .map((p) => ({ p, key: order() }))
    .sort((a, b) => a.key - b.key)
    .map((x) => x.p)
    .slice(0, Number(process.env.PHONE_BAND_PAIRS ?? pairs.length));
  /** Each speaker's clips through the line, embedded whole: how far apart the line leaves the two voices. */
  const lineEmbeddings = new Map<string, Float32Array>();
  const lineEmbedding = async (speaker: Speaker) => {
    const known = lineEmbeddings.get(speaker.id);
    if (known) return known;
    const embedding = await campp.embedUtterance(waveform(await lineOf(new Float32Array(speaker.clips.flatMap((c) => [...c])))));
    lineEmbeddings.set(speaker.id, embedding);
    return embedding;
  };
  interface PairRow {
    pair: string;
    gender: string;
    tuning: boolean;
    apart: Map<number, boolean>;
    der: Map<number, number>;
    speakersFound: Map<number, number>;
    lineDistance: number;
    narrowband: boolean;
  }
  const rows: PairRow[] = [];
  for (const [n, [a, b]] of shuffled.entries()) {
    const clips = new Map([
      [a.id, a.clips],
      [b.id, b.clips],
    ]);
    const { samples, reference } = buildConversation(clips, [a.id, b.id], random(3000 + n), 8);
    const line = await lineOf(samples);
    const diarizer = await diarize(line);
    const apart = new Map<number, boolean>();
    const der = new Map<number, number>();
    const speakersFound = new Map<number, number>();
    const durationSeconds = line.length / sampleRate;
    for (const cut of cuts) {
      const turns = await diarizer.finish({ distanceThreshold: cut });
      const main = mainSpeakers(reference, turns);
      apart.set(cut, main.get(a.id) !== undefined && main.get(b.id) !== undefined && main.get(a.id) !== main.get(b.id));
      der.set(cut, diarizationErrorRate(reference, turns, { collarSeconds: 0.25, durationSeconds }).der);
      speakersFound.set(cut, new Set(turns.map((t) => t.speaker)).size);
    }
    rows.push({
      pair: `${a.id}/${a.language}+${b.id}/${b.language}`,
      gender: a.gender,
      tuning: n % 2 === 0,
      apart,
      der,
      speakersFound,
      lineDistance: 1 - cosineSimilarity(await lineEmbedding(a), await lineEmbedding(b)),
      narrowband: isNarrowband(line, sampleRate),
    });
    const row = rows.at(-1)!;
    log(
      `pair ${n} ${row.pair} ${a.gender} line distance ${round(row.lineDistance, 3)} ` +
        cuts.map((c) => `${c}:${apart.get(c) ? 'apart' : 'merged'}/${speakersFound.get(c)}/${round(der.get(c)!, 3)}`).join(' '),
    );
  }
  const share = (list: PairRow[], cut: number) => round(list.filter((r) => r.apart.get(cut)).length / Math.max(list.length, 1));
  const meanDer = (list: PairRow[], cut: number) => round(list.reduce((sum, r) => sum + r.der.get(cut)!, 0) / Math.max(list.length, 1));
  const tuning = rows.filter((r) => r.tuning);
  const heldOut = rows.filter((r) => !r.tuning);
  // The cut keeping the most tuning pairs apart; among those, the lowest DER (a lower cut also splits one voice in
  // two), then the largest cut.
  const bestShare = Math.max(...cuts.map((c) => share(tuning, c)));
  const candidates = cuts.filter((c) => share(tuning, c) === bestShare);
  const lowestDer = Math.min(...candidates.map((c) => meanDer(tuning, c)));
  const chosen = Math.max(...candidates.filter((c) => meanDer(tuning, c) === lowestDer));
  const byCut = (list: PairRow[]) =>
    Object.fromEntries(
      cuts.map((c) => [
        c,
        {
          kept_apart: share(list, c),
          mean_der: meanDer(list, c),
          over_split: list.filter((r) => r.speakersFound.get(c)! > 2).length,
        },
      ]),
    );
  const merged = (list: PairRow[], cut: number) =>
    list.filter((r) => !r.apart.get(cut)).map((r) => ({ pair: r.pair, line_distance: round(r.lineDistance, 3) }));
  results.same_gender_pairs = {
    held_out: {
      pairs: heldOut.length,
      female_pairs: heldOut.filter((r) => r.gender === 'F').length,
      kept_apart_at_chosen_cut: share(heldOut, chosen),
      mean_der_at_chosen_cut: meanDer(heldOut, chosen),
      kept_apart_at_shipped_cut: share(heldOut, overlapDistanceThreshold),
      kept_apart_female: share(
        heldOut.filter((r) => r.gender === 'F'),
        chosen,
      ),
      by_cut: byCut(heldOut),
      merged_at_chosen_cut: merged(heldOut, chosen),
    },
    tuning: { pairs: tuning.length, by_cut: byCut(tuning), merged_at_chosen_cut: merged(tuning, chosen) },
    cut_chosen_on_tuning: chosen,
    shipped_cut: overlapDistanceThreshold,
    detected_narrowband: `${rows.filter((r) => r.narrowband).length}/${rows.length}`,
    line_distance_between_speakers: {
      kept_apart_min: round(Math.min(...rows.filter((r) => r.apart.get(chosen)).map((r) => r.lineDistance)), 3),
      merged_max: round(Math.max(0, ...rows.filter((r) => !r.apart.get(chosen)).map((r) => r.lineDistance)), 3),
    },
  };
  log(JSON.stringify(results.same_gender_pairs));
}

// 2. DER and overlap recall, wideband and phone-band.
if (only.has('der')) {
  const rows: Array<Record<string, unknown>> = [];
  for (const conversation of await generatedConversations(evalDir, manifest)) {
    const durationSeconds = conversation.samples.length / sampleRate;
    const row: Record<string, unknown> = { id: conversation.id };
    for (const [name, samples] of [
      ['wideband', conversation.samples],
      ['phone_band', await lineOf(conversation.samples)],
    ] as const) {
      const turns = await (await diarize(samples)).finish();
      row[name] = {
        der: round(diarizationErrorRate(conversation.reference, turns, { collarSeconds: 0.25, durationSeconds }).der),
        overlap_recall: round(overlapRecall(conversation.reference, turns, durationSeconds).recall),
        overlap_seconds: round(overlapRecall(conversation.reference, turns, durationSeconds).seconds, 2),
        speakers_found: new Set(turns.map((t) => t.speaker)).size,
      };
    }
    rows.push(row);
    log(JSON.stringify(row));
  }
  const mean = (key: 'wideband' | 'phone_band', field: 'der' | 'overlap_recall') =>
    round(rows.reduce((sum, r) => sum + (r[key] as Record<string, number>)[field]!, 0) / rows.length);
  results.generated_conversations = {
    conversations: rows.length,
    cut: overlapDistanceThreshold,
    mean_der: { wideband: mean('wideband', 'der'), phone_band: mean('phone_band', 'der') },
    mean_overlap_recall: { wideband: mean('wideband', 'overlap_recall'), phone_band: mean('phone_band', 'overlap_recall') },
    files: rows,
  };
}

/** Threshold from target and impostor similarities, as bench/speaker-identification.ts chooses it. */
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

// 3. Naming with short enrolments.
if (only.has('naming')) {
  const enrolmentSeconds = 5;
  const wideProfiles = new Map<string, Float32Array>();
  const lineProfiles = new Map<string, Float32Array>();
  /** Enrolled over the phone too: the clip through the line, then through the line again as the service does. */
  const phoneEnrolledProfiles = new Map<string, Float32Array>();
  const heard = new Map<string, Float32Array[]>();
  for (const speaker of speakers) {
    const first = speaker.clips[0]!;
    const cut = Math.min(first.length, enrolmentSeconds * sampleRate);
    const rest = speaker.clips.length > 1 ? speaker.clips.slice(1) : first.length >= cut + 3 * sampleRate ? [first.subarray(cut)] : [];
    heard.set(speaker.id, rest.length > 0 ? rest : speaker.clips);
    if (rest.length === 0 || cut < 4 * sampleRate) continue;
    const enrolment = first.subarray(0, cut);
    wideProfiles.set(speaker.id, await campp.embedUtterance(waveform(enrolment)));
    lineProfiles.set(speaker.id, await campp.embedUtterance(await telephoneBand(waveform(enrolment))));
    phoneEnrolledProfiles.set(speaker.id, await campp.embedUtterance(await telephoneBand(waveform(await lineOf(enrolment)))));
  }
  const enrolled = [...wideProfiles.keys()];
  log(`enrolled ${enrolled.length}: ${enrolled.join(' ')}`);
  interface Cluster {
    id: string;
    truth: string;
    embedding: Float32Array;
  }
  const conversations: Array<{ present: string[]; clusters: Cluster[]; narrowband: boolean; share: number }> = [];
  for (let n = 0; n < 24; n++) {
    const next = random(7000 + n);
    const count = n % 2 === 0 ? 2 : 3;
    const present: string[] = [];
    // At least two enrolled speakers, so one is listed and one is not.
    while (present.length < count) {
      const pool = present.filter((s) => enrolled.includes(s)).length < 2 ? enrolled : speakers.map((s) => s.id);
      const speaker = pool[Math.floor(next() * pool.length)]!;
      if (!present.includes(speaker)) present.push(speaker);
    }
    const { samples, reference } = buildConversation(heard, present, next, count * 3);
    const line = await lineOf(samples);
    const file = path.join(work, `naming-${n}.wav`);
    await encodeWaveformToFile(waveform(line), { format: 'wav' }, file);
    const turns = await (await diarize(line)).finish();
    const speech = await speechOfSpeakers(file, speechToEmbed(turns), { maxAudioSeconds: 3600 });
    const embeddings = await embedSpeakers(campp, speech);
    const main = mainSpeakers(reference, turns);
    const clusters = [...embeddings].map(([id, embedding]) => ({
      id,
      truth: [...main].find(([, cluster]) => cluster === id)?.[0] ?? 'split',
      embedding,
    }));
    const all = new Float32Array([...speech.values()].flatMap((s) => [...s]));
    conversations.push({ present, clusters, narrowband: isNarrowband(all, sampleRate), share: upperBandEnergyShare(all, sampleRate) });
    log(`naming conversation ${n}: ${present.join(' ')}; ${clusters.length} found; narrowband ${conversations.at(-1)!.narrowband}`);
  }
  const similarities = (profiles: Map<string, Float32Array>, excluded: string | undefined) => {
    const targets: number[] = [];
    const impostors: number[] = [];
    for (const cluster of conversations.flatMap((c) => c.clusters)) {
      if (cluster.truth === excluded || cluster.truth === 'split') continue;
      for (const [speaker, embedding] of profiles) {
        if (speaker === excluded) continue;
        (speaker === cluster.truth ? targets : impostors).push(cosineSimilarity(cluster.embedding, embedding));
      }
    }
    return { targets, impostors };
  };
  const evaluate = (profiles: Map<string, Float32Array>, fixed: number | undefined) => {
    let listed = 0;
    let correct = 0;
    let unlisted = 0;
    let unlistedNamed = 0;
    let wrong = 0;
    const thresholds: number[] = [];
    conversations.forEach((conversation, n) => {
      const next = random(9000 + n);
      const presentEnrolled = conversation.present.filter((s) => enrolled.includes(s));
      const left = presentEnrolled[n % presentEnrolled.length]!;
      const absent = enrolled.filter((s) => !conversation.present.includes(s));
      const distractors: string[] = [];
      while (distractors.length < Math.min(2, absent.length)) {
        const speaker = absent[Math.floor(next() * absent.length)]!;
        if (!distractors.includes(speaker)) distractors.push(speaker);
      }
      const listedIds = [...presentEnrolled.filter((s) => s !== left), ...distractors];
      const { targets, impostors } = similarities(profiles, left);
      const threshold = fixed ?? chooseThreshold(targets, impostors);
      thresholds.push(threshold);
      const matches = matchSpeakers(
        new Map(conversation.clusters.map((c) => [c.id, c.embedding])),
        listedIds.map((s) => ({ voiceId: s, embedding: profiles.get(s)! })),
        threshold,
      );
      for (const cluster of conversation.clusters) {
        const named = matches.get(cluster.id)?.voiceId;
        if (named !== undefined && named !== cluster.truth) wrong++;
        if (listedIds.includes(cluster.truth)) {
          listed++;
          if (named === cluster.truth) correct++;
        } else {
          unlisted++;
          if (named !== undefined) unlistedNamed++;
        }
      }
    });
    return {
      named_when_enrolled: round(correct / Math.max(listed, 1)),
      enrolled_speakers: listed,
      unenrolled_named: round(unlistedNamed / Math.max(unlisted, 1)),
      unenrolled_speakers: unlisted,
      wrong_names: wrong,
      thresholds: fixed === undefined ? { min: round(Math.min(...thresholds)), max: round(Math.max(...thresholds)) } : fixed,
    };
  };
  const lineAll = similarities(lineProfiles, undefined);
  const wideAll = similarities(wideProfiles, undefined);
  const stats = (v: number[], f: 'min' | 'max') => round(f === 'min' ? Math.min(...v) : Math.max(...v));
  results.naming = {
    held_out: {
      line_profiles_leave_one_speaker_out: evaluate(lineProfiles, undefined),
      wideband_profiles_leave_one_speaker_out: evaluate(wideProfiles, undefined),
      phone_enrolled_line_profiles_leave_one_speaker_out: evaluate(phoneEnrolledProfiles, undefined),
    },
    at_shipped_thresholds: {
      line_profiles: evaluate(lineProfiles, narrowbandSpeakerMatchSimilarity),
      phone_enrolled_line_profiles: evaluate(phoneEnrolledProfiles, narrowbandSpeakerMatchSimilarity),
      wideband_profiles_at_wideband_threshold: evaluate(wideProfiles, speakerMatchSimilarity),
    },
    narrowband_threshold_chosen_on_all: round(chooseThreshold(lineAll.targets, lineAll.impostors)),
    narrowband_threshold_shipped: narrowbandSpeakerMatchSimilarity,
    similarities: {
      line_profiles: { own_min: stats(lineAll.targets, 'min'), other_max: stats(lineAll.impostors, 'max') },
      wideband_profiles: { own_min: stats(wideAll.targets, 'min'), other_max: stats(wideAll.impostors, 'max') },
    },
    conversations: conversations.length,
    detected_narrowband: `${conversations.filter((c) => c.narrowband).length}/${conversations.length}`,
    enrolled_speakers: enrolled.length,
    enrolment_seconds: enrolmentSeconds,
  };
  log(JSON.stringify(results.naming, null, 2));
}

rmSync(work, { recursive: true, force: true });
writeFileSync(resultsPath, `${JSON.stringify(results, null, 2)}\n`);
await diarizationModels.close();
