/**
 * POST /v1/audio/tts (and OpenAI's /v1/audio/speech): picks the engine for the voice and language, synthesizes
 * sentence by sentence, and encodes once (or streams as sentences are ready).
 */
import { once } from 'node:events';
import { PassThrough, Readable } from 'node:stream';
import PQueue from 'p-queue';
import { audioFormats, contentTypes, encodeWaveform, outputSampleRate, startEncoder } from '../../audio/encode.js';
import { concatSamples, type Waveform } from '../../audio/waveform.js';
import { unsupportedValue, VoxError } from '../../core/errors.js';
import type { OperationContext, OperationResult } from '../../core/operation-context.js';
import type { Scheduler } from '../../core/scheduler.js';
import type { Metrics } from '../../core/metrics.js';
import type { ApiKeyRecord } from '../../core/records.js';
import { resample } from '../../audio/resample.js';
import { applyGainDb } from '../../audio/shaping.js';
import { trimEdgeSilence } from '../../audio/silence.js';
import type { PronunciationRule } from '../../lexicons/contract.js';
import { cosineSimilarity, embeddingSampleRate } from '../../speakers/embedding.js';
import type { PronunciationDictionaryService } from '../../lexicons/service.js';
import type { BlendVoice, ReferenceSpeechOptions, VoiceProfile, VoiceService } from '../../voices/service.js';
import { conversionTarget } from '../convert/service.js';
import type { TargetProfileStats, VoiceConverter } from '../convert/voice-converter.js';
import { emotions, isEmotion, type Emotion } from './emotion.js';
import type { SpeechPart, SynthesisRequest, SynthesizedChunk, Synthesizer, VoiceSelection } from './synthesizer.js';
import { SpeechStream } from './speech-stream.js';
import { normalizeText } from './text/normalize.js';
import { endsSentence, joinPieces, splitFirstSentence, splitOpenSentence } from './text/sentences.js';
import {
  applyPronunciationRules,
  isSsml,
  parseSsml,
  plainSpeech,
  sameProsody,
  spokenText as segmentsText,
  ssmlMarkupIn,
  type SegmentProsody,
  type SpeechSegment,
} from './text/ssml.js';
import { characterAlignment, mapWordTimes, spokenWeight, spokenWords, type TimedWord } from './text/word-times.js';
import { maxTextCharacters, type OpenaiSpeechFields, type SynthesizeFields } from './contract.js';

export { emotions, type Emotion } from './emotion.js';
/** One sentence per Kokoro language: voice previews and the reference speech of built-in voices. */
/** The language of a request or profile that names none. */
const defaultLanguage = 'en-us';

const matchingSentences: Record<string, string> = {
  'en-us': 'The quick brown fox jumps over the lazy dog.',
  'en-gb': 'The quick brown fox jumps over the lazy dog.',
  es: 'El rápido zorro marrón salta sobre el perro perezoso junto al río.',
  fr: 'Le renard brun rapide saute par-dessus le chien paresseux près de la rivière.',
  it: 'La volpe marrone veloce salta sopra il cane pigro vicino al fiume.',
  'pt-br': 'A rápida raposa marrom pula sobre o cão preguiçoso perto do rio.',
  hi: 'तेज़ भूरी लोमड़ी नदी के किनारे आलसी कुत्ते के ऊपर कूदती है।',
  ja: '素早い茶色の狐が川のそばで怠け者の犬を飛び越える。',
  zh: '敏捷的棕色狐狸在河边跳过了懒惰的狗。',
};
export interface SynthesisDependencies {
  scheduler: Scheduler;
  metrics: Metrics;
  voices: VoiceService;
  /** The speech engines in order of preference (engines/registry.ts): a language goes to the first that speaks it. */
  engines: ReadonlyArray<() => Promise<Synthesizer>>;
  /** The pronunciation dictionaries requests name. */
  dictionaries: PronunciationDictionaryService;
  /** Voice conversion, moving a cloned voice's synthesised speech to the profile (absent: the speech stays unconverted). */
  converter?: () => Promise<VoiceConverter>;
}

/** Built-in voices are open to every caller: their analyses are prepared as a key that can reach nothing else. */
const builtinPreparer: ApiKeyRecord = {
  id: 'builtin-voice-preparation',
  name: 'built-in voice preparation',
  hash: '',
  prefix: '',
  scopes: [],
  createdAt: '',
  lastUsedAt: null,
  revokedAt: null,
  webhookSecret: '',
};

/** OpenAI's voice names and the Kokoro voices closest in character. */
const openaiVoices: Record<string, string> = {
  alloy: 'af_alloy',
  echo: 'am_echo',
  fable: 'bm_fable',
  onyx: 'am_onyx',
  nova: 'af_nova',
  shimmer: 'af_sky',
  ash: 'am_adam',
  ballad: 'bm_george',
  coral: 'af_heart',
  sage: 'af_sarah',
  verse: 'am_michael',
};

/** The voice profile an OpenAI voice name stands for (other names are taken as voice ids). */
export const openaiVoiceId = (voice: string): string => openaiVoices[voice.toLowerCase()] ?? voice;

/** Keywords in OpenAI's free-text `instructions` that select an emotion (first match wins). */
const instructionKeywords: Array<[RegExp, Emotion]> = [
  [/whisper/i, 'whisper'],
  [/excit|enthusias|energetic/i, 'excited'],
  [/happy|cheer|joy|upbeat|bright/i, 'happy'],
  [/sad|melanchol|sorrow|gloomy/i, 'sad'],
  [/angry|anger|furious|irritat/i, 'angry'],
  [/fear|scared|afraid|anxious|nervous/i, 'fearful'],
  [/surpris|amazed|astonish/i, 'surprised'],
  [/calm|soothing|relax|gentle|soft/i, 'calm'],
];

interface Plan {
  synthesizer: Synthesizer;
  language: string;
  voice: VoiceSelection;
  warnings: string[];
  /** Each chunk is then converted to this voice (a cloned voice). */
  convertTo?: { converter: VoiceConverter; target: TargetProfileStats };
}

/** Text with the plan that speaks it; phonemes are parts of the text around them (see sayPhonemesInSentence). */
type PlannedSpeech = Extract<SpeechSegment, { kind: 'text' }> & { plan: Plan; parts?: SpeechPart[] };
/** A segment as the renderer takes it. */
type PlannedSegment = Exclude<SpeechSegment, { kind: 'text' | 'phoneme' }> | PlannedSpeech;

/** The engines, and the language a request is spoken in. */
interface Languages {
  engines: Synthesizer[];
  language: string;
}

/** 'EN_us' -> 'en-us'. */
const normalizeLanguage = (tag: string): string => tag.trim().toLowerCase().replace(/_/g, '-');

type ParsedSpeech = { ssml: boolean; parsed: ReturnType<typeof parseSsml> };

/**
 * What `input` says: SSML when it is a <speak> document or `textType` says so, else plain text; at most
 * maxTextCharacters of text (markup does not count; a <sub> counts as its alias).
 */
function parsedSpeech(input: string, textType: 'text' | 'ssml' | undefined): ParsedSpeech {
  const ssml = textType === 'ssml' || (textType === undefined && isSsml(input));
  const parsed = ssml ? parseSsml(input) : plainSpeech(input.trim());
  const characters = [...segmentsText(parsed.segments)].length;
  if (characters > maxTextCharacters)
    throw new VoxError('invalid_request', `'text' has ${characters} characters of text; the limit is ${maxTextCharacters}.`, {
      param: 'text',
    });
  return { ssml, parsed };
}

