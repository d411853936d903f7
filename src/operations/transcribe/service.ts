/** POST /v1/audio/transcribe and the OpenAI-compatible /v1/audio/transcriptions and /v1/audio/translations. */
import { admitAudio, uploadedFile, type AudioLimits } from '../../audio/input.js';
import type { AudioEventDetector } from '../../audio/audio-events.js';
import type { SileroVad } from '../../audio/vad.js';
import { unsupportedValue, VoxError } from '../../core/errors.js';
import type { OperationContext, OperationResult } from '../../core/operation-context.js';
import type { Scheduler } from '../../core/scheduler.js';
import type { Metrics } from '../../core/metrics.js';
import type { CamppEncoder } from '../../speakers/campplus.js';
import type { SpeechChannel } from '../../speakers/identification.js';
import type { VoiceRecord } from '../../core/records.js';
import type { VoiceService } from '../../voices/service.js';
import { detectEvents, withAudioEvents } from './audio-events.js';
import { defaultSubtitleRules, toJson, toSrt, toVtt, type SubtitleRules, type Transcript } from './formats.js';
import { parseKeyterms } from './keyterms.js';
import { baseLanguage, languageNames, whisperLanguages } from './languages.js';
import { transcribeFile, type Diarizer, type SpeakerTurn } from './pipeline.js';
import { nameSpeakers } from './speaker-names.js';
import type { Transcriber } from './transcriber.js';
import {
  maxSpeakerVoices,
  transcriptionResponseFormats,
  transcriptionTasks,
  type TranscribeFields,
  type TranscriptionResponseFormat,
  type TranscriptionTask,
} from './contract.js';

const granularityValues = ['segment', 'word'] as const;

/** speaker_voice_ids as a list: a comma list, repeated fields, or both; duplicates dropped. */
export function speakerVoiceIds(value: string | string[] | undefined): string[] {
  const list = (Array.isArray(value) ? value : value === undefined ? [] : [value])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
  return [...new Set(list)];
}

export interface TranscriptionDependencies {
  limits: AudioLimits;
  scheduler: Scheduler;
  metrics: Metrics;
  vad: () => Promise<SileroVad>;
  /** For tag_audio_events (not installed: 503 naming the model to pull). */
  audioEvents: () => Promise<AudioEventDetector>;
  /** Undefined when no ASR engine is installed: the route answers 501. */
  transcriber?: () => Promise<Transcriber>;
  /** Undefined when no speaker-embedding model is installed: diarize=true answers 501. */
  diarizer?: () => Promise<Diarizer>;
  /** Speakers named after voice profiles (speaker_voice_ids): the profiles and the CAM++ encoder. */
  speakerNaming?: {
    voices: Pick<VoiceService, 'identificationProfiles' | 'identificationEmbedding'>;
    encoder: () => Promise<CamppEncoder>;
  };
}

function parseGranularities(value: string | string[] | undefined, openaiCompatible: boolean): { word: boolean; segment: boolean } {
  const list = (Array.isArray(value) ? value : value === undefined ? [] : value.split(',')).map((v) => v.trim()).filter(Boolean);
  for (const item of list)
    if (!(granularityValues as readonly string[]).includes(item))
      throw unsupportedValue('timestamp_granularities', item, granularityValues);
  // OpenAI returns segments only unless words are asked for; our own format returns both.
  if (list.length === 0) return { word: !openaiCompatible, segment: true };
  return { word: list.includes('word'), segment: list.includes('segment') };
}

/** The request's subtitle limits over the defaults; a minimum above the maximum is refused. */
function subtitleRules(fields: TranscribeFields): SubtitleRules {
  const rules: SubtitleRules = {
    maxLineChars: fields.max_line_chars ?? defaultSubtitleRules.maxLineChars,
    maxLines: fields.max_lines ?? defaultSubtitleRules.maxLines,
    maxCueSeconds: fields.max_cue_seconds ?? defaultSubtitleRules.maxCueSeconds,
    minCueSeconds: fields.min_cue_seconds ?? defaultSubtitleRules.minCueSeconds,
  };
  if (rules.minCueSeconds > rules.maxCueSeconds)
    throw new VoxError('invalid_request', 'min_cue_seconds must not exceed max_cue_seconds.', { param: 'min_cue_seconds' });
  return rules;
}

