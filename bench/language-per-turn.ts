/**
 * Language per turn (issue 35, point 1): generated conversations of ../shared/eval/asr clips in different languages,
 * transcribed with language=auto, with and without diarization, wideband and phone-band (8 kHz G.711 and back,
 * bench/lib/phone-band.ts).
 *
 * The set is built before any tuning: the clips are split in two parts by recording (per language, alternately in id
 * order; languages with one clip alternate between the parts in code order), and each part makes its own seeded
 * conversations of 2-4 speakers (each speaker one clip, said whole at each of its turns; at least two languages; 4-7
 * turns, never the same speaker twice in a row, 0.4-1 s apart). The prior's weights (language-stretches.ts) are chosen
 * on the tuning part (best per-turn language accuracy over both conditions and both diarization settings; ties to the
 * lower error rate), then the held-out part is reported at them.
 *
 * Per turn: its language is the one most of the words nearest to it (by time) were transcribed in (no words: wrong);
 * its text is those words. Error rate: words (characters for zh, ja, ko) against the clip's reference, pooled over all
 * turns, beside the same clips transcribed alone with their language given (same condition), in the same run.
 *
 * Writes bench/results/language-per-turn.json (held-out first). LANGUAGE_TURN_CONVERSATIONS=n per part (default 8);
 * LANGUAGE_TURN_GRID: the weights tried for each of the two (default 0,0.5,1,2).
 * Run: VOXD_SHARED_DIR=/work/shared node --import tsx bench/language-per-turn.ts
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeFile } from '../src/audio/decode.js';
import { encodeWaveformToFile } from '../src/audio/encode.js';
import { loadConfig } from '../src/config.js';
import { createContainer } from '../src/container.js';
import { packageRoot } from '../src/core/version.js';
import type { LanguagePriorWeights } from '../src/operations/transcribe/language-stretches.js';
import { type Diarizer, type SpeakerTurn, transcribeFile } from '../src/operations/transcribe/pipeline.js';
import type { ChunkTranscript, TranscribeChunkOptions, Transcriber } from '../src/operations/transcribe/transcriber.js';
import { DiarizationModels, OverlapDiarizer } from '../src/speakers/overlap-diarization.js';
import { conversationSampleRate as sampleRate, levelled, random, trimmed } from './lib/conversations.js';
import { phoneBand } from './lib/phone-band.js';
import { errorRate } from './lib/wer.js';

const evalDir = path.resolve(process.env.VOXD_SHARED_DIR ?? path.join(packageRoot, '..', 'shared'), 'eval');
const resultsPath = path.join(packageRoot, 'bench', 'results', 'language-per-turn.json');
const conversationsPerPart = Number(process.env.LANGUAGE_TURN_CONVERSATIONS ?? 8);
const weightGrid = (process.env.LANGUAGE_TURN_GRID ?? '0,0.5,1,2').split(',').map(Number);

interface Clip {
  id: string;
  language: string;
  transcript: string;
  samples: Float32Array;
}
const manifest = JSON.parse(readFileSync(path.join(evalDir, 'manifest.json'), 'utf8')) as {
  asr: Array<{ id: string; audio: string; language: string; transcript: string }>;
};

const config = loadConfig({ ...process.env, VOXD_LOG_LEVEL: 'silent', VOXD_DATA_DIR: path.join(os.tmpdir(), 'voxd-bench') });
const container = await createContainer(config);
const [engine, vad] = await Promise.all([container.asr.get(), container.vad.get()]);
const [segmentation, campplus] = await Promise.all([
  container.models.require('pyannote-segmentation-3'),
  container.models.require('campplus'),
]);
const diarizationModels = await DiarizationModels.load(
  { segmentation: path.join(segmentation, 'segmentation-3.0.onnx'), campplus: path.join(campplus, 'campplus.onnx') },
  { threads: config.inferenceThreads },
);

/** The engine with its answers kept: the weight grid decodes each chunk once per language and prompt it is given. */
const cache = new Map<string, Promise<unknown>>();
const keyOf = (samples: Float32Array, options: object): string =>
  createHash('sha1')
    .update(new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength))
    .update(JSON.stringify(options))
    .digest('hex');