/**
 * A piece of the speech socket's text: a whole `<speak>` document is SSML; SSML markup in any other piece (an element
 * sent outside a document, a document's end without its start) is refused, never read aloud.
 */
function streamedSpeech(piece: string): ParsedSpeech {
  const markup = isSsml(piece) ? undefined : ssmlMarkupIn(piece);
  if (markup)
    throw new VoxError(
      'invalid_request',
      `SSML markup outside a <speak> document: '${markup.tag}' at character ${markup.offset + 1} of ` +
        `'${piece.length > 80 ? `${piece.slice(0, 77)}...` : piece}'. Send SSML as a whole document, <speak> to </speak> ` +
        `(over as many text messages as needed); it was not spoken.`,
      { param: 'text' },
    );
  return parsedSpeech(piece, undefined);
}

export class SynthesisService {
  constructor(private readonly deps: SynthesisDependencies) {}

  async capabilities() {
    // The engines that load: capabilities describe what is there.
    const engines = (await Promise.all(this.deps.engines.map((engine) => engine().catch(() => undefined)))).filter(
      (engine) => engine !== undefined,
    );
    await Promise.all(engines.map((engine) => engine.refresh?.()));
    const languages = [...new Set(engines.flatMap((engine) => engine.languages()))].sort();
    return {
      available: languages.length > 0,
      languages,
      neural_languages: neuralLanguages(engines),
      // The voice to try first in each language: that of the first engine speaking it (Kokoro's best-graded voice).
      default_voices: Object.fromEntries(languages.map((l) => [l, firstSpeaking(engines, l)!.voice])),
      engines: engines.map((engine) => ({ engine: engine.engine, model: engine.modelId })),
      emotions: [...emotions],
      formats: [...audioFormats],
      max_text_characters: maxTextCharacters,
      streaming: true,
    };
  }

  /** Built-in voices of every engine, as voice profiles. */
  async builtinVoices(): Promise<VoiceProfile[]> {
    return (await this.engines()).flatMap((engine) =>
      engine.voices().map(
        (v): VoiceProfile => ({
          voice_id: v.id,
          name: v.name,
          type: 'builtin',
          languages: v.languages,
          gender_estimate: v.gender === 'unknown' ? null : v.gender,
          created_at: null,
          description: engine.description,
          labels: {},
          reference_seconds: 0,
          engine: v.engine,
          purpose: 'speech',
        }),
      ),
    );
  }

  /** The engines, with the voices installed since they loaded. */
  private async engines(): Promise<Synthesizer[]> {
    const engines = await Promise.all(this.deps.engines.map((engine) => engine()));
    await Promise.all(engines.map((engine) => engine.refresh?.()));
    return engines;
  }

  /** OpenAI's /v1/audio/speech: voice names mapped, instructions read for an emotion. */
  async synthesizeOpenai(fields: OpenaiSpeechFields, context: OperationContext): Promise<OperationResult> {
    const emotion = instructionKeywords.find(([pattern]) => pattern.test(fields.instructions ?? ''))?.[1];
    const streamFormat = fields.stream_format ?? 'audio';
    if (streamFormat !== 'audio' && streamFormat !== 'sse') throw unsupportedValue('stream_format', streamFormat, ['audio', 'sse']);
    let audioSeconds = 0;
    const result = await this.synthesize(
      {
        text: fields.input,
        voice_id: openaiVoiceId(fields.voice),
        ...(emotion ? { emotion } : {}),
        ...(fields.speed !== undefined ? { speed: fields.speed } : {}),
        format: fields.response_format ?? 'mp3',
        ...(streamFormat === 'sse' ? { stream: true } : {}),
        ...(fields.pronunciation_dictionary_ids ? { pronunciation_dictionary_ids: fields.pronunciation_dictionary_ids } : {}),
      },
      context,
      { onAudioSeconds: (seconds) => (audioSeconds += seconds) },
    );
    if (streamFormat !== 'sse' || result.kind !== 'stream') return result;
    // OpenAI's speech events: the encoded audio as it comes, base64 in speech.audio.delta, then speech.audio.done with
    // the usage (the audio's length is known once the stream has ended).
    const audio = result.stream;
    const inputTokens = textTokens(fields.input) + textTokens(fields.instructions ?? '');
    const events = async function* () {
      for await (const bytes of audio)
        yield `data: ${JSON.stringify({ type: 'speech.audio.delta', audio: Buffer.from(bytes as Uint8Array).toString('base64') })}\n\n`;
      const outputTokens = Math.round(audioSeconds * audioTokensPerSecond);
      const usage = { input_tokens: inputTokens, output_tokens: outputTokens, total_tokens: inputTokens + outputTokens };
      yield `data: ${JSON.stringify({ type: 'speech.audio.done', usage })}\n\n`;
    };
    return { kind: 'stream', stream: Readable.from(events()), contentType: 'text/event-stream', headers: result.headers ?? {} };
  }

  /** A short sample of a voice in its first language. */
  async preview(voiceId: string, context: OperationContext): Promise<OperationResult> {
    const profile = await this.deps.voices.speechProfile(voiceId, context.apiKey);
    const language = profile.languages[0] ?? defaultLanguage;
    const text = matchingSentences[language] ?? matchingSentences[language.split('-')[0]!] ?? 'Hello! This is a short preview of my voice.';
    return this.synthesize({ text, voice_id: voiceId, language, format: 'mp3' }, context);
  }

  /**
   * A request checked and planned: what is spoken as segments (plain text is one; SSML and pronunciation rules make
   * more), the plan of each voice and language in it, the output's sample rate.
   */
  private async prepareRequest(fields: SynthesizeFields, context: OperationContext) {
    const emotion = fields.emotion ?? 'neutral';
    if (!isEmotion(emotion)) throw unsupportedValue('emotion', emotion, emotions);
    // The text itself first: bad SSML or too much text is the request's fault whatever the voice.
    const speech = parsedSpeech(fields.text, fields.text_type);
    const profile = await this.deps.voices.speechProfile(fields.voice_id, context.apiKey);
    const pronunciationRules = await this.deps.dictionaries.rules(fields.pronunciation_dictionary_ids ?? [], context.apiKey);
    const plan = await this.plan(profile, fields.language, context.apiKey);
    const { text, segments, warnings } = await this.planSegments(speech, { profile, plan, fields }, context.apiKey, pronunciationRules);
    const format = fields.format ?? 'mp3';
    const sampleRate = outputSampleRate(format, fields.sample_rate ?? plan.synthesizer.sampleRate);
    const request = { text, language: plan.language, voice: plan.voice, emotion, speed: fields.speed ?? 1 };
    // Rough speaking time, for the scheduler's lane choice: ~15 characters per second.
    const estimatedSeconds = [...text].length / 15;
    const engine = plan.convertTo ? `${plan.synthesizer.engine}+${plan.convertTo.converter.engine}` : plan.synthesizer.engine;
    const allWarnings = [...new Set([...plan.warnings, ...warnings])];
    const headers = { 'x-voxd-engine': engine, ...(allWarnings.length > 0 ? { 'x-voxd-warnings': allWarnings.join(' | ') } : {}) };
    const model = plan.convertTo ? `${plan.synthesizer.modelId}+${plan.convertTo.converter.modelId}` : plan.synthesizer.modelId;
    const spokenText = normalizeText(text, plan.language);
    return {
      text,
      plan,
      segments,
      warnings: allWarnings,
      spokenText,
      format,
      sampleRate,
      request,
      estimatedSeconds,
      engine,
      headers,
      model,
    };
  }