export class TranscriptionService {
  constructor(private readonly deps: TranscriptionDependencies) {}

  capabilities() {
    return {
      available: this.deps.transcriber !== undefined,
      languages: [...whisperLanguages],
      response_formats: [...transcriptionResponseFormats],
      diarization: this.deps.diarizer !== undefined,
      timestamp_granularities: [...granularityValues],
      tasks: [...transcriptionTasks],
    };
  }

  async transcribe(
    fields: TranscribeFields,
    context: OperationContext,
    options: { uploadField?: string; openaiCompatible?: boolean } = {},
  ): Promise<OperationResult> {
    const language = baseLanguage(fields.language || 'auto');
    if (language !== 'auto' && !(whisperLanguages as readonly string[]).includes(language)) {
      throw unsupportedValue('language', fields.language ?? '', ['auto', ...whisperLanguages]);
    }
    const diarize = fields.diarize ?? false;
    const { num_speakers: numSpeakers, min_speakers: minSpeakers, max_speakers: maxSpeakers } = fields;
    if (minSpeakers !== undefined && maxSpeakers !== undefined && minSpeakers > maxSpeakers) {
      throw new VoxError('invalid_request', 'min_speakers must not exceed max_speakers.', { param: 'min_speakers' });
    }
    if ((numSpeakers ?? minSpeakers ?? maxSpeakers) !== undefined && !diarize) {
      throw new VoxError('invalid_request', 'num_speakers, min_speakers and max_speakers need diarize=true.', { param: 'diarize' });
    }
    const speakerVoices = speakerVoiceIds(fields.speaker_voice_ids);
    if (speakerVoices.length > 0 && !diarize)
      throw new VoxError('invalid_request', 'speaker_voice_ids needs diarize=true: speakers are named after diarization.', {
        param: 'diarize',
      });
    if (speakerVoices.length > maxSpeakerVoices) {
      throw new VoxError(
        'invalid_request',
        `speaker_voice_ids lists ${speakerVoices.length} voices; at most ${maxSpeakerVoices} are matched.`,
        { param: 'speaker_voice_ids' },
      );
    }
    const naming = this.deps.speakerNaming;
    if (speakerVoices.length > 0 && !naming)
      throw new VoxError('not_implemented', 'Naming speakers after voice profiles is not available on this server.', {
        param: 'speaker_voice_ids',
      });
    // Unknown, another key's or built-in voices fail before the upload is looked at.
    const speakerProfiles = speakerVoices.length > 0 ? await naming!.voices.identificationProfiles(speakerVoices, context.apiKey) : [];
    const tagEvents = fields.tag_audio_events ?? false;
    const granularities = parseGranularities(fields.timestamp_granularities, options.openaiCompatible ?? false);
    const format = fields.response_format ?? 'json';
    const rules = subtitleRules(fields);
    const task = fields.task ?? 'transcribe';
    const keyterms = parseKeyterms(fields.keyterms);
    const uploadField = options.uploadField ?? 'audio';
    const input = await admitAudio(uploadedFile(context.inputs, uploadField), this.deps.limits, context.signal);
    const { transcriber: loadTranscriber, diarizer: makeDiarizer } = this.deps;
    if (!loadTranscriber)
      throw new VoxError('not_implemented', 'Transcription is not available on this server: no ASR model is installed (voxd models pull).');
    if (diarize && !makeDiarizer)
      throw new VoxError('not_implemented', 'Diarization is not available on this server: no speaker-embedding model is installed.', {
        param: 'diarize',
      });

    const transcript = await this.deps.scheduler.run('transcribe', input.durationSeconds, context.signal, async (signal) => {
      const [transcriber, vad, diarizer] = await Promise.all([loadTranscriber(), this.deps.vad(), diarize ? makeDiarizer!() : undefined]);
      // The turns are kept for naming the speakers afterwards.
      let turns: SpeakerTurn[] = [];
      const keepingTurns: Diarizer | undefined = diarizer && {
        addAudio: (samples, s) => diarizer.addAudio(samples, s),
        finish: async (o, s) => (turns = await diarizer.finish(o, s)),
      };
      const startedAt = performance.now();
      const result = await transcribeFile(
        { transcriber, vad },
        {
          path: input.path,
          language,
          languageTag: fields.language || 'auto',
          task,
          ...(fields.prompt ? { prompt: fields.prompt } : {}),
          ...(keyterms.length > 0 ? { keyterms } : {}),
          ...(fields.temperature !== undefined ? { temperature: fields.temperature } : {}),
          ...(keepingTurns ? { diarizer: keepingTurns } : {}),
          speakers: {
            ...(numSpeakers !== undefined ? { numSpeakers } : {}),
            ...(minSpeakers !== undefined ? { minSpeakers } : {}),
            ...(maxSpeakers !== undefined ? { maxSpeakers } : {}),
          },
          maxAudioSeconds: this.deps.limits.maxAudioSeconds,
          param: uploadField,
          expectedSeconds: input.durationSeconds,
          ...(context.onProgress ? { onProgress: context.onProgress } : {}),
          ...(signal ? { signal } : {}),
        },
      );
      const named =
        speakerProfiles.length > 0
          ? await this.nameSpeakers(result, naming!, speakerProfiles, { path: input.path, turns, signal })
          : result;
      const transcript = tagEvents
        ? withAudioEvents(
            named,
            await detectEvents(await this.deps.audioEvents(), {
              path: input.path,
              maxAudioSeconds: this.deps.limits.maxAudioSeconds,
              param: uploadField,
              ...(signal ? { signal } : {}),
            }),
          )
        : named;
      const elapsedSeconds = (performance.now() - startedAt) / 1000;
      this.deps.metrics.recordInference(
        { operation: 'transcribe', engine: transcriber.engine, model: transcriber.modelId },
        elapsedSeconds,
        result.duration,
      );
      context.log.info(
        {
          op: 'transcribe',
          engine: transcriber.engine,
          model: transcriber.modelId,
          audio_seconds: result.duration,
          elapsed_ms: Math.round(elapsedSeconds * 1000),
          rtf: elapsedSeconds / Math.max(result.duration, 1e-9),
        },
        'transcribed',
      );
      return transcript;
    });
    return this.render(transcript, format, granularities, options.openaiCompatible ?? false, task, rules);
  }

