/**
 * Live transcription of one audio stream (a realtime socket). Audio arrives as 16 kHz pieces; Silero VAD finds turns
 * (or the client commits them); while a turn goes on its audio so far is re-decoded cheaply (draft) for partial text at
 * most every `partialIntervalSeconds`; a full decoding gives the final text when the turn ends. Events are protocol-neutral:
 * the socket adapter turns them into its wire format.
 *
 * Latency: the final decoding of a turn starts when the silence after it has lasted `speculationSeconds`, not when the
 * turn is declared over (`silenceDurationSeconds`, usually longer); if speech resumes first, that decoding is dropped.
 */
import { randomUUID } from 'node:crypto';
import type { SileroVad, VadStream } from '../../audio/vad.js';
import { vadWindowSamples } from '../../audio/vad.js';
import { VoxError } from '../../core/errors.js';
import type { Scheduler } from '../../core/scheduler.js';
import { SampleWindow } from '../transcribe/chunks.js';
import { scriptConverter } from '../transcribe/script.js';
import type { ChunkTranscript, Transcriber } from '../transcribe/transcriber.js';
import { liveSameSpeakerSimilarity, OnlineSpeakers, type UtteranceEncoder } from '../../speakers/online-clustering.js';

export const liveSampleRate = 16000;

export interface TurnDetection {
  /** Silero speech probability that starts speech (0-1). */
  threshold: number;
  /** Audio kept before the detected start of speech. */
  prefixPaddingSeconds: number;
  /** Silence that ends a turn. */
  silenceDurationSeconds: number;
}

export interface LiveTranscriptionSettings {
  /** ISO 639-1 code, or 'auto' to detect per turn. */
  language: string;
  /** The client's language tag as given (e.g. 'zh-TW'): chooses the script of Chinese text. */
  languageTag?: string;
  prompt: string;
  /** null: the client commits turns itself. */
  turnDetection: TurnDetection | null;
  includeLogprobs: boolean;
  /** Label each completed turn with a speaker, consistent over the session. */
  diarize: boolean;
}

export interface LiveWord {
  word: string;
  /** Seconds since the start of the session's audio. */
  start: number;
  end: number;
  confidence: number;
}

/** A word's log-probability, in OpenAI's logprobs shape (voxd gives one entry per word, not per token). */
export interface LiveLogprob {
  token: string;
  logprob: number;
  bytes: number[];
}

export type LiveEvent =
  | { type: 'speech_started'; itemId: string; audioStartMs: number }
  | { type: 'speech_stopped'; itemId: string; audioEndMs: number }
  | { type: 'committed'; itemId: string; previousItemId: string | null }
  | { type: 'cleared' }
  /** `delta` extends the text sent so far; `transcript` is the whole provisional text (it may revise earlier words). */
  | { type: 'delta'; itemId: string; delta: string; transcript: string; logprobs?: LiveLogprob[] }
  | {
      type: 'completed';
      itemId: string;
      transcript: string;
      language: string;
      words: LiveWord[];
      logprobs?: LiveLogprob[];
      speaker?: string;
      audioStartMs: number;
      audioEndMs: number;
    }
  | { type: 'failed'; itemId: string; error: VoxError };

export interface LiveTranscriptionDependencies {
  transcriber: Transcriber;
  vad: SileroVad;
  scheduler: Scheduler;
  /** CAM++ (the labels' threshold is CAM++'s): needed when a session asks for speaker labels. */
  speakerEncoder?: () => Promise<UtteranceEncoder>;
  /** Wall-clock time in ms (tests and benches pass their own). */
  now?: () => number;
  /** Partial decodings running in every session of the process: a final decoding stops them, so it never waits for one. */
  runningDrafts: Set<AbortController>;
}

/**
 * Partial text is due this long after the previous one. A partial decoding starts early by what it is expected to take
 * (the last one's time, scaled by how much the audio has grown: a draft costs about 0.1 s more for every second of
 * speech), so its text arrives on time as the turn grows.
 */