  /**
   * The segments of `speech` with the pronunciation rules applied and a plan for each: the request's, or where SSML
   * switches language (<lang>) or voice (<voice>) that voice's plan for it (another engine where the voice cannot speak
   * the language). Checks that something is spoken.
   */
  private async planSegments(
    { ssml, parsed }: ParsedSpeech,
    main: { profile: VoiceProfile; plan: Plan; fields: { voice_id: string; language?: string } },
    caller: ApiKeyRecord,
    pronunciationRules: readonly PronunciationRule[],
  ): Promise<{ text: string; segments: PlannedSegment[]; warnings: string[] }> {
    const segments = applyPronunciationRules(parsed.segments, pronunciationRules, main.plan.language);
    const text = segmentsText(segments);
    if (text.length === 0 && !segments.some((s) => s.kind === 'break'))
      throw new VoxError('invalid_request', "'text' must not be empty.", { param: 'text' });
    const warnings = [...parsed.warnings];
    const plans = new Map<string, Promise<Plan>>();
    const planFor = (voiceId: string | undefined, language: string | undefined): Promise<Plan> => {
      const key = `${voiceId ?? main.fields.voice_id}\n${language ?? main.fields.language ?? ''}`;
      if (voiceId === undefined && language === undefined) return Promise.resolve(main.plan);
      let plan = plans.get(key);
      if (!plan) {
        plan = (async () => {
          const profile = voiceId === undefined ? main.profile : await this.deps.voices.speechProfile(voiceId, caller);
          return this.plan(profile, language ?? main.fields.language, caller);
        })();
        plans.set(key, plan);
      }
      return plan;
    };
    const planned: Array<
      Exclude<SpeechSegment, { kind: 'text' | 'phoneme' }> | (Extract<SpeechSegment, { kind: 'text' | 'phoneme' }> & { plan: Plan })
    > = [];
    for (const segment of segments) {
      if (segment.kind !== 'text' && segment.kind !== 'phoneme') {
        planned.push(segment);
        continue;
      }
      const plan = await planFor(segment.voiceId, segment.language);
      warnings.push(...plan.warnings.filter((w) => !main.plan.warnings.includes(w)));
      const pitchWarning = `SSML <prosody pitch> is not honoured by ${plan.synthesizer.engine}: its voices' pitch is predicted inside the model.`;
      if (segment.pitchSemitones && !plan.synthesizer.shiftsPitch && !warnings.includes(pitchWarning)) warnings.push(pitchWarning);
      planned.push({ ...segment, plan });
    }
    // Links are not read out and symbols alone say nothing: refuse instead of answering with empty audio.
    if (!planned.some((s) => s.kind === 'phoneme' || (s.kind === 'text' && /[\p{L}\p{N}]/u.test(normalizeText(s.text, s.plan.language))))) {
      if (!ssml || !planned.some((s) => s.kind === 'break'))
        throw new VoxError(
          'invalid_request',
          "'text' has nothing to speak: no words or numbers once links, symbols and punctuation are set aside.",
          { param: 'text' },
        );
    }
    return { text, segments: sayPhonemesInSentence(planned), warnings };
  }

  /** `onAudioSeconds`: each streamed chunk's length, as it is sent (OpenAI's SSE usage counts the audio). */
  async synthesize(
    fields: SynthesizeFields,
    context: OperationContext,
    hooks: { onAudioSeconds?: (seconds: number) => void } = {},
  ): Promise<OperationResult> {
    const { plan, segments, spokenText, format, sampleRate, request, estimatedSeconds, engine, headers, model } = await this.prepareRequest(
      fields,
      context,
    );
    const record = (elapsedSeconds: number, audioSeconds: number, streamed: boolean): void =>
      recordSynthesis(this.deps.metrics, context, { engine, model }, elapsedSeconds, audioSeconds, streamed);

    if (fields.stream) {
      return this.deps.scheduler.run('tts', estimatedSeconds, context.signal, async (signal, keepSlotUntil) => {
        const chunks = reportSpoken(
          render(segments, plan.synthesizer.sampleRate, { ...request, ...(signal ? { signal } : {}) }, { leadIn: true }),
          spokenText.length,
          context.onProgress,
        )[Symbol.asyncIterator]();
        // The encoder (a child process) starts while the first piece is synthesised; that piece is made before
        // answering, so errors still get a JSON envelope and a status code.
        const encoder = startEncoder({ format, sampleRate, inputSampleRate: plan.synthesizer.sampleRate, channels: 1 });
        const startedAt = performance.now();
        let audioSeconds = 0;
        let first: IteratorResult<SynthesizedChunk>;
        try {
          first = await chunks.next();
          if (first.done) throw nothingSpoken(plan.language);
        } catch (error) {
          encoder.abort();
          throw error;
        }
        const pump = async (): Promise<void> => {
          try {
            for (let current: IteratorResult<SynthesizedChunk> = first; !current.done; ) {
              // The next piece is synthesised (in Kokoro's worker thread) while this one is encoded and sent.
              const following = chunks.next();
              following.catch(() => undefined);
              await encoder.write(current.value.waveform.samples);
              const chunkSeconds = current.value.waveform.samples.length / current.value.waveform.sampleRate;
              audioSeconds += chunkSeconds;
              hooks.onAudioSeconds?.(chunkSeconds);
              current = await following;
            }
            encoder.end();
            record((performance.now() - startedAt) / 1000, audioSeconds, true);
          } catch (error) {
            context.log.warn({ err: error }, 'streamed synthesis stopped');
            encoder.abort();
          }
        };
        context.signal.addEventListener('abort', () => encoder.abort(), { once: true });
        // The rest of the speech is synthesised while the response streams, still inside this job's slot.
        keepSlotUntil(pump());
        return { kind: 'stream', stream: encoder.output as Readable, contentType: contentTypes[format], headers };
      });
    }

    const waveform = await this.deps.scheduler.run('tts', estimatedSeconds, context.signal, async (signal) => {
      const startedAt = performance.now();
      const audio = await collect(
        reportSpoken(
          render(segments, plan.synthesizer.sampleRate, { ...request, ...(signal ? { signal } : {}) }, { leadIn: true }),
          spokenText.length,
          context.onProgress,
        ),
        plan.synthesizer.sampleRate,
      );
      const elapsedSeconds = (performance.now() - startedAt) / 1000;
      if (audio.samples.length === 0) throw nothingSpoken(plan.language);
      record(elapsedSeconds, audio.samples.length / audio.sampleRate, false);
      return audio;
    });
    return {
      kind: 'audio',
      bytes: await encodeWaveform(waveform, { format, sampleRate, signal: context.signal }),
      contentType: contentTypes[format],
      headers,
    };
  }