  private async nameSpeakers(
    transcript: Transcript,
    naming: NonNullable<TranscriptionDependencies['speakerNaming']>,
    records: VoiceRecord[],
    recording: { path: string; turns: SpeakerTurn[]; signal: AbortSignal | undefined },
  ): Promise<Transcript> {
    const encoder = await naming.encoder();
    const profiles = records.map((record) => ({
      record,
      embedding: (channel: SpeechChannel) => naming.voices.identificationEmbedding(record, recording.signal, channel),
    }));
    return nameSpeakers(transcript, {
      encoder,
      profiles,
      path: recording.path,
      turns: recording.turns,
      maxAudioSeconds: this.deps.limits.maxAudioSeconds,
      ...(recording.signal ? { signal: recording.signal } : {}),
    });
  }

  private render(
    transcript: Transcript,
    format: TranscriptionResponseFormat,
    granularities: { word: boolean; segment: boolean },
    openaiCompatible: boolean,
    task: TranscriptionTask,
    rules: SubtitleRules,
  ): OperationResult {
    switch (format) {
      case 'text':
        return { kind: 'text', body: `${transcript.text}\n`, contentType: 'text/plain; charset=utf-8' };
      case 'srt':
        return { kind: 'text', body: toSrt(transcript.segments, rules), contentType: 'application/x-subrip; charset=utf-8' };
      case 'vtt':
        return { kind: 'text', body: toVtt(transcript.segments, rules), contentType: 'text/vtt; charset=utf-8' };
      case 'json':
        return { kind: 'json', body: openaiCompatible ? { text: transcript.text } : toJson(transcript, granularities, false) };
      case 'verbose_json': {
        const body = toJson(transcript, granularities, true) as Record<string, unknown>;
        return {
          kind: 'json',
          body: openaiCompatible ? { task, ...body, language: languageNames[transcript.language] ?? transcript.language } : body,
        };
      }
    }
  }
}
