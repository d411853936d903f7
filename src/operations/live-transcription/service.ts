/** Opens live transcription sessions: the engines they share, and the settings a client may choose. */
import type { SileroVad } from '../../audio/vad.js';
import { unsupportedValue, VoxError } from '../../core/errors.js';
import type { Scheduler } from '../../core/scheduler.js';
import type { CamppEncoder } from '../../speakers/campplus.js';
import { baseLanguage, whisperLanguages } from '../transcribe/languages.js';
import type { Transcriber } from '../transcribe/transcriber.js';
import { LiveTranscriptionSession, type LiveEvent, type LiveTranscriptionSettings } from './session.js';

export interface LiveTranscriptionServiceDependencies {
  scheduler: Scheduler;
  vad: () => Promise<SileroVad>;
  /** Undefined when no ASR engine runs in this process (an API-only node). */
  transcriber?: () => Promise<Transcriber>;
  /** CAM++, for speaker labels. */
  speakerEncoder?: () => Promise<CamppEncoder>;
}

/** OpenAI's server_vad defaults. */
export const defaultLiveSettings: LiveTranscriptionSettings = {
  language: 'auto',
  prompt: '',
  turnDetection: { threshold: 0.5, prefixPaddingSeconds: 0.3, silenceDurationSeconds: 0.5 },
  includeLogprobs: false,
  diarize: false,
};

export class LiveTranscriptionService {
  private readonly runningDrafts = new Set<AbortController>();

  constructor(private readonly deps: LiveTranscriptionServiceDependencies) {}

  /** The model sessions use (loaded on the first call). */
  async modelId(): Promise<string> {
    return (await this.engine()).modelId;
  }

  async open(settings: LiveTranscriptionSettings, emit: (event: LiveEvent) => void): Promise<LiveTranscriptionSession> {
    const [transcriber, vad] = await Promise.all([this.engine(), this.deps.vad()]);
    return new LiveTranscriptionSession(
      {
        transcriber,
        vad,
        scheduler: this.deps.scheduler,
        runningDrafts: this.runningDrafts,
        ...(this.deps.speakerEncoder ? { speakerEncoder: this.deps.speakerEncoder } : {}),
      },
      this.check(settings),
      emit,
    );
  }

  /** Settings as given, with the language reduced to what Whisper knows ('en-US' -> 'en'); 422 for a language it does not. */
  check(settings: LiveTranscriptionSettings): LiveTranscriptionSettings {
    const language = settings.language === 'auto' ? 'auto' : baseLanguage(settings.language);
    if (language !== 'auto' && !(whisperLanguages as readonly string[]).includes(language))
      throw unsupportedValue('session.input_audio_transcription.language', settings.language, whisperLanguages);
    if (settings.diarize && !this.deps.speakerEncoder)
      throw new VoxError('not_implemented', 'Speaker labels need the speaker-embedding model, which is not installed.', {
        param: 'session.diarize',
      });
    return { ...settings, language, ...(language === 'auto' ? {} : { languageTag: settings.languageTag ?? settings.language }) };
  }

  private engine(): Promise<Transcriber> {
    if (!this.deps.transcriber) return Promise.reject(new VoxError('not_implemented', 'No ASR engine runs in this process.'));
    return this.deps.transcriber();
  }
}