  /**
   * POST /v1/audio/tts/with-timestamps: the speech as base64 with the times of the words as written (and of their
   * characters, as ElevenLabs' `alignment`), from the engine's word times (SynthesizedChunk.words); `stream` answers
   * NDJSON, a line per chunk with its audio and the alignment of its words (times from the start of the whole speech).
   */
  async synthesizeWithTimestamps(fields: SynthesizeFields, context: OperationContext): Promise<OperationResult> {
    const { text, plan, segments, warnings, spokenText, format, sampleRate, request, estimatedSeconds, engine, headers, model } =
      await this.prepareRequest(fields, context);
    const written = writtenWords(text, plan.language);
    /** SSML <mark>s with their seconds in the audio. */
    const marks: Array<{ name: string; time: number }> = [];
    const timed = async function* (chunks: AsyncIterable<SynthesizedChunk>) {
      let offsetSeconds = 0;
      for await (const chunk of chunks) {
        for (const name of chunk.marks ?? []) marks.push({ name, time: roundMs(offsetSeconds) });
        if (!chunk.words) {
          throw new VoxError(
            'unsupported_value',
            `The ${engine} voice gives no word timestamps for this text; a Kokoro voice always does.`,
            {
              param: 'voice_id',
            },
          );
        }
        const words = chunk.words.map((w) => ({
          ...w,
          startSeconds: w.startSeconds + offsetSeconds,
          endSeconds: w.endSeconds + offsetSeconds,
        }));
        offsetSeconds += chunk.waveform.samples.length / chunk.waveform.sampleRate;
        yield { chunk, words };
      }
    };
    const answer = (audio: Buffer, words: TimedWord[], characterText: string) => ({
      audio_base64: audio.toString('base64'),
      format,
      sample_rate: sampleRate,
      words: words.map((w) => ({ word: w.word, start: roundMs(w.startSeconds), end: roundMs(w.endSeconds) })),
      characters: characterAlignment(characterText, words),
      marks: marks.splice(0),
      ...(warnings.length > 0 ? { warnings } : {}),
    });
    if (fields.stream) {
      return this.deps.scheduler.run('tts', estimatedSeconds, context.signal, async (signal, keepSlotUntil) => {
        const startedAt = performance.now();
        const chunks = timed(
          render(segments, plan.synthesizer.sampleRate, { ...request, wordTimes: true, ...(signal ? { signal } : {}) }, { leadIn: true }),
        );
        let writtenDone = 0;
        let audioSeconds = 0;
        const lettersToSpeak = letterCount(spokenText);
        let lettersSpoken = 0;
        const lines = async function* () {
          for await (const { chunk, words } of chunks) {
            lettersSpoken += letterCount(chunk.text);
            // A mark alone is no line: it goes with the next audio.
            if (chunk.waveform.samples.length === 0) continue;
            // A line carries the written words its spoken words stand for; the last speech carries what is left (a
            // written word read in context can make fewer spoken words than alone: "5/6/2026." at the end).
            const last = lettersSpoken >= lettersToSpeak;
            const upTo = last ? written.length : writtenDone + writtenShare(written.slice(writtenDone), words.length, plan.language);
            const share = written.slice(writtenDone, upTo);
            writtenDone = upTo;
            audioSeconds += chunk.waveform.samples.length / chunk.waveform.sampleRate;
            const lineWords = mapWordTimes(
              share.map((w) => w.word),
              words,
              { words: share.map((w) => w.weight), spans: words.map((w) => spokenWeight(w.word)) },
            );
            const bytes = await encodeWaveform(chunk.waveform, { format, sampleRate, signal: context.signal });
            yield `${JSON.stringify(answer(bytes, lineWords, share.map((w) => w.word).join(' ')))}\n`;
          }
          // Words no speech line took (the engine's text differs from ours): a last line without audio, at the end.
          if (writtenDone < written.length) {
            const end = { startSeconds: audioSeconds, endSeconds: audioSeconds };
            const rest = written.slice(writtenDone).map((w) => ({ word: w.word, ...end }));
            yield `${JSON.stringify(answer(Buffer.alloc(0), rest, rest.map((w) => w.word).join(' ')))}\n`;
          }
        };
        const iterator = lines();
        // The first line is made before answering, so errors still get a JSON envelope and a status code.
        const first = await iterator.next();
        if (first.done) throw nothingSpoken(plan.language);
        const output = new PassThrough();
        output.write(first.value);
        const pump = async (): Promise<void> => {
          try {
            for await (const line of { [Symbol.asyncIterator]: () => iterator }) if (!output.write(line)) await once(output, 'drain');
            output.end();
            recordSynthesis(this.deps.metrics, context, { engine, model }, (performance.now() - startedAt) / 1000, audioSeconds, true);
          } catch (error) {
            context.log.warn({ err: error }, 'streamed synthesis stopped');
            output.destroy(error as Error);
          }
        };
        keepSlotUntil(pump());
        return { kind: 'stream', stream: output, contentType: 'application/x-ndjson', headers };
      });
    }
    return this.deps.scheduler.run('tts', estimatedSeconds, context.signal, async (signal) => {
      const startedAt = performance.now();
      const spoken: TimedWord[] = [];
      const parts: Float32Array[] = [];
      for await (const { chunk, words } of timed(
        reportSpoken(
          render(segments, plan.synthesizer.sampleRate, { ...request, wordTimes: true, ...(signal ? { signal } : {}) }, { leadIn: true }),
          spokenText.length,
          context.onProgress,
        ),
      )) {
        spoken.push(...words);
        parts.push(chunk.waveform.samples);
      }
      const audio: Waveform = { samples: concatSamples(parts), sampleRate: plan.synthesizer.sampleRate, channels: 1 };
      if (audio.samples.length === 0) throw nothingSpoken(plan.language);
      recordSynthesis(
        this.deps.metrics,
        context,
        { engine, model },
        (performance.now() - startedAt) / 1000,
        audio.samples.length / audio.sampleRate,
        false,
      );
      const words = mapWordTimes(
        written.map((w) => w.word),
        spoken,
        { words: written.map((w) => w.weight), spans: spoken.map((w) => spokenWeight(w.word)) },
      );
      const bytes = await encodeWaveform(audio, { format, sampleRate, signal: context.signal });
      return { kind: 'json', body: answer(bytes, words, text), headers } satisfies OperationResult;
    });
  }

  /**
   * A stream of speech for text that arrives in pieces (the speech socket): the voice plan is made once. `emotion` is
   * checked here: the socket's start event carries any string.
   */
  async openStream(
    fields: { voice_id: string; language?: string; emotion?: string; speed?: number; pronunciation_dictionary_ids?: string[] },
    caller: ApiKeyRecord,
  ): Promise<SpeechStream> {
    const emotion = fields.emotion ?? 'neutral';
    if (!isEmotion(emotion)) throw unsupportedValue('emotion', emotion, emotions);
    const profile = await this.deps.voices.speechProfile(fields.voice_id, caller);
    const pronunciationRules = await this.deps.dictionaries.rules(fields.pronunciation_dictionary_ids ?? [], caller);
    const plan = await this.plan(profile, fields.language, caller);
    const planSegments = this.planSegments.bind(this);
    return new SpeechStream(
      {
        engine: plan.convertTo ? `${plan.synthesizer.engine}+${plan.convertTo.converter.engine}` : plan.synthesizer.engine,
        model: plan.convertTo ? `${plan.synthesizer.modelId}+${plan.convertTo.converter.modelId}` : plan.synthesizer.modelId,
        language: plan.language,
        sampleRate: plan.synthesizer.sampleRate,
        warnings: plan.warnings,
        // Each piece (an SSML document too) is planned as a request is; its segments' warnings are the stream's.
        speak: async function* (this: void, text: string, signal: AbortSignal) {
          const { segments } = await planSegments(streamedSpeech(text), { profile, plan, fields }, caller, pronunciationRules);
          yield* render(
            segments,
            plan.synthesizer.sampleRate,
            {
              text,
              language: plan.language,
              voice: plan.voice,
              emotion,
              speed: fields.speed ?? 1,
              signal,
            },
            // Pieces follow each other as the text arrives: a lead-in would be a gap, and latency is the socket's point.
            { leadIn: false },
          );
        },
      },
      this.deps.scheduler,
      this.deps.metrics,
    );
  }