export const partialIntervalSeconds = 1;
/** The first partial waits for this much speech: less is rarely a word. */
const firstPartialSpeechSeconds = 0.6;
/** Speech frames (32 ms) that confirm a start: single frames over the threshold are clicks and breaths. */
const confirmSpeechFrames = 3;
const speculationSeconds = 0.16;
/** Silence after the speech given to the final decoding (the file path keeps 0.4 s). */
const padAfterSeconds = 0.4;
/** A turn longer than Whisper's window is ended here and the speech goes on in a new turn. */
export const maxTurnSeconds = 28;
/**
 * Audio before the detected speech given to Whisper at least (when the session has it and it belongs to no earlier turn),
 * more when the client's prefix padding is longer. More silence before the speech changes Whisper's first words ("Ma
 * sœur" -> "Masseur", "Amanhã" -> "A manhã"). The realtime bench's streams replayed through the session, word and
 * character errors over its eval / generated utterances and 27 held out (file path: 22 / 33 / 35): 0.3 s 24 / 36 / 33,
 * 0.45 s 32 / 35 / 34, 0.8 s 25 / 39 / 36, 1.5 s 27 / 39 / 36. Cutting into a recording's own noise instead of digital
 * silence (no silence added before the speech): 0.3 s 25 / 43 / 34, 1.5 s 27 / 43 / 34.
 */
const decodeContextSeconds = 0.3;
/** Speech a server-VAD turn needs to be transcribed (Silero's minimum speech duration). */
const minTurnSpeechSeconds = 0.25;
/**
 * After a draft that gave no text, the next one may start this soon. The first draft (0.6 s of speech) often has no
 * word yet: with 0.5 s the first partial came 1.15-1.2 s after the speech started (realtime bench: en, fr, it).
 */
const emptyDraftRetrySeconds = 0.25;
/** OpenAI refuses to commit less audio than this. */
const minCommitSeconds = 0.1;
/** The caller's prompt is cut to this many characters (its end kept). */
const promptCharacters = 200;

interface OpenTurn {
  itemId: string;
  startSample: number;
  /** Where decoding starts: up to `decodeContextSeconds` before the speech when that audio is uncommitted silence. */
  decodeFromSample: number;
  /** Confirmed speech (VAD mode) or any audio (manual mode). */
  speaking: boolean;
  speechSamples: number;
  /** Text sent in deltas so far. */
  sentWords: string[];
  /** The running partial decoding, stopped when the final one starts. */
  partial: AbortController | undefined;
  /** When the next partial text is due (wall ms), and how long the last partial decoding took for how much audio. */
  partialDueAtMs: number;
  lastDraftMs: number;
  lastDraftSamples: number;
}

interface Speculation {
  endSample: number;
  controller: AbortController;
  result: Promise<ChunkTranscript>;
}

const newItemId = (): string => `item_${randomUUID().replaceAll('-', '').slice(0, 20)}`;

export class LiveTranscriptionSession {
  private readonly audio = new SampleWindow();
  private vadStream: VadStream;
  /** Samples whose VAD probability has been computed (a multiple of the VAD window). */
  private vadSamples = 0;
  private turn: OpenTurn | undefined;
  private candidateStart: number | null = null;
  private candidateFrames = 0;
  private silenceStart: number | null = null;
  private speculation: Speculation | undefined;
  private previousItemId: string | null = null;
  /** Where the audio not yet committed starts (the buffer holds whole pieces, so it may hold a little before). */
  private uncommittedFrom = 0;
  /** Completed events leave in turn order. */
  private completions: Promise<void> = Promise.resolve();
  private readonly controller = new AbortController();
  /** Made when the session first asks for speaker labels: labels stay consistent from then on. */
  private speakers: OnlineSpeakers | undefined;
  private readonly now: () => number;

  constructor(
    private readonly deps: LiveTranscriptionDependencies,
    private settings: LiveTranscriptionSettings,
    private readonly emit: (event: LiveEvent) => void,
  ) {
    this.vadStream = deps.vad.stream();
    this.now = deps.now ?? (() => performance.now());
  }

