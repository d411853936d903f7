/** POST /v1/audio/transcribe and the OpenAI-compatible /v1/audio/transcriptions and /v1/audio/translations. */
import { admitAudio, uploadedFile, type AudioLimits } from '../../audio/input.js';
import type { AudioEventDetector } from '../../audio/audio-events.js';
import type { SileroVad } from '../../audio/vad.js';
import { unsupportedValue, VoxError } from '../../core/errors.js';
import type { OperationContext, OperationResult } from '../../core/operation-context.js';
import type { Scheduler } from '../../core/scheduler.js';
import type { Metrics } from '../../core/metrics.js';
import type { CamppEncoder } from '../../speakers/campplus.js';
import type { VoiceRecord } from '../../core/records.js';
import type { VoiceService } from '../../voices/service.js';
import { decodeBlocks } from '../../audio/decode.js';
import { alignText, characterTimes } from './align.js';
import { detectEvents, withAudioEvents } from './audio-events.js';
import { transcribeChannels } from './channels.js';
import { defaultSubtitleRules, toDiarizedJson, toJson, toSrt, toVtt, type SubtitleRules, type Transcript } from './formats.js';
import { parseKeyterms } from './keyterms.js';
import { baseLanguage, languageNames, whisperLanguages } from './languages.js';
import { transcribeFile, type Diarizer, type SpeakerTurn } from './pipeline.js';
import { embedReferences, nameSpeakers, referenceAudio, type KnownSpeaker } from './speaker-names.js';
import type { Transcriber } from './transcriber.js';
import {
  type AlignFields,
  maxChannels,
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

/** A field that may come once or repeated, as a list (known speakers: data URLs hold commas, so no comma lists). */
const listOf = (value: string | string[] | undefined): string[] => (Array.isArray(value) ? value : value === undefined ? [] : [value]);

export interface TranscriptionDependencies {
  limits: AudioLimits;
  scheduler: Scheduler;
  metrics: Metrics;
  vad: () => Promise<SileroVad>;
  /** Keeps music without speech from the recogniser, and tags events for tag_audio_events (not installed: 503 naming the model to pull). */
  audioEvents: () => Promise<AudioEventDetector>;
  /** Undefined when no ASR engine is installed: the route answers 501. */
  transcriber?: () => Promise<Transcriber>;
  /** Undefined when no speaker-embedding model is installed: diarize=true answers 501. */
  diarizer?: () => Promise<Diarizer>;
  /**
   * Speakers named after voice profiles (speaker_voice_ids) or known speaker references: the profiles, the CAM++ encoder,
   * and scratch files for the references.
   */
  speakerNaming?: {
    voices: Pick<VoiceService, 'identificationProfiles' | 'identificationEmbedding'>;
    encoder: () => Promise<CamppEncoder>;
    scratchPath: () => string;
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
    const format = fields.response_format ?? 'json';
    const multichannel = fields.multichannel ?? false;
    if (multichannel && fields.diarize)
      throw new VoxError('invalid_request', 'multichannel=true gives each channel one speaker: it is not combined with diarize=true.', {
        param: 'multichannel',
      });
    // OpenAI's diarized format is diarized; with multichannel its speakers are the channels.
    const diarize = (fields.diarize ?? false) || (format === 'diarized_json' && !multichannel);
    const speakersKnown = diarize || multichannel;
    const { num_speakers: numSpeakers, min_speakers: minSpeakers, max_speakers: maxSpeakers } = fields;
    if (minSpeakers !== undefined && maxSpeakers !== undefined && minSpeakers > maxSpeakers) {
      throw new VoxError('invalid_request', 'min_speakers must not exceed max_speakers.', { param: 'min_speakers' });
    }
    if ((numSpeakers ?? minSpeakers ?? maxSpeakers) !== undefined && !diarize) {
      throw new VoxError('invalid_request', 'num_speakers, min_speakers and max_speakers need diarize=true.', { param: 'diarize' });
    }
    const speakerVoices = speakerVoiceIds(fields.speaker_voice_ids);
    if (speakerVoices.length > 0 && !speakersKnown)
      throw new VoxError(
        'invalid_request',
        'speaker_voice_ids needs diarize=true (or multichannel=true): speakers are named after diarization.',
        { param: 'diarize' },
      );
    if (speakerVoices.length > maxSpeakerVoices) {
      throw new VoxError(
        'invalid_request',
        `speaker_voice_ids lists ${speakerVoices.length} voices; at most ${maxSpeakerVoices} are matched.`,
        { param: 'speaker_voice_ids' },
      );
    }
    const knownNames = listOf(fields.known_speaker_names).map((name) => name.trim());
    const knownReferences = listOf(fields.known_speaker_references);
    if (knownNames.length !== knownReferences.length)
      throw new VoxError(
        'invalid_request',
        `known_speaker_names and known_speaker_references pair up by position: ${knownNames.length} names, ` +
          `${knownReferences.length} references.`,
        { param: knownNames.length < knownReferences.length ? 'known_speaker_names' : 'known_speaker_references' },
      );
    // Malformed ones fail before the upload is looked at.
    knownReferences.forEach(referenceAudio);
    if (knownNames.some((name) => name === ''))
      throw new VoxError('invalid_request', 'known_speaker_names holds an empty name.', { param: 'known_speaker_names' });
    if (knownNames.length > 0 && !speakersKnown)
      throw new VoxError(
        'invalid_request',
        'known_speaker_names needs response_format=diarized_json, diarize=true or multichannel=true: speakers are named after ' +
          'diarization.',
        { param: 'response_format' },
      );
    if (speakerVoices.length + knownNames.length > maxSpeakerVoices)
      throw new VoxError('invalid_request', `At most ${maxSpeakerVoices} known speakers and voice profiles are matched.`, {
        param: 'known_speaker_names',
      });
    const naming = this.deps.speakerNaming;
    if (speakerVoices.length + knownNames.length > 0 && !naming)
      throw new VoxError('not_implemented', 'Naming speakers after known voices is not available on this server.', {
        param: speakerVoices.length > 0 ? 'speaker_voice_ids' : 'known_speaker_names',
      });
    // Unknown, another key's or built-in voices fail before the upload is looked at.
    const speakerProfiles = speakerVoices.length > 0 ? await naming!.voices.identificationProfiles(speakerVoices, context.apiKey) : [];
    const tagEvents = fields.tag_audio_events ?? false;
    const granularities = parseGranularities(fields.timestamp_granularities, options.openaiCompatible ?? false);
    const rules = subtitleRules(fields);
    const task = fields.task ?? 'transcribe';
    const keyterms = parseKeyterms(fields.keyterms);
    const uploadField = options.uploadField ?? 'audio';
    const input = await admitAudio(uploadedFile(context.inputs, uploadField), this.deps.limits, context.signal);
    const channels = input.probe.channels;
    if (multichannel && (channels < 2 || channels > maxChannels))
      throw new VoxError(
        'invalid_request',
        `multichannel=true transcribes 2 to ${maxChannels} channels, one speaker each; the audio has ${channels}.` +
          (channels < 2 ? ' Use diarize=true to tell the speakers of a mono recording apart.' : ''),
        { param: 'multichannel' },
      );
    const { transcriber: loadTranscriber, diarizer: makeDiarizer } = this.deps;
    if (!loadTranscriber)
      throw new VoxError('not_implemented', 'Transcription is not available on this server: no ASR model is installed (voxd models pull).');
    if (diarize && !makeDiarizer)
      throw new VoxError('not_implemented', 'Diarization is not available on this server: no speaker-embedding model is installed.', {
        param: 'diarize',
      });

    // Each channel is a pass of its own.
    const workSeconds = input.durationSeconds * (multichannel ? channels : 1);
    const transcript = await this.deps.scheduler.run('transcribe', workSeconds, context.signal, async (signal) => {
      const [transcriber, vad, audioEvents, diarizer] = await Promise.all([
        loadTranscriber(),
        this.deps.vad(),
        this.deps.audioEvents(),
        diarize ? makeDiarizer!() : undefined,
      ]);
      // The turns are kept for naming the speakers afterwards.
      let turns: SpeakerTurn[] = [];
      const keepingTurns: Diarizer | undefined = diarizer && {
        addAudio: (samples, s) => diarizer.addAudio(samples, s),
        finish: async (o, s) => (turns = await diarizer.finish(o, s)),
      };
      const startedAt = performance.now();
      // Before the transcription, so that a reference that is not audio fails at once.
      const known =
        speakerProfiles.length + knownNames.length > 0
          ? await this.knownSpeakers(
              naming!,
              speakerProfiles,
              knownNames.map((name, i) => ({ name, dataUrl: knownReferences[i]! })),
              signal,
            )
          : [];
      const request = {
        path: input.path,
        language,
        languageTag: fields.language || 'auto',
        task,
        ...(fields.prompt ? { prompt: fields.prompt } : {}),
        ...(keyterms.length > 0 ? { keyterms } : {}),
        ...(fields.temperature !== undefined ? { temperature: fields.temperature } : {}),
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
      };
      let result: Transcript;
      let channelOf: Map<string, number> | undefined;
      if (multichannel) {
        ({ transcript: result, turns, channelOf } = await transcribeChannels({ transcriber, vad, audioEvents }, request, channels));
      } else {
        result = await transcribeFile(
          { transcriber, vad, audioEvents },
          { ...request, ...(keepingTurns ? { diarizer: keepingTurns } : {}) },
        );
      }
      const named =
        known.length > 0
          ? await nameSpeakers(result, {
              encoder: await naming!.encoder(),
              known,
              path: input.path,
              turns,
              ...(channelOf ? { channelOf } : {}),
              maxAudioSeconds: this.deps.limits.maxAudioSeconds,
              ...(signal ? { signal } : {}),
            })
          : result;
      const transcript = tagEvents
        ? withAudioEvents(
            named,
            await detectEvents(audioEvents, {
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

  /** Forced alignment of `text` on the upload: one Whisper window, or windows cut at pauses for longer audio. */
  async align(fields: AlignFields, context: OperationContext): Promise<OperationResult> {
    const language = baseLanguage(fields.language || 'auto');
    if (language !== 'auto' && !(whisperLanguages as readonly string[]).includes(language)) {
      throw unsupportedValue('language', fields.language ?? '', ['auto', ...whisperLanguages]);
    }
    if (fields.text.trim() === '') throw new VoxError('invalid_request', "'text' has no words to align.", { param: 'text' });
    const input = await admitAudio(uploadedFile(context.inputs, 'audio'), this.deps.limits, context.signal);
    const loadTranscriber = this.deps.transcriber;
    if (!loadTranscriber)
      throw new VoxError('not_implemented', 'Alignment is not available on this server: no ASR model is installed (voxd models pull).');
    return this.deps.scheduler.run('transcribe', input.durationSeconds, context.signal, async (signal) => {
      const transcriber = await loadTranscriber();
      const startedAt = performance.now();
      const {
        words,
        language: spoken,
        audioSeconds,
      } = await alignText({
        transcriber,
        vad: this.deps.vad,
        audio: () =>
          decodeBlocks(input.path, {
            sampleRate: 16000,
            channels: 1,
            blockFrames: 16000 * 10,
            maxSeconds: this.deps.limits.maxAudioSeconds,
            param: 'audio',
            ...(signal ? { signal } : {}),
          }),
        text: fields.text,
        language,
        ...(signal ? { signal } : {}),
        onProgress: (fraction) => context.onProgress?.({ stage: 'aligning', fraction }),
      });
      const elapsedSeconds = (performance.now() - startedAt) / 1000;
      context.log.info(
        {
          op: 'align',
          engine: transcriber.engine,
          model: transcriber.modelId,
          audio_seconds: audioSeconds,
          words: words.length,
          elapsed_ms: Math.round(elapsedSeconds * 1000),
        },
        'aligned',
      );
      return { kind: 'json', body: { words, characters: characterTimes(words), language: spoken } };
    });
  }

  /** The voices to name speakers after: the listed profiles, then the request's own references (embedded, not stored). */
  private async knownSpeakers(
    naming: NonNullable<TranscriptionDependencies['speakerNaming']>,
    records: VoiceRecord[],
    references: Array<{ name: string; dataUrl: string }>,
    signal: AbortSignal | undefined,
  ): Promise<KnownSpeaker[]> {
    const known: KnownSpeaker[] = [];
    for (const record of records)
      known.push({
        name: record.name,
        voiceId: record.id,
        embedding: (channel) => naming.voices.identificationEmbedding(record, signal, channel),
      });
    const encoder = await naming.encoder();
    known.push(...(await embedReferences(references, { encoder, scratchPath: naming.scratchPath, ...(signal ? { signal } : {}) })));
    return known;
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
      case 'diarized_json':
        return { kind: 'json', body: toDiarizedJson(transcript, task) };
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
