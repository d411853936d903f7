/** POST /v1/audio/transcribe: validation and orchestration. The engine plugs in behind `Transcriber`. */
import { admitAudio, uploadedFile, type AudioLimits } from '../../audio/input.js';
import { unsupportedValue, VoxError } from '../../errors.js';
import type { OperationResult, RequestContext } from '../../http/context.js';
import { baseLanguage, whisperLanguages } from './languages.js';

export const transcriptionResponseFormats = ['json', 'verbose_json', 'srt', 'vtt', 'text'] as const;
export type TranscriptionResponseFormat = (typeof transcriptionResponseFormats)[number];

export interface TranscribeFields {
  language?: string;
  diarize?: boolean;
  num_speakers?: number;
  min_speakers?: number;
  max_speakers?: number;
  response_format?: TranscriptionResponseFormat;
  timestamp_granularities?: string | string[];
  prompt?: string;
  temperature?: number;
}

export class TranscriptionService {
  constructor(private readonly limits: AudioLimits) {}

  capabilities() {
    return { available: false, languages: [...whisperLanguages], response_formats: [...transcriptionResponseFormats], diarization: false };
  }

  async transcribe(fields: TranscribeFields, context: RequestContext): Promise<OperationResult> {
    const language = baseLanguage(fields.language ?? 'auto');
    if (language !== 'auto' && !(whisperLanguages as readonly string[]).includes(language)) {
      throw unsupportedValue('language', fields.language ?? '', ['auto', ...whisperLanguages]);
    }
    const { num_speakers: numSpeakers, min_speakers: minSpeakers, max_speakers: maxSpeakers } = fields;
    if (minSpeakers !== undefined && maxSpeakers !== undefined && minSpeakers > maxSpeakers) {
      throw new VoxError('invalid_request', 'min_speakers must not exceed max_speakers.', { param: 'min_speakers' });
    }
    if (numSpeakers !== undefined && (fields.diarize ?? false) === false) {
      throw new VoxError('invalid_request', 'num_speakers needs diarize=true.', { param: 'num_speakers' });
    }
    await admitAudio(uploadedFile(context.uploads, 'audio'), this.limits, context.signal);
    throw new VoxError('not_implemented', 'Transcription is not available yet on this server: its engine has not landed.');
  }
}