  get currentSettings(): LiveTranscriptionSettings {
    return this.settings;
  }

  /** Audio received so far, in seconds. */
  get audioSeconds(): number {
    return this.audio.availableUntil / liveSampleRate;
  }

  update(settings: LiveTranscriptionSettings): void {
    if (settings.diarize && !this.deps.speakerEncoder)
      throw new VoxError('not_implemented', 'Speaker labels need the speaker-embedding model, which is not installed.', {
        param: 'session.diarize',
      });
    this.settings = settings;
  }

  /** Audio since the previous piece (16 kHz mono). */
  async append(samples: Float32Array): Promise<void> {
    this.audio.push(samples);
    const detection = this.settings.turnDetection;
    const probabilities = await this.vadStream.push(samples, this.controller.signal);
    for (const probability of probabilities) {
      const frameStart = this.vadSamples;
      this.vadSamples += vadWindowSamples;
      if (detection) this.track(probability, frameStart, detection);
      else if (probability >= 0.5) this.openTurn(this.uncommittedFrom).speechSamples += vadWindowSamples;
    }
    if (!detection && this.turn && this.audio.availableUntil - this.turn.startSample >= maxTurnSeconds * liveSampleRate) this.commit();
    this.forgetSilence();
    this.maybePartial(samples.length / liveSampleRate);
  }

  /** The client ends the turn (manual mode, or forcing it early). */
  commit(): void {
    const startSample = this.turn?.startSample ?? this.uncommittedFrom;
    if (this.audio.availableUntil - startSample < minCommitSeconds * liveSampleRate) {
      throw new VoxError(
        'invalid_request',
        `Cannot commit: the input audio buffer holds less than ${minCommitSeconds * 1000} ms of audio.`,
        { param: 'input_audio_buffer' },
      );
    }
    this.finishTurn(this.audio.availableUntil, this.audio.availableUntil);
  }

  /** Drops the audio not yet committed. */
  clear(): void {
    this.speculation?.controller.abort();
    this.speculation = undefined;
    this.turn = undefined;
    this.candidateStart = null;
    this.candidateFrames = 0;
    this.silenceStart = null;
    this.uncommittedFrom = this.audio.availableUntil;
    this.audio.discardBefore(this.uncommittedFrom);
    this.emit({ type: 'cleared' });
  }

  /** Stops every decoding of the session (the socket closed). */
  close(): void {
    this.controller.abort(new VoxError('aborted', 'The realtime session ended.'));
  }

  private track(probability: number, frameStart: number, detection: TurnDetection): void {
    const frameEnd = frameStart + vadWindowSamples;
    const turn = this.turn;
    if (!turn?.speaking) {
      if (probability >= detection.threshold) {
        this.candidateStart ??= frameStart;
        this.candidateFrames++;
        if (this.candidateFrames >= confirmSpeechFrames) {
          const before = (seconds: number): number =>
            Math.max(this.uncommittedFrom, this.audio.availableFrom, this.candidateStart! - Math.round(seconds * liveSampleRate));
          const started = this.openTurn(before(detection.prefixPaddingSeconds), before(decodeContextSeconds));
          started.speaking = true;
          started.speechSamples = frameEnd - this.candidateStart;
          this.emit({
            type: 'speech_started',
            itemId: started.itemId,
            audioStartMs: Math.round((started.startSample / liveSampleRate) * 1000),
          });
          this.candidateStart = null;
          this.candidateFrames = 0;
          this.silenceStart = null;
        }
      } else if (probability < negativeThreshold(detection)) {
        this.candidateStart = null;
        this.candidateFrames = 0;
      }
      return;
    }
    if (probability >= detection.threshold) {
      turn.speechSamples += vadWindowSamples;
      if (this.silenceStart !== null) {
        this.silenceStart = null;
        // Speech resumed: a final decoding started on the pause is out of date.
        this.speculation?.controller.abort();
        this.speculation = undefined;
      }
    } else if (probability < negativeThreshold(detection)) {
      this.silenceStart ??= frameStart;
    }
    const silenceSeconds = this.silenceStart === null ? 0 : (frameEnd - this.silenceStart) / liveSampleRate;
    if (
      this.silenceStart !== null &&
      silenceSeconds >= Math.min(speculationSeconds, detection.silenceDurationSeconds) &&
      !this.speculation
    ) {
      const endSample = frameEnd;
      turn.partial?.abort();
      const controller = new AbortController();
      const samples = withTrailingSilence(
        this.audio.take(turn.decodeFromSample, endSample),
        (endSample - this.silenceStart!) / liveSampleRate,
      );
      const result = this.decode(samples, false, controller.signal);
      result.catch(() => undefined);
      this.speculation = { endSample, controller, result };
    }
    if (this.silenceStart !== null && silenceSeconds >= detection.silenceDurationSeconds) {
      this.finishTurn(Math.min(frameEnd, this.silenceStart + Math.round(padAfterSeconds * liveSampleRate)), frameEnd);
    } else if (frameEnd - turn.startSample >= maxTurnSeconds * liveSampleRate) {
      this.finishTurn(frameEnd, frameEnd);
    }
  }

