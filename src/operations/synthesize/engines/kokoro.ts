/**
 * Kokoro-82M v1.0 (int8, rewritten at pull time, see src/models/convert/kokoro.ts) on onnxruntime-node in a worker
 * thread (src/models/onnx-worker.ts), 24 kHz.
 * Text is normalised, split into sentences (a long first sentence is split after a long first clause so the first
 * audio comes early), phonemised by espeak-ng (or pinyin for Mandarin) and synthesised piece by piece; the
 * next piece is phonemised while the current one runs. Silence at joins is trimmed (the model starts every run with
 * about 0.2 s of it). Emotions: see ../emotion.ts.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { applyGainDb, applySpectralTilt, guardPeak } from '../../../audio/shaping.js';
import { trimEdgeSilence } from '../../../audio/silence.js';
import { VoxError } from '../../../core/errors.js';
import { kokoroVoiceNames } from '../../../models/catalog/index.js';
import { prosody as emotionProsody } from '../emotion.js';
import type { BuiltinVoice, SpeechPart, SynthesisRequest, SynthesizedChunk, Synthesizer, VoiceSelection } from '../synthesizer.js';
import { normalizeText } from '../text/normalize.js';
import { endsSentence, joinPieces, speechPieces } from '../text/sentences.js';
import { mapWordTimes, shareWords, spokenWords, type TimedSpan } from '../text/word-times.js';
import { decoderLeadingPadFrames, durationsOutput, kokoroSamplesPerFrame } from '../../../models/convert/kokoro.js';
import { EnglishLexicon } from './english-lexicon.js';
import { kokoroIpa, kokoroPhonemes } from './kokoro-phonemes.js';
import { withStress } from '../text/phonemes.js';
import * as ort from 'onnxruntime-node';
import { SessionPool, sleepingThreadsOptions, WorkerSession } from '../../../models/onnx-worker.js';

export const kokoroSampleRate = 24000;
export const kokoroStyleSize = 256;
/** Phoneme ids per run (the model's context is 512 positions including the two pads). */
const maxTokens = 500;
/** Silence kept at a chunk's start, and at its end when the chunk stops inside a sentence (joins without gaps). */
const joinSilenceSeconds = { leading: 0.04, trailing: 0.1 };
const voiceRows = 510;

/**
 * Kokoro's published overall grade per voice (VOICES.md of Kokoro-82M v1.0; the English ones as kokoro-js 1.2.1 ships
 * them, the others copied by hand: no package reachable offline carries them). Voices are listed best first; those
 * without a grade come after the graded ones.
 */
const voiceGrades: Record<string, string> = {
  af_heart: 'A',
  af_bella: 'A-',
  af_nicole: 'B-',
  af_aoede: 'C+',
  af_kore: 'C+',
  af_sarah: 'C+',
  af_alloy: 'C',
  af_nova: 'C',
  af_sky: 'C-',
  af_jessica: 'D',
  af_river: 'D',
  am_fenrir: 'C+',
  am_michael: 'C+',
  am_puck: 'C+',
  am_echo: 'D',
  am_eric: 'D',
  am_liam: 'D',
  am_onyx: 'D',
  am_santa: 'D-',
  am_adam: 'F+',
  bf_emma: 'B-',
  bf_isabella: 'C',
  bf_alice: 'D',
  bf_lily: 'D',
  bm_fable: 'C',
  bm_george: 'C',
  bm_lewis: 'D+',
  bm_daniel: 'D',
  ff_siwis: 'B-',
  hf_alpha: 'C',
  hf_beta: 'C',
  hm_omega: 'C',
  hm_psi: 'C',
  if_sara: 'C',
  im_nicola: 'C',
  jf_alpha: 'C+',
  jf_gongitsune: 'C',
  jf_tebukuro: 'C',
  jf_nezumi: 'C-',
  jm_kumo: 'C-',
  zf_xiaobei: 'D',
  zf_xiaoni: 'D',
  zf_xiaoxiao: 'D',
  zf_xiaoyi: 'D',
  zm_yunjian: 'D',
  zm_yunxi: 'D',
  zm_yunxia: 'D',
  zm_yunyang: 'D',
};
/** A grade as a number to sort by (A = 12 ... F = 0, + and - a third of a step). */
const gradeScore = (grade: string | undefined): number =>
  grade === undefined ? -1 : (4 - 'ABCDF'.indexOf(grade[0]!)) * 3 + (grade[1] === '+' ? 1 : grade[1] === '-' ? -1 : 0);
/** Voice ids best first (a stable sort: equal grades keep the catalog's order). */
const voicesBestFirst = [...kokoroVoiceNames].sort((a, b) => gradeScore(voiceGrades[b]) - gradeScore(voiceGrades[a]));