const cached = <T>(key: string, compute: () => Promise<T>): Promise<T> => {
  if (!cache.has(key)) cache.set(key, compute());
  return cache.get(key) as Promise<T>;
};
const transcriber: Transcriber = {
  engine: engine.engine,
  modelId: engine.modelId,
  languages: engine.languages,
  transcribe: (samples: Float32Array, options: TranscribeChunkOptions) => {
    const { signal: _signal, ...rest } = options;
    return cached<ChunkTranscript>(keyOf(samples, { transcribe: rest }), () => engine.transcribe(samples, options));
  },
  detectLanguage: (samples: Float32Array) =>
    cached<Record<string, number>>(keyOf(samples, { detect: true }), () => engine.detectLanguage!(samples)),
};

/** Diarization is the same at every weight: each file's turns are computed once. */
const diarizations = new Map<string, SpeakerTurn[]>();
function diarizerFor(file: string): Diarizer {
  const known = diarizations.get(file);
  const diarizer = known ? undefined : new OverlapDiarizer(diarizationModels);
  return {
    addAudio: async (samples, signal) => diarizer?.addAudio(samples, signal),
    finish: async (options, signal) => {
      if (known) return known;
      const turns = await diarizer!.finish(options, signal);
      diarizations.set(file, turns);
      return turns;
    },
  };
}

// The two parts, by recording.
const clips: Clip[] = [];
for (const entry of manifest.asr) {
  if (entry.id.startsWith('faster_whisper/')) continue; // the stereo file's channels are one conversation
  const decoded = await decodeFile(path.join(evalDir, entry.audio), { sampleRate, channels: 1 });
  clips.push({ id: entry.id, language: entry.language, transcript: entry.transcript, samples: levelled(trimmed(decoded.samples)) });
}
const tuningClips: Clip[] = [];
const heldOutClips: Clip[] = [];
let singles = 0;
for (const language of [...new Set(clips.map((c) => c.language))]) {
  const ofLanguage = clips.filter((c) => c.language === language).sort((a, b) => a.id.localeCompare(b.id));
  if (ofLanguage.length === 1) (singles++ % 2 === 0 ? tuningClips : heldOutClips).push(ofLanguage[0]!);
  else for (const [i, clip] of ofLanguage.entries()) (i % 2 === 0 ? tuningClips : heldOutClips).push(clip);
}

interface Turn {
  clip: Clip;
  startSeconds: number;
  endSeconds: number;
}
interface Conversation {
  id: string;
  samples: Float32Array;
  turns: Turn[];
}

function conversations(part: Clip[], seed: number): Conversation[] {
  const made: Conversation[] = [];
  for (let n = 0; n < conversationsPerPart; n++) {
    const next = random(seed + n);
    const count = 2 + Math.floor(next() * 3);
    let speakers: Clip[] = [];
    while (speakers.length < count || new Set(speakers.map((s) => s.language)).size < 2) {
      if (speakers.length === count) speakers = [];
      const clip = part[Math.floor(next() * part.length)]!;
      if (!speakers.includes(clip)) speakers.push(clip);
    }
    const turnCount = Math.max(count, 4 + Math.floor(next() * 4));
    const order: Clip[] = [];
    let previous = -1;
    for (let t = 0; t < turnCount; t++) {
      // Every speaker talks at least once: the first turns go round them.
      let who = t < count ? t : Math.floor(next() * count);
      if (who === previous) who = (who + 1) % count;
      previous = who;
      order.push(speakers[who]!);
    }
    const turns: Turn[] = [];
    let cursor = 0.5 * sampleRate;
    for (const clip of order) {
      turns.push({ clip, startSeconds: cursor / sampleRate, endSeconds: (cursor + clip.samples.length) / sampleRate });
      cursor += clip.samples.length + Math.round((0.4 + 0.6 * next()) * sampleRate);
    }
    const samples = new Float32Array(cursor + 0.5 * sampleRate);
    for (const turn of turns) samples.set(turn.clip.samples, Math.round(turn.startSeconds * sampleRate));
    made.push({ id: `conversation-${seed + n}`, samples, turns });
  }
  return made;
}