  private openTurn(startSample: number, decodeFromSample = startSample): OpenTurn {
    this.turn ??= {
      itemId: newItemId(),
      startSample,
      decodeFromSample: Math.min(startSample, decodeFromSample),
      speaking: false,
      speechSamples: 0,
      sentWords: [],
      partial: undefined,
      partialDueAtMs: -Infinity,
      lastDraftMs: 0,
      lastDraftSamples: 1,
    };
    return this.turn;
  }

  /** Commits [turn start, decodeEnd) as an item: `stopSample` is where the turn was declared over. */
  private finishTurn(decodeEndSample: number, stopSample: number): void {
    const turn = this.openTurn(this.uncommittedFrom);
    turn.partial?.abort();
    this.turn = undefined;
    // Where the speech ended (the pause began), or the end of the audio for a commit mid-speech.
    const speechEndSample = Math.min(this.silenceStart ?? decodeEndSample, decodeEndSample);
    this.silenceStart = null;
    const speculation = this.speculation;
    this.speculation = undefined;
    if (this.settings.turnDetection)
      this.emit({ type: 'speech_stopped', itemId: turn.itemId, audioEndMs: Math.round((stopSample / liveSampleRate) * 1000) });
    this.emit({ type: 'committed', itemId: turn.itemId, previousItemId: this.previousItemId });
    this.previousItemId = turn.itemId;
    const samples = withTrailingSilence(
      this.audio.take(turn.decodeFromSample, decodeEndSample),
      (decodeEndSample - speechEndSample) / liveSampleRate,
    );
    // A server-VAD turn with less speech than this is a click or a breath: Whisper would make words up for it.
    const tooShort = this.settings.turnDetection !== null && turn.speechSamples < minTurnSpeechSeconds * liveSampleRate;
    const result = tooShort
      ? Promise.resolve(emptyTranscript(this.settings.language))
      : speculation && speculation.endSample <= decodeEndSample
        ? speculation.result
        : this.decode(samples, false, this.controller.signal);
    if (speculation && speculation.result !== result) speculation.controller.abort();
    result.catch(() => undefined);
    this.uncommittedFrom = stopSample;
    this.audio.discardBefore(stopSample);
    if (this.settings.diarize && this.deps.speakerEncoder)
      this.speakers ??= new OnlineSpeakers(this.deps.speakerEncoder, liveSameSpeakerSimilarity);
    // Under half a second of speech says too little about the voice: such a turn gets no label.
    const speaker =
      this.settings.diarize && this.speakers && turn.speechSamples >= 0.5 * liveSampleRate
        ? this.speakers.label(samples, this.controller.signal)
        : undefined;
    speaker?.catch(() => undefined);
    const previous = this.completions;
    this.completions = (async () => {
      await previous;
      try {
        const transcript = await result;
        const completed = this.completedEvent(turn, transcript, decodeEndSample);
        const label = await speaker;
        this.emit(label ? { ...completed, speaker: label } : completed);
      } catch (error) {
        if (this.controller.signal.aborted) return;
        this.emit({
          type: 'failed',
          itemId: turn.itemId,
          error: error instanceof VoxError ? error : new VoxError('internal', 'Transcription of the turn failed.', { cause: error }),
        });
      }
    })();
  }