const languageByPrefix: Record<string, string> = {
  a: 'en-us',
  b: 'en-gb',
  e: 'es',
  f: 'fr',
  h: 'hi',
  i: 'it',
  j: 'ja',
  p: 'pt-br',
  z: 'zh',
};
const defaultVoices: Record<string, string> = {
  'en-us': 'af_heart',
  'en-gb': 'bf_emma',
  es: 'ef_dora',
  fr: 'ff_siwis',
  it: 'if_sara',
  'pt-br': 'pf_dora',
  hi: 'hf_alpha',
  ja: 'jf_alpha',
  zh: 'zf_xiaoxiao',
};

export interface KokoroOptions {
  /** Directory of the `kokoro-82m` model (kokoro-v1.0-int8.onnx, vocab.json). */
  modelDir: string;
  /** Directory of the `kokoro-voices` model (<voice>.bin). */
  voicesDir: string;
  /** Directory of the `misaki-lexicon` model (English pronunciation lexicons). */
  lexiconDir: string;
  threads: number;
}

export class KokoroSynthesizer implements Synthesizer {
  readonly engine = 'kokoro';
  readonly modelId = 'kokoro-82m';
  readonly sampleRate = kokoroSampleRate;
  readonly description = 'Kokoro-82M neural voice';
  readonly neural = true;
  readonly blends = true;
  readonly shiftsPitch = true;
  private readonly voiceTables = new Map<string, Promise<Float32Array>>();
  private britishLexicon: Promise<EnglishLexicon> | undefined;
  private punctuation: Set<number> | undefined;

  private constructor(
    private readonly session: WorkerSession,
    /** For background requests: one-thread sessions side by side (see SessionPool). */
    private readonly backgroundSessions: SessionPool,
    private readonly vocab: Map<string, number>,
    private readonly voicesDir: string,
    private readonly lexiconDir: string,
    private readonly americanLexicon: EnglishLexicon,
  ) {}

  static async load(options: KokoroOptions): Promise<KokoroSynthesizer> {
    const vocabJson = JSON.parse(await readFile(path.join(options.modelDir, 'vocab.json'), 'utf8')) as { vocab: Record<string, number> };
    const modelPath = path.join(options.modelDir, 'kokoro-v1.0-int8.onnx');
    const [session, americanLexicon] = await Promise.all([
      WorkerSession.create('Kokoro', modelPath, sleepingThreadsOptions(options.threads)),
      EnglishLexicon.load(options.lexiconDir, 'us'),
    ]);
    return new KokoroSynthesizer(
      session,
      new SessionPool('Kokoro (background)', modelPath, options.threads),
      new Map(Object.entries(vocabJson.vocab)),
      options.voicesDir,
      options.lexiconDir,
      americanLexicon,
    );
  }

  languages(): string[] {
    return Object.keys(defaultVoices);
  }

  /** Best first, by Kokoro's published grades. */
  voices(): BuiltinVoice[] {
    return voicesBestFirst.map((id) => ({
      id,
      name: id.slice(3).replace(/^./, (c) => c.toUpperCase()),
      engine: 'kokoro',
      languages: [languageByPrefix[id[0]!]!],
      gender: id[1] === 'f' ? 'female' : id[1] === 'm' ? 'male' : 'unknown',
    }));
  }

  defaultVoice(language: string): string | undefined {
    return defaultVoices[language];
  }

  speaks(language: string): string | undefined {
    return defaultVoices[language] ? language : language === 'en' ? 'en-us' : language === 'pt' ? 'pt-br' : undefined;
  }

  /** Any of its voices speaks any of its languages (cross-lingually when made for another one). */
  voiceFor(language: string, voiceId?: string): string {
    return voiceId ?? defaultVoices[language]!;
  }

  /** Phoneme ids for a phoneme string (characters outside the vocabulary are dropped). */
  tokenize(phonemes: string): number[] {
    const ids: number[] = [];
    for (const ch of phonemes) {
      const id = this.vocab.get(ch);
      if (id !== undefined) ids.push(id);
    }
    return ids;
  }

  /** The style vector for a voice selection at a given phoneme count (Kokoro's tables have one row per length). */
  async style(voice: VoiceSelection, tokenCount: number): Promise<Float32Array> {
    if ('style' in voice) {
      if (voice.style.length !== kokoroStyleSize)
        throw new VoxError('invalid_request', `A Kokoro style vector has ${kokoroStyleSize} values.`, { param: 'voice' });
      return voice.style;
    }
    const parts = 'id' in voice ? [{ id: voice.id, weight: 1 }] : voice.blend;
    const total = parts.reduce((sum, p) => sum + p.weight, 0);
    if (parts.length === 0 || !(total > 0))
      throw new VoxError('invalid_request', 'A voice blend needs positive weights.', { param: 'voice' });
    const row = Math.min(Math.max(tokenCount, 1), voiceRows - 1);
    const style = new Float32Array(kokoroStyleSize);
    for (const part of parts) {
      const table = await this.voiceTable(part.id);
      for (let i = 0; i < kokoroStyleSize; i++) style[i]! += (part.weight / total) * table[row * kokoroStyleSize + i]!;
    }
    return style;
  }