  /** The requested language (else the voice's first); 422 when no engine speaks it. */
  private async languages(profile: VoiceProfile, requested: string | undefined): Promise<Languages> {
    const engines = await this.engines();
    const language = normalizeLanguage(requested ?? profile.languages[0] ?? defaultLanguage);
    if (!firstSpeaking(engines, language))
      throw unsupportedValue('language', requested ?? language, [...new Set(engines.flatMap((engine) => engine.languages()))].sort());
    return { engines, language };
  }

  /**
   * A built-in voice speaks the language through its own engine when that engine speaks it (Kokoro: in any of its voices,
   * cross-lingually when the voice was made for another language); else the first engine speaking it does, in its voice.
   */
  private builtinPlan(profile: VoiceProfile, { engines, language }: Languages): Plan {
    const warnings: string[] = [];
    const first = firstSpeaking(engines, language)!;
    const own = engines.find((engine) => engine.engine === profile.engine);
    const ownLanguage = own?.speaks(language);
    if (!own || !ownLanguage) {
      warnings.push(`${profile.voice_id} has no model for '${language}': ${first.synthesizer.modelId}'s voice ${first.voice} speaks it.`);
      return { synthesizer: first.synthesizer, language: first.language, voice: { id: first.voice }, warnings };
    }
    const voice = own.voiceFor(ownLanguage, profile.voice_id);
    // A better engine has the language: say that this voice speaks it by its own engine's means.
    if (first.synthesizer !== own && !profile.languages.some((l) => l.startsWith(language)))
      warnings.push(
        `${profile.voice_id} speaks ${profile.languages.join(', ')}; '${language}' is spoken by ${own.modelId}'s voice ${voice}.`,
      );
    return { synthesizer: own, language: ownLanguage, voice: { id: voice }, warnings };
  }

  /**
   * A blend speaks through its (blending) engine in the requested language, whatever the languages its voices were made
   * for (Kokoro speaks any language in any voice; the blend's default language is its first voice's). A cloned voice in
   * it enters as its own blend of Kokoro voices (clonedStyle), without voice conversion: the mix is nobody's recording
   * to convert to.
   */
  private async blendPlan(
    profile: VoiceProfile,
    voices: readonly BlendVoice[],
    { engines, language }: Languages,
    requested: string | undefined,
    caller: ApiKeyRecord,
  ): Promise<Plan> {
    const engine = engines.find((e) => e.engine === profile.engine && e.blends);
    if (!engine) throw new VoxError('model_unavailable', `Blended voices speak with ${profile.engine}, which is not installed here.`);
    const spoken = engine.speaks(language);
    // Typically a cloned voice of another language first in the blend: its language is the blend's.
    if (!spoken)
      throw new VoxError(
        'unsupported_value',
        `Voice '${profile.voice_id}' is a blend, spoken by ${engine.engine}, which has no voices for '${language}' (` +
          `${requested ? 'the language asked for' : "the blend's language: its first voice's"}). Name a language it speaks ` +
          `(${engine.languages().join(', ')}); a cloned voice then enters as its mix of that language's voices.`,
        { param: 'language' },
      );
    const builtin = new Set(engine.voices().map((v) => v.id));
    const weights = new Map<string, number>();
    const warnings: string[] = [];
    for (const voice of voices) {
      const parts = builtin.has(voice.voice_id)
        ? [{ id: voice.voice_id, weight: 1 }]
        : (await this.clonedStyle(voice.voice_id, spoken, engine, caller)).blend;
      if (!builtin.has(voice.voice_id))
        warnings.push(`Cloned voice ${voice.voice_id} enters the blend as its mix of ${engine.engine} voices, without voice conversion.`);
      for (const part of parts) weights.set(part.id, (weights.get(part.id) ?? 0) + part.weight * voice.weight);
    }
    const blend = [...weights].map(([id, weight]) => ({ id, weight }));
    return { synthesizer: engine, language: spoken, voice: { blend }, warnings };
  }

  /** Built-in voices as builtinPlan; cloned voices speak through the first engine speaking the language, then voice conversion. */
  private async plan(profile: VoiceProfile, requested: string | undefined, caller: ApiKeyRecord): Promise<Plan> {
    const languages = await this.languages(profile, requested);
    if (profile.type === 'builtin') return this.builtinPlan(profile, languages);
    if (profile.blend) return this.blendPlan(profile, profile.blend, languages, requested, caller);
    const { language } = languages;
    const warnings: string[] = [];
    // A cloned voice: an engine that blends (Kokoro) speaks with the profile's blend of its voices, another neural one
    // (Piper) in its voice of the language closest to the profile, espeak-ng in its voice for the language; voice conversion then moves that speech to the profile's voice. After Kokoro it lifts the
    // output's similarity to its own profile (bench: closer to its own than to another profile in 95.5% of pairs instead
    // of 78%) for two words in 231 lost.
    const first = firstSpeaking(languages.engines, language)!;
    const speaker = {
      synthesizer: first.synthesizer,
      language: first.language,
      voice: first.synthesizer.blends
        ? await this.clonedStyle(profile.voice_id, first.language, first.synthesizer, caller)
        : first.synthesizer.neural
          ? { id: await this.closestVoice(profile.voice_id, first.language, first.synthesizer, caller) }
          : { id: first.voice },
    };
    if (!this.deps.converter) {
      warnings.push(
        `No voice-conversion engine is installed: '${language}' is spoken by a ${speaker.synthesizer.engine} voice close to the ` +
          `profile, not converted to it.`,
      );
      return { ...speaker, warnings };
    }
    const converter = await this.deps.converter();
    return {
      ...speaker,
      warnings,
      convertTo: { converter, target: await conversionTarget(this.deps.voices, converter, profile.voice_id, caller) },
    };
  }

  /**
   * Speech in a built-in voice standing in for a cloned profile's reference clips (16 kHz mono): its language's matching
   * sentence (timbre and pitch, not the words, are what is analysed). One short sentence is enough, and it is what setup
   * waits for: the English one (2.9 s of speech) costs 25% less synthesis than the longer 'near the river bank' one, and
   * side by side on 28 Nov (bench/results/speaker-embeddings.json, voices) the gender estimates came out the same for the
   * eval speakers (10 of 11) and better for the Kokoro voices (53 of 54 against 50), the blends found for the eval
   * speakers as close after conversion (GE2E 0.686 against 0.689, CAM++ 0.163 against 0.146), and conversion to 8
   * built-in voices from 4 eval sources as close to the voice (GE2E 0.677 against 0.681).
   */
  async referenceSpeech(voiceId: string, options: ReferenceSpeechOptions = {}): Promise<Waveform> {
    const { signal, background = false } = options;
    const profile = (await this.builtinVoices()).find((v) => v.voice_id === voiceId);
    if (!profile) throw new VoxError('internal', `'${voiceId}' is not a built-in voice.`);
    const plan = this.builtinPlan(profile, await this.languages(profile, profile.languages[0]));
    const text = matchingSentences[plan.language] ?? matchingSentences[plan.language.split('-')[0]!] ?? matchingSentences[defaultLanguage]!;
    const speech = await collect(
      speak(plan, { text, language: plan.language, voice: plan.voice, background, ...(signal ? { signal } : {}) }),
      plan.synthesizer.sampleRate,
    );
    return resample(speech, embeddingSampleRate, signal);
  }