const work = mkdtempSync(path.join(os.tmpdir(), 'voxd-language-turns-'));
const waveform = (samples: Float32Array) => ({ samples, sampleRate, channels: 1 });
async function fileOf(name: string, samples: Float32Array, condition: 'wideband' | 'phone-band'): Promise<string> {
  const file = path.join(work, `${name.replace(/\W+/g, '_')}.wav`);
  await encodeWaveformToFile(waveform(samples), { format: 'wav' }, file);
  return condition === 'wideband' ? file : phoneBand(file, work);
}

interface Score {
  turns: number;
  languageRight: number;
  errors: number;
  referenceLength: number;
}
const emptyScore = (): Score => ({ turns: 0, languageRight: 0, errors: 0, referenceLength: 0 });

async function scoreConversation(
  conversation: Conversation,
  file: string,
  diarize: boolean,
  weights: LanguagePriorWeights,
): Promise<Score & { wrong: string[] }> {
  const transcript = await transcribeFile(
    { transcriber, vad },
    {
      path: file,
      language: 'auto',
      speakers: {},
      maxAudioSeconds: 3600,
      languagePriorWeights: weights,
      ...(diarize ? { diarizer: diarizerFor(file) } : {}),
    },
  );
  const words = transcript.segments.flatMap((s) => s.words);
  const byTurn = conversation.turns.map(() => [] as typeof words);
  for (const word of words) {
    const middle = (word.start + word.end) / 2;
    const distance = (t: Turn): number => Math.max(t.startSeconds - middle, middle - t.endSeconds, 0);
    let nearest = 0;
    conversation.turns.forEach((t, i) => {
      if (distance(t) < distance(conversation.turns[nearest]!)) nearest = i;
    });
    byTurn[nearest]!.push(word);
  }
  const score = { ...emptyScore(), wrong: [] as string[] };
  conversation.turns.forEach((turn, i) => {
    const turnWords = byTurn[i]!;
    const counts = new Map<string, number>();
    for (const w of turnWords) counts.set(w.language ?? '?', (counts.get(w.language ?? '?') ?? 0) + 1);
    const language = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
    const rate = errorRate(turn.clip.transcript, turnWords.map((w) => w.word).join(''), turn.clip.language);
    score.turns++;
    if (language === turn.clip.language) score.languageRight++;
    else score.wrong.push(`${turn.clip.id} (${turn.clip.language}) as ${language ?? 'no words'}`);
    score.errors += rate.errors;
    score.referenceLength += rate.referenceLength;
  });
  return score;
}

/** Each clip alone, its language given: errors per clip id. */
async function aloneErrors(part: Clip[], condition: 'wideband' | 'phone-band'): Promise<Map<string, number>> {
  const errors = new Map<string, number>();
  for (const clip of part) {
    const file = await fileOf(`${clip.id}-${condition}`, clip.samples, condition);
    const transcript = await transcribeFile(
      { transcriber, vad },
      { path: file, language: clip.language, speakers: {}, maxAudioSeconds: 3600 },
    );
    errors.set(clip.id, errorRate(clip.transcript, transcript.text, clip.language).errors);
  }
  return errors;
}

const conditions = ['wideband', 'phone-band'] as const;
const round = (v: number, digits = 4): number => Math.round(v * 10 ** digits) / 10 ** digits;