  async *synthesize(request: SynthesisRequest): AsyncIterable<SynthesizedChunk> {
    const { language, signal } = request;
    if (!defaultVoices[language]) throw new VoxError('unsupported_value', `Kokoro does not speak '${language}'.`, { param: 'language' });
    const emotion = emotionProsody[request.emotion ?? 'neutral'];
    const speed = (request.speed ?? 1) * emotion.rate;
    // Pieces that stop inside a sentence lose their trailing silence.
    // Text with phonemes given by the caller is one piece, the words they stand for its text.
    const { parts } = request;
    const pieces = parts
      ? [
          {
            text: joinPieces(parts.map((p) => (p.ipa === undefined ? normalizeText(p.text, language) : p.text))),
            endsSentence: endsSentence(request.text),
          },
        ]
      : speechPieces(normalizeText(request.text, language));
    const prepare = (text: string) => this.prepare(text, language, signal, parts);
    let next = pieces.length > 0 ? prepare(pieces[0]!.text) : undefined;
    for (let i = 0; i < pieces.length; i++) {
      signal?.throwIfAborted();
      const prepared = await next!;
      next = i + 1 < pieces.length ? prepare(pieces[i + 1]!.text) : undefined;
      // Awaited on the next turn; if the caller stops early (abort, break) its failure must not go unhandled.
      next?.catch(() => undefined);
      if (prepared.ids.length === 0) continue;
      const runs = splitTokens(prepared.ids, prepared.breaks);
      const runWords = shareWords(
        spokenWords(pieces[i]!.text),
        runs.map((ids) => this.wordGroups(ids).length),
      );
      for (const [r, ids] of runs.entries()) {
        const endsSentence = r === runs.length - 1 && pieces[i]!.endsSentence;
        const { audio, durations } = await this.runTimed(
          ids,
          await this.style(request.voice, ids.length),
          speed,
          emotion.f0Semitones + (request.pitchSemitones ?? 0),
          emotion.f0Range,
          emotion.voiced,
          request.background,
        );
        const samples = trimEdgeSilence(audio, kokoroSampleRate, {
          leadingSeconds: joinSilenceSeconds.leading,
          trailingSeconds: endsSentence ? Infinity : joinSilenceSeconds.trailing,
        });
        const trimmedSeconds = (samples.byteOffset - audio.byteOffset) / audio.BYTES_PER_ELEMENT / kokoroSampleRate;
        const spans = this.wordGroups(ids).map((group) => tokenSpan(durations, group, trimmedSeconds, samples.length / kokoroSampleRate));
        applySpectralTilt(samples, kokoroSampleRate, emotion.tiltDb);
        applyGainDb(samples, emotion.gainDb);
        guardPeak(samples);
        yield {
          waveform: { samples, sampleRate: kokoroSampleRate, channels: 1 },
          text: pieces[i]!.text,
          words: mapWordTimes(runWords[r]!, spans),
        };
      }
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.session.close(), this.backgroundSessions.close()]);
  }

  /** One model run: ids without pads -> 24 kHz samples. */
  async run(ids: number[], style: Float32Array, speed: number, f0Semitones = 0, f0Range = 1, voiced = true): Promise<Float32Array> {
    return (await this.runTimed(ids, style, speed, f0Semitones, f0Range, voiced)).audio;
  }

  /** One model run with the frames (25 ms) the model gave each token, pads included. */
  async runTimed(
    ids: number[],
    style: Float32Array,
    speed: number,
    f0Semitones = 0,
    f0Range = 1,
    voiced = true,
    background = false,
  ): Promise<{ audio: Float32Array; durations: Float32Array }> {
    const tokens = BigInt64Array.from([0, ...ids, 0].map(BigInt));
    const outputs = await (background ? this.backgroundSessions : this.session).run({
      tokens: new ort.Tensor('int64', tokens, [1, tokens.length]),
      style: new ort.Tensor('float32', style, [1, style.length]),
      speed: new ort.Tensor('float32', Float32Array.of(speed), [1]),
      f0_scale: new ort.Tensor('float32', Float32Array.of(voiced ? 2 ** (f0Semitones / 12) : 0), [1]),
      f0_range: new ort.Tensor('float32', Float32Array.of(f0Range), [1]),
    });
    const durations = outputs[durationsOutput];
    if (!durations)
      throw new VoxError('internal', 'The Kokoro model predates word timestamps: pull it again (voxd models pull kokoro-82m).');
    return { audio: outputs.audio!.data as Float32Array, durations: durations.data as Float32Array };
  }

  /** Token positions (in ids) of each spoken word: runs between spaces, punctuation left out. */
  wordGroups(ids: number[]): number[][] {
    const groups: number[][] = [];
    let current: number[] = [];
    for (const [k, id] of ids.entries()) {
      if (id === this.spaceId) {
        if (current.length > 0) groups.push(current);
        current = [];
      } else if (!this.punctuationIds.has(id)) current.push(k);
    }
    if (current.length > 0) groups.push(current);
    return groups;
  }

  private get spaceId(): number | undefined {
    return this.vocab.get(' ');
  }

  private get punctuationIds(): Set<number> {
    this.punctuation ??= new Set([...this.vocab].filter(([ch]) => /[\p{P}\p{S}]/u.test(ch)).map(([, id]) => id));
    return this.punctuation;
  }

  private async prepare(
    text: string,
    language: string,
    signal?: AbortSignal,
    parts?: readonly SpeechPart[],
  ): Promise<{ ids: number[]; breaks: Set<number> }> {
    // American English (also for English words in Chinese) is loaded with the model; British on its first use.
    const british = language === 'en-gb' ? await (this.britishLexicon ??= EnglishLexicon.load(this.lexiconDir, 'gb')) : undefined;
    const read = (said: string) =>
      kokoroPhonemes(said, language, { signal, lexicons: { us: this.americanLexicon, ...(british ? { gb: british } : {}) } });
    const phonemes = parts
      ? joinPieces(
          await Promise.all(
            parts.map((p) => (p.ipa === undefined ? read(normalizeText(p.text, language)) : kokoroIpa(withStress(p.ipa), language))),
          ),
        )
      : await read(text);
    const ids = this.tokenize(phonemes);
    // Positions after punctuation or spaces are where an over-long chunk may be cut.
    const breakIds = new Set([
      this.vocab.get(' '),
      this.vocab.get(','),
      this.vocab.get('.'),
      this.vocab.get(';'),
      this.vocab.get(':'),
      this.vocab.get('!'),
      this.vocab.get('?'),
    ]);
    const breaks = new Set<number>();
    for (const [i, id] of ids.entries()) if (breakIds.has(id)) breaks.add(i + 1);
    return { ids, breaks };
  }

  private voiceTable(id: string): Promise<Float32Array> {
    if (!kokoroVoiceNames.includes(id)) throw new VoxError('not_found', `Unknown Kokoro voice '${id}'.`, { param: 'voice' });
    let table = this.voiceTables.get(id);
    if (!table) {
      table = readFile(path.join(this.voicesDir, `${id}.bin`)).then(
        (bytes) => new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)),
      );
      this.voiceTables.set(id, table);
    }
    return table;
  }
}