  /**
   * The built-in voices analysed with the models: the blending engines' (Kokoro's) English voices (American and British,
   * 28), English being the default language, and every installed voice of the other neural engines (Piper voices, each
   * pulled to be spoken). Kokoro's are what the gender estimate of every profile reads (a fixed set, so
   * an estimate does not depend on which other voices happen to be analysed; at its 0.06 margin the eval speakers of known
   * gender come out 11 of 11 right against these references, as against all 54, and 10 of 11 against the 20 American ones)
   * and what a first cloned voice speaking English blends from. Analysing all 54 voices took 113 s on 2 cores (Kokoro's
   * synthesis of one sentence per voice, about 3.4 CPU-seconds each); the others are analysed by the first cloned-voice
   * speech in their language and kept like these.
   */
  async preparedVoiceIds(): Promise<string[]> {
    return (await this.engines())
      .filter((engine) => engine.neural)
      .flatMap((engine) =>
        engine.blends ? engine.voices().filter((v) => v.languages.some((language) => language.startsWith('en-'))) : engine.voices(),
      )
      .map((v) => v.id);
  }

  /**
   * Computes the speaker embedding of the given built-in voices (default: preparedVoiceIds) into the built-in analysis
   * store with the reference speech it came from, skipping those already there: at pull time, and at start for models
   * pulled before. Two voices are in flight, their speech background work (for Kokoro, one-thread sessions side by
   * side: 28 voices in 52 s where two runs sharing one two-thread session took 66 s). What a converter needs
   * of a voice as its target is computed from the kept speech on first use (conversionTarget) and kept the same way.
   * Returns how many voices needed work.
   */
  async prepareBuiltinVoices(
    options: {
      voiceIds?: string[];
      onVoice?: (done: number, total: number, message: string) => void;
      signal?: AbortSignal;
      /** Default true; false where a request waits on these few voices (one-thread sessions would be slower to start). */
      background?: boolean;
    } = {},
  ): Promise<number> {
    const voiceIds = options.voiceIds ?? (await this.preparedVoiceIds());
    const queue = new PQueue({ concurrency: 2 });
    let done = 0;
    let prepared = 0;
    await queue.addAll(
      voiceIds.map((voiceId) => async () => {
        options.signal?.throwIfAborted();
        const startedAt = performance.now();
        const computedBefore = this.deps.voices.builtinAnalysesComputed;
        await this.deps.voices.speakerEmbedding(voiceId, builtinPreparer, {
          background: options.background ?? true,
          ...(options.signal ? { signal: options.signal } : {}),
        });
        done++;
        if (this.deps.voices.builtinAnalysesComputed === computedBefore) return;
        prepared++;
        options.onVoice?.(
          done,
          voiceIds.length,
          `built-in voice ${voiceId} analysed (${done}/${voiceIds.length}, ${((performance.now() - startedAt) / 1000).toFixed(1)} s)`,
        );
      }),
    );
    return prepared;
  }

  /**
   * A cloned voice in a language of a blending engine (Kokoro) speaks with a blend of its three voices (of that language)
   * closest to the profile by speaker embedding, weighted by similarity. The built-in voices' embeddings are computed once for all
   * profiles; the blend is kept with the profile. The embedding is GE2E's: with CAM++ choosing, the converted speech of
   * 11 eval profiles was no closer to them under CAM++ itself (0.144 against 0.143) and further under GE2E (0.683 against
   * 0.692; bench/speaker-embeddings.ts, voices).
   */
  private async clonedStyle(
    voiceId: string,
    language: string,
    engine: Synthesizer,
    caller: ApiKeyRecord,
  ): Promise<{ blend: Array<{ id: string; weight: number }> }> {
    const record = await this.deps.voices.record(voiceId, caller);
    const target = await this.deps.voices.speakerEmbedding(voiceId, caller);
    if (!target) throw new VoxError('internal', `Voice '${voiceId}' has no speaker embedding.`);
    const { analysis } = await this.deps.voices.derived(voiceId, caller, `${engine.engine}-blend-${language}`, async () => {
      const scored: Array<{ id: string; similarity: number }> = [];
      const sameLanguage = engine.voices().filter((v) => v.languages.includes(language));
      const sameGender = sameLanguage.filter((v) => v.gender === record.genderEstimate);
      const candidates = sameGender.length >= 2 ? sameGender : sameLanguage;
      // Outside the default language, the first cloned speech in a language analyses its voices (two in flight).
      await this.prepareBuiltinVoices({ voiceIds: candidates.map((v) => v.id), background: false });
      for (const voice of candidates) {
        const embedding = await this.deps.voices.speakerEmbedding(voice.id, caller);
        if (embedding) scored.push({ id: voice.id, similarity: cosineSimilarity(embedding, target) });
      }
      return { analysis: { blend: closestVoicesBlend(scored) }, files: {} };
    });
    return { blend: (analysis.blend as Array<{ id: string; weight: number }>).map(({ id, weight }) => ({ id, weight })) };
  }

  /**
   * A cloned voice in a language of a neural engine that cannot blend (Piper) speaks in that engine's voice of the
   * language closest to the profile by speaker embedding (the built-in voices' embeddings are prepared as Kokoro's are).
   * Chosen on each plan, not kept with the profile: the voices installed change when one is pulled.
   */
  private async closestVoice(voiceId: string, language: string, engine: Synthesizer, caller: ApiKeyRecord): Promise<string> {
    const target = await this.deps.voices.speakerEmbedding(voiceId, caller);
    if (!target) throw new VoxError('internal', `Voice '${voiceId}' has no speaker embedding.`);
    let closest: { id: string; similarity: number } | undefined;
    for (const voice of engine.voices().filter((v) => v.languages.includes(language))) {
      const embedding = await this.deps.voices.speakerEmbedding(voice.id, caller);
      const similarity = embedding ? cosineSimilarity(embedding, target) : -Infinity;
      if (!closest || similarity > closest.similarity) closest = { id: voice.id, similarity };
    }
    return closest?.id ?? engine.voiceFor(language);
  }
}

/** A language natural (neural) speech is available in, here or once a model is pulled. */
export interface NeuralLanguage {
  language: string;
  /** A neural voice for it is loaded. */
  installed: boolean;
  /**
   * Installed: the ids of the voices that speak it (engines in order of preference, each one's best first); else the
   * catalog models to pull, best first.
   */
  voices: string[];
}