  private completedEvent(turn: OpenTurn, transcript: ChunkTranscript, endSample: number): Extract<LiveEvent, { type: 'completed' }> {
    const offsetSeconds = turn.decodeFromSample / liveSampleRate;
    const startSeconds = turn.startSample / liveSampleRate;
    const endSeconds = endSample / liveSampleRate;
    // Whisper may place a last word's end in the padding past the audio: times stay inside the turn.
    const toScript = this.toScript(transcript.language);
    const words = transcript.segments
      .flatMap((segment) => segment.words)
      .map((w) => ({
        word: toScript(w.text),
        start: round(Math.min(Math.max(offsetSeconds + w.startSeconds, startSeconds), endSeconds)),
        end: round(Math.min(Math.max(offsetSeconds + w.endSeconds, startSeconds), endSeconds)),
        confidence: round(w.probability),
      }));
    return {
      type: 'completed',
      itemId: turn.itemId,
      transcript: toScript(
        transcript.segments
          .map((s) => s.text)
          .join('')
          .trim(),
      ),
      language: transcript.language,
      words,
      ...(this.settings.includeLogprobs ? { logprobs: words.map((w) => logprob(w.word, w.confidence)) } : {}),
      audioStartMs: Math.round(startSeconds * 1000),
      audioEndMs: Math.round((endSample / liveSampleRate) * 1000),
    };
  }

  /** Audio before a turn is kept only as far back as the prefix padding needs. */
  private forgetSilence(): void {
    if (this.turn || this.candidateStart !== null) return;
    if (!this.settings.turnDetection) return;
    const keepSamples = Math.round(
      (Math.max(this.settings.turnDetection.prefixPaddingSeconds, decodeContextSeconds) + 0.5) * liveSampleRate,
    );
    this.uncommittedFrom = Math.max(this.uncommittedFrom, this.audio.availableUntil - keepSamples);
    this.audio.discardBefore(this.uncommittedFrom);
  }

  /** `pieceSeconds`: the audio just received; the next chance to start a partial comes with the next piece. */
  private maybePartial(pieceSeconds: number): void {
    const turn = this.turn;
    // A pause shorter than the speculation delay does not hold partials back (single frames under the threshold come
    // between words); once the final decoding has started, a partial would only be stopped by it.
    if (!turn || turn.partial || this.speculation) return;
    if (turn.speechSamples < firstPartialSpeechSeconds * liveSampleRate) return;
    const now = this.now();
    const endSample = this.audio.availableUntil;
    const draftSamples = endSample - turn.decodeFromSample;
    // Waiting for the next piece must not make the text late.
    if (now + (turn.lastDraftMs * draftSamples) / turn.lastDraftSamples + pieceSeconds * 1000 < turn.partialDueAtMs) return;
    // Partials are extras: with every engine slot busy (other sessions' finals, short files) they are skipped, not queued.
    if (!this.deps.scheduler.hasFreeSlot('transcribe', (endSample - turn.startSample) / liveSampleRate)) return;
    const partial = new AbortController();
    turn.partial = partial;
    this.deps.runningDrafts.add(partial);
    void this.decode(this.audio.take(turn.decodeFromSample, endSample), true, partial.signal)
      .then((transcript) => {
        if (this.turn !== turn || partial.signal.aborted) return;
        const finishedAt = this.now();
        turn.lastDraftMs = finishedAt - now;
        turn.lastDraftSamples = draftSamples;
        const text = this.toScript(transcript.language)(
          transcript.segments
            .map((s) => s.text)
            .join('')
            .trim(),
        );
        // Nothing usable (a loop dropped, or no words yet): not a partial, so the next may come sooner.
        turn.partialDueAtMs = finishedAt + (text === '' ? emptyDraftRetrySeconds : partialIntervalSeconds) * 1000;
        if (text === '') return;
        const words = text.split(/\s+/).filter(Boolean);
        // The last word of a draft is often cut off by the end of the audio: it is sent with the next partial or the final.
        const stable = words.slice(0, -1);
        const extendsSent = turn.sentWords.every((w, i) => sameWord(w, stable[i]));
        const added = extendsSent ? stable.slice(turn.sentWords.length) : [];
        if (added.length > 0) turn.sentWords = stable;
        const delta = added.length === 0 ? '' : (turn.sentWords.length > added.length ? ' ' : '') + added.join(' ');
        const wordLogprobs = transcript.segments.flatMap((s) => s.words).map((w) => logprob(w.text, w.probability));
        this.emit({
          type: 'delta',
          itemId: turn.itemId,
          delta,
          transcript: text,
          ...(this.settings.includeLogprobs ? { logprobs: wordLogprobs } : {}),
        });
      })
      .catch(() => undefined)
      .finally(() => {
        this.deps.runningDrafts.delete(partial);
        if (turn.partial === partial) turn.partial = undefined;
      });
  }