async function runPart(part: Clip[], seed: number, weightsToTry: LanguagePriorWeights[]) {
  const made = conversations(part, seed);
  const files = new Map<string, string>();
  for (const condition of conditions)
    for (const c of made) files.set(`${c.id}/${condition}`, await fileOf(`${c.id}-${condition}`, c.samples, condition));
  const alone = new Map<string, Map<string, number>>();
  for (const condition of conditions) alone.set(condition, await aloneErrors(part, condition));
  const results: Array<{ weights: LanguagePriorWeights; rows: Array<Record<string, unknown>>; accuracy: number; errorRate: number }> = [];
  for (const weights of weightsToTry) {
    const rows: Array<Record<string, unknown>> = [];
    const total = emptyScore();
    for (const condition of conditions) {
      for (const diarize of [false, true]) {
        const score = { ...emptyScore(), wrong: [] as string[] };
        let aloneErrorCount = 0;
        for (const c of made) {
          const s = await scoreConversation(c, files.get(`${c.id}/${condition}`)!, diarize, weights);
          score.turns += s.turns;
          score.languageRight += s.languageRight;
          score.errors += s.errors;
          score.referenceLength += s.referenceLength;
          score.wrong.push(...s.wrong.map((w) => `${c.id}: ${w}`));
          aloneErrorCount += c.turns.reduce((sum, t) => sum + alone.get(condition)!.get(t.clip.id)!, 0);
        }
        for (const key of ['turns', 'languageRight', 'errors', 'referenceLength'] as const) total[key] += score[key];
        rows.push({
          condition,
          diarize,
          turns: score.turns,
          languageAccuracy: round(score.languageRight / score.turns),
          errorRate: round(score.errors / score.referenceLength),
          errorRateAlone: round(aloneErrorCount / score.referenceLength),
          differencePoints: round((100 * (score.errors - aloneErrorCount)) / score.referenceLength, 2),
          wrongTurns: score.wrong,
        });
      }
    }
    results.push({ weights, rows, accuracy: total.languageRight / total.turns, errorRate: total.errors / total.referenceLength });
    console.log(
      JSON.stringify({
        weights,
        accuracy: round(total.languageRight / total.turns),
        errorRate: round(total.errors / total.referenceLength),
      }),
    );
  }
  return { made, results };
}

const grid = weightGrid.flatMap((recording) => weightGrid.map((speaker) => ({ recording, speaker })));
const tuning = await runPart(tuningClips, 5000, grid);
const chosen = tuning.results.reduce((best, r) =>
  r.accuracy > best.accuracy || (r.accuracy === best.accuracy && r.errorRate < best.errorRate) ? r : best,
);
const heldOut = await runPart(heldOutClips, 6000, [chosen.weights]);
const describe = (made: Conversation[]) =>
  made.map((c) => ({
    id: c.id,
    seconds: round(c.samples.length / sampleRate, 2),
    turns: c.turns.map((t) => `${t.clip.id} (${t.clip.language})`),
  }));
writeFileSync(
  resultsPath,
  `${JSON.stringify(
    {
      description:
        'Language per turn with language=auto (issue 35, point 1): generated conversations of eval/asr clips in different languages ' +
        '(bench/language-per-turn.ts). languageAccuracy: turns whose words are mostly in the clip language. errorRate: WER ' +
        '(CER for zh, ja, ko) of the words nearest each turn, pooled; errorRateAlone: the same clips transcribed alone with their ' +
        'language given; differencePoints = 100 x (errorRate - errorRateAlone). Weights chosen on the tuning part.',
      date: new Date().toISOString(),
      model: engine.modelId,
      conversationsPerPart,
      weightGrid,
      chosenWeights: chosen.weights,
      heldOut: { clips: heldOutClips.map((c) => c.id), rows: heldOut.results[0]!.rows, conversations: describe(heldOut.made) },
      tuning: {
        clips: tuningClips.map((c) => c.id),
        rowsAtChosen: chosen.rows,
        grid: tuning.results.map((r) => ({ weights: r.weights, accuracy: round(r.accuracy), errorRate: round(r.errorRate) })),
        conversations: describe(tuning.made),
      },
    },
    null,
    1,
  )}\n`,
);
rmSync(work, { recursive: true, force: true });
console.log(`wrote ${resultsPath}`);
process.exit(0);