/** Every language a neural engine speaks, or would speak once one of its catalog's voices is pulled; sorted by tag. */
function neuralLanguages(engines: readonly Synthesizer[]): NeuralLanguage[] {
  const neural = engines.filter((engine) => engine.neural);
  const installed = new Map<string, string[]>();
  for (const engine of neural) {
    const voices = engine.voices();
    for (const language of engine.languages())
      installed.set(language, [
        ...(installed.get(language) ?? []),
        ...voices.filter((voice) => voice.languages.includes(language)).map((voice) => voice.id),
      ]);
  }
  const pullable = new Map<string, string[]>();
  for (const { model, language } of neural.flatMap((engine) => engine.pullable?.() ?? []))
    if (!installed.has(language)) pullable.set(language, [...(pullable.get(language) ?? []), model]);
  return [...installed.keys(), ...pullable.keys()]
    .sort()
    .map((language) => ({ language, installed: installed.has(language), voices: installed.get(language) ?? pullable.get(language)! }));
}

/** The first engine speaking a language, the tag it speaks it as and its voice for it. */
function firstSpeaking(
  engines: readonly Synthesizer[],
  language: string,
): { synthesizer: Synthesizer; language: string; voice: string } | undefined {
  for (const synthesizer of engines) {
    const spoken = synthesizer.speaks(language);
    if (spoken) return { synthesizer, language: spoken, voice: synthesizer.voiceFor(spoken) };
  }
  return undefined;
}

/** Text whose every word the engine had to skip (e.g. Arabic script for a Chinese voice). */
function nothingSpoken(language: string): VoxError {
  return new VoxError(
    'unsupported_value',
    `Nothing in 'text' can be spoken in '${language}': its words are in a script this voice does not read.`,
    { param: 'text' },
  );
}

/** The plan's engine speaking, chunk by chunk; converted to the plan's target voice when it has one. */
async function* speak(plan: Plan, request: SynthesisRequest): AsyncIterable<SynthesizedChunk> {
  for await (const chunk of plan.synthesizer.synthesize(request)) {
    if (!plan.convertTo) {
      yield chunk;
      continue;
    }
    // The spoken emotion's intonation is kept, moved into the target's register.
    let converted: Awaited<ReturnType<VoiceConverter['convert']>>;
    try {
      converted = await plan.convertTo.converter.convert(chunk.waveform, plan.convertTo.target, {
        preserveEmotion: true,
        ...(request.signal ? { signal: request.signal } : {}),
      });
    } catch (error) {
      // A word or two has too little voiced speech to analyse: it keeps the voice the engine spoke it in (for a cloned
      // voice, the blend closest to it) instead of failing the request (a dub's one-word line).
      if (error instanceof VoxError && error.code === 'invalid_request') {
        yield chunk;
        continue;
      }
      throw error;
    }
    // Conversion keeps timing; any change of length stretches the word times with it.
    const stretch =
      converted.waveform.samples.length / converted.waveform.sampleRate / (chunk.waveform.samples.length / chunk.waveform.sampleRate);
    const words = chunk.words?.map((w) => ({ ...w, startSeconds: w.startSeconds * stretch, endSeconds: w.endSeconds * stretch }));
    yield { ...chunk, waveform: converted.waveform, ...(words ? { words } : {}) };
  }
}

/**
 * Phonemes said within their sentence: a phoneme segment joins the open sentence before it and the end of the sentence
 * after it (same plan and prosody) into one run of parts. Said as a run of its own, a word lost or changed its first sound
 * (Piper's joe: /bɹˈɛd/ heard as "red" or "brad").
 */
function sayPhonemesInSentence(
  segments: ReadonlyArray<
    Exclude<SpeechSegment, { kind: 'text' | 'phoneme' }> | (Extract<SpeechSegment, { kind: 'text' | 'phoneme' }> & { plan: Plan })
  >,
): PlannedSegment[] {
  const out: PlannedSegment[] = [];
  const joins = (run: PlannedSegment | undefined, segment: SegmentProsody & { plan: Plan }): run is PlannedSpeech =>
    run?.kind === 'text' && run.plan === segment.plan && sameProsody(run, segment);
  const withParts = (run: PlannedSpeech, parts: SpeechPart[]): PlannedSpeech => ({
    ...run,
    text: joinPieces(parts.map((p) => p.text)),
    parts,
  });
  const sentenceOpen = (parts: readonly SpeechPart[]): boolean =>
    parts.at(-1)?.ipa !== undefined || !endsSentence(parts.at(-1)?.text ?? '');
  for (const segment of segments) {
    const last = out.at(-1);
    if (segment.kind === 'phoneme') {
      const { ipa, ...speech } = segment;
      const said = { text: segment.text, ipa };
      if (!joins(last, segment)) out.push({ ...speech, kind: 'text', parts: [said] });
      else if (last.parts) out[out.length - 1] = withParts(last, [...last.parts, said]);
      else {
        const [closed, open] = splitOpenSentence(last.text);
        out.pop();
        if (closed.trim()) out.push({ ...last, text: closed });
        out.push(withParts(last, [...(open.trim() ? [{ text: open }] : []), said]));
      }
      continue;
    }
    if (segment.kind === 'text' && joins(last, segment) && last.parts && sentenceOpen(last.parts)) {
      const [first, rest] = splitFirstSentence(segment.text);
      out[out.length - 1] = withParts(last, [...last.parts, { text: first }]);
      if (rest.trim()) out.push({ ...segment, text: rest });
      continue;
    }
    out.push(segment);
  }
  return out;
}

/** A segment's audio and words at the output rate, its volume applied. */
async function* speakSegment(segment: PlannedSpeech, outputRate: number, request: SynthesisRequest): AsyncIterable<SynthesizedChunk> {
  const { plan } = segment;
  const said: SynthesisRequest = {
    ...request,
    text: segment.text,
    language: plan.language,
    voice: plan.voice,
    speed: Math.min(4, Math.max(0.25, (request.speed ?? 1) * segment.rate)),
    ...(segment.parts ? { parts: segment.parts } : {}),
    ...(segment.pitchSemitones ? { pitchSemitones: segment.pitchSemitones } : {}),
  };
  for await (const chunk of speak(plan, said)) {
    const waveform = chunk.waveform.sampleRate === outputRate ? chunk.waveform : await resample(chunk.waveform, outputRate, request.signal);
    // A copy: engines may hand out views of buffers they keep.
    const samples = segment.volumeDb === 0 ? waveform.samples : Float32Array.from(waveform.samples);
    applyGainDb(samples, segment.volumeDb);
    yield { ...chunk, waveform: { samples, sampleRate: outputRate, channels: 1 } };
  }
}

/**
 * Silence before a response's first words. Engines keep 40-50 ms so that streamed pieces join without gaps, but at the
 * start of a file a listener loses or changes a first word that close to the edge: whisper base dropped it, or looped, on
 * English voices (bench/results/tts-first-words.json). 0.2 s more than Kokoro keeps gives back about its own lead-in
 * (0.22 s), which is not tuned further.
 */
export const leadInSeconds = 0.24;