  /** Chinese in the script the client's tag asks for (simplified by default), as the file path writes it. */
  private toScript(language: string): (text: string) => string {
    return scriptConverter(language, this.settings.languageTag ?? language) ?? ((text) => text);
  }

  private decode(samples: Float32Array, draft: boolean, signal: AbortSignal): Promise<ChunkTranscript> {
    if (!draft) for (const running of this.deps.runningDrafts) running.abort();
    const joined = AbortSignal.any([signal, this.controller.signal]);
    // The caller's prompt only, not the previous turn's text: on a turn of a few words Whisper copies it (realtime bench,
    // Spanish utterance cut into four turns at pauses: 75% WER with it, 33% without; no other utterance changed).
    const prompt = this.settings.prompt.slice(-promptCharacters);
    return this.deps.scheduler.run('transcribe', samples.length / liveSampleRate, joined, (slotSignal) =>
      this.deps.transcriber.transcribe(samples, {
        language: this.settings.language,
        temperature: 0,
        draft,
        lowLatency: true,
        ...(prompt ? { prompt } : {}),
        ...(slotSignal ? { signal: slotSignal } : {}),
      }),
    );
  }
}

/**
 * The turn's audio with digital silence added so that `padAfterSeconds` follow the speech: a decoding that sees the audio
 * end sooner (160 ms after the speech, when it starts on the pause) repeated the sentence as a second segment at the very
 * end, which sent it to a full-window decoding of 2-3 s (realtime bench: 3 of 17 utterances).
 */
function withTrailingSilence(samples: Float32Array, silenceSeconds: number): Float32Array {
  const missing = Math.round((padAfterSeconds - silenceSeconds) * liveSampleRate);
  if (missing <= 0) return samples;
  const padded = new Float32Array(samples.length + missing);
  padded.set(samples);
  return padded;
}

const emptyTranscript = (language: string): ChunkTranscript => ({
  language: language === 'auto' ? 'unknown' : language,
  languageProbability: 0,
  segments: [],
  temperature: 0,
});
const negativeThreshold = (detection: TurnDetection): number => Math.max(detection.threshold - 0.15, 0.01);
const round = (value: number): number => Math.round(value * 1000) / 1000;
const normalizeWord = (word: string): string => word.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');
const sameWord = (a: string, b: string | undefined): boolean => b !== undefined && normalizeWord(a) === normalizeWord(b);

function logprob(word: string, probability: number): LiveLogprob {
  return { token: word, logprob: Math.log(Math.max(probability, 1e-12)), bytes: [...Buffer.from(word, 'utf8')] };
}