/**
 * Word times read 0.1 s earlier than the predicted frames place them: against faster-whisper's word times on the same
 * audio the frames came 0.11 s late (median over the English eval sentences, the tuning part of bench/tts-timestamps.ts).
 */
const wordLeadSeconds = 0.1;

/**
 * The seconds of a run's (trimmed) audio a word's tokens cover. Token k sits at position k + 1 (after the leading pad),
 * and the decoder dropped all but decoderLeadingPadFrames of that pad.
 */
function tokenSpan(durations: Float32Array, positions: number[], trimmedSeconds: number, lengthSeconds: number): TimedSpan {
  const droppedFrames = Math.max(durations[0]! - decoderLeadingPadFrames, 0);
  const frameSeconds = kokoroSamplesPerFrame / kokoroSampleRate;
  const startFrame = (position: number): number => {
    let frames = -droppedFrames;
    for (let p = 0; p < position; p++) frames += durations[p]!;
    return frames;
  };
  const first = positions[0]! + 1;
  const last = positions.at(-1)! + 1;
  const clamp = (seconds: number): number => Math.min(Math.max(seconds, 0), lengthSeconds);
  return {
    startSeconds: clamp(startFrame(first) * frameSeconds - trimmedSeconds - wordLeadSeconds),
    endSeconds: clamp((startFrame(last) + durations[last]!) * frameSeconds - trimmedSeconds - wordLeadSeconds),
  };
}

/** Cuts ids into runs of at most maxTokens, preferring the last break position inside each run. */
function splitTokens(ids: number[], breaks: Set<number>): number[][] {
  const runs: number[][] = [];
  let start = 0;
  while (ids.length - start > maxTokens) {
    let cut = start + maxTokens;
    for (let p = cut; p > start + maxTokens / 2; p--) {
      if (breaks.has(p)) {
        cut = p;
        break;
      }
    }
    runs.push(ids.slice(start, cut));
    start = cut;
  }
  runs.push(ids.slice(start));
  return runs;
}