/** The chunk with silence before it, so that its sound starts `seconds` into it (words shifted with it). */
export function withLeadIn(chunk: SynthesizedChunk, seconds: number): SynthesizedChunk {
  const { samples, sampleRate } = chunk.waveform;
  const sound = trimEdgeSilence(samples, sampleRate, { leadingSeconds: 0, trailingSeconds: Infinity });
  const silentSamples = (sound.byteOffset - samples.byteOffset) / samples.BYTES_PER_ELEMENT;
  const padSamples = Math.round(seconds * sampleRate) - silentSamples;
  if (padSamples <= 0) return chunk;
  const padded = new Float32Array(padSamples + samples.length);
  padded.set(samples, padSamples);
  const shiftSeconds = padSamples / sampleRate;
  const words = chunk.words?.map((w) => ({ ...w, startSeconds: w.startSeconds + shiftSeconds, endSeconds: w.endSeconds + shiftSeconds }));
  return { ...chunk, waveform: { ...chunk.waveform, samples: padded }, ...(words ? { words } : {}) };
}

/**
 * Speech for planned segments, one stream at `outputRate`: text and phonemes by their plans, breaks as silence of their
 * length (the speech on either side trimmed of its own silence, so a break measures what was asked), marks as empty
 * chunks at their place. A response (`leadIn`) starts its first speech `leadInSeconds` in, unless a break comes first.
 */
async function* render(
  segments: readonly PlannedSegment[],
  outputRate: number,
  request: SynthesisRequest,
  { leadIn }: { leadIn: boolean },
): AsyncIterable<SynthesizedChunk> {
  /** The last speech chunk and the marks after it: held until it is known whether a break follows. */
  let held: SynthesizedChunk[] = [];
  let afterBreak = false;
  let started = false;
  const trim = (chunk: SynthesizedChunk, edges: { leading: boolean; trailing: boolean }): SynthesizedChunk => {
    const samples = trimEdgeSilence(chunk.waveform.samples, outputRate, {
      leadingSeconds: edges.leading ? 0 : Infinity,
      trailingSeconds: edges.trailing ? 0 : Infinity,
    });
    const shiftSeconds = edges.leading
      ? (samples.byteOffset - chunk.waveform.samples.byteOffset) / samples.BYTES_PER_ELEMENT / outputRate
      : 0;
    const words = chunk.words?.map((w) => ({
      ...w,
      startSeconds: Math.max(0, w.startSeconds - shiftSeconds),
      endSeconds: Math.min(samples.length / outputRate, Math.max(0, w.endSeconds - shiftSeconds)),
    }));
    return { ...chunk, waveform: { ...chunk.waveform, samples }, ...(words ? { words } : {}) };
  };
  for (const segment of segments) {
    request.signal?.throwIfAborted();
    if (segment.kind === 'mark') {
      held.push({
        waveform: { samples: new Float32Array(0), sampleRate: outputRate, channels: 1 },
        text: '',
        words: [],
        marks: [segment.name],
      });
      continue;
    }
    if (segment.kind === 'break') {
      const [speech, ...marks] = held;
      if (speech?.waveform.samples.length) yield trim(speech, { leading: false, trailing: true });
      else if (speech) yield speech;
      yield* marks;
      held = [];
      afterBreak = true;
      started = true;
      const samples = new Float32Array(Math.round(segment.seconds * outputRate));
      yield { waveform: { samples, sampleRate: outputRate, channels: 1 }, text: '', words: [] };
      continue;
    }
    for await (const chunk of speakSegment(segment, outputRate, request)) {
      yield* held;
      if (afterBreak) held = [trim(chunk, { leading: true, trailing: false })];
      else held = [!started && leadIn && chunk.waveform.samples.length > 0 ? withLeadIn(chunk, leadInSeconds) : chunk];
      if (chunk.waveform.samples.length > 0) started = true;
      afterBreak = false;
    }
  }
  yield* held;
}

function recordSynthesis(
  metrics: Metrics,
  context: OperationContext,
  { engine, model }: { engine: string; model: string },
  elapsedSeconds: number,
  audioSeconds: number,
  streamed: boolean,
): void {
  metrics.recordInference({ operation: 'tts', engine, model }, elapsedSeconds, audioSeconds);
  context.log.info(
    {
      op: 'tts',
      engine,
      model,
      streamed,
      audio_seconds: audioSeconds,
      elapsed_ms: Math.round(elapsedSeconds * 1000),
      rtf: elapsedSeconds / Math.max(audioSeconds, 1e-9),
    },
    'synthesized',
  );
}

/** The words as written, each weighed by what it is spoken as ("3" as "three"). */
function writtenWords(text: string, language: string): Array<{ word: string; weight: number }> {
  return spokenWords(text).map((word) => ({
    word,
    weight: spokenWords(normalizeText(word, language)).reduce((sum, w) => sum + spokenWeight(w), 0) || spokenWeight(word),
  }));
}

/** Letters and digits: what the engine's chunks and the normalised text are compared by (spaces and cuts differ). */
const letterCount = (text: string): number => text.match(/[\p{L}\p{N}]/gu)?.length ?? 0;

/** How many of the remaining written words a chunk of `spokenCount` spoken words stands for (by the spoken words each makes). */
function writtenShare(remaining: Array<{ word: string }>, spokenCount: number, language: string): number {
  let spoken = 0;
  let n = 0;
  while (n < remaining.length && spoken < spokenCount)
    spoken += Math.max(1, spokenWords(normalizeText(remaining[n++]!.word, language)).length);
  return n;
}

const roundMs = (seconds: number): number => Math.round(seconds * 1000) / 1000;

/**
 * Text tokens as OpenAI's tokenizers roughly cut text (a word, a number, a punctuation mark; a CJK character each): our
 * count for the usage of OpenAI's speech events, which have no tokenizer of their own here.
 */
export function textTokens(text: string): number {
  return text.match(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]|[\p{L}\p{M}\p{N}]+|[^\s\p{L}\p{M}\p{N}]/gu)?.length ?? 0;
}

/** OpenAI's speech models count about 1 250 audio output tokens a minute of speech (their published per-minute estimate). */
const audioTokensPerSecond = 1250 / 60;

/** Progress by the share of the (normalised) text spoken so far. */
async function* reportSpoken(
  chunks: AsyncIterable<SynthesizedChunk>,
  totalCharacters: number,
  onProgress: OperationContext['onProgress'],
): AsyncIterable<SynthesizedChunk> {
  let spoken = 0;
  for await (const chunk of chunks) {
    spoken += chunk.text.length;
    onProgress?.({ stage: 'synthesizing', fraction: Math.min(1, spoken / Math.max(totalCharacters, 1)) });
    yield chunk;
  }
}

/**
 * The three voices closest to a profile, weighted sharper than proportionally: the closest dominates unless the others are nearly as
 * close.
 */
export function closestVoicesBlend(
  scored: Array<{ id: string; similarity: number }>,
): Array<{ id: string; weight: number; similarity: number }> {
  const best = [...scored].sort((a, b) => b.similarity - a.similarity).slice(0, 3);
  const weights = best.map((v) => Math.exp((v.similarity - best[0]!.similarity) * 20));
  const total = weights.reduce((a, b) => a + b, 0);
  return best.map((v, i) => ({
    id: v.id,
    weight: Math.round((weights[i]! / total) * 1000) / 1000,
    similarity: Math.round(v.similarity * 1000) / 1000,
  }));
}

async function collect(chunks: AsyncIterable<SynthesizedChunk>, sampleRate: number): Promise<Waveform> {
  const parts: Float32Array[] = [];
  for await (const chunk of chunks) parts.push(chunk.waveform.samples);
  return { samples: concatSamples(parts), sampleRate, channels: 1 };
}
