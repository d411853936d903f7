/**
 * Every way to call an operation (our routes and the OpenAI aliases), by name: the HTTP layer runs them for synchronous
 * requests, the job worker runs the same call for jobs (a job records the runner's name), so both give the same result.
 */
import type { Operation } from '../storage/store.js';
import type { VoiceService } from '../voices/service.js';
import type { OperationContext, OperationResult } from './context.js';
import type { VoiceConversionService, ConvertFields } from './convert/service.js';
import type { SeparateFields, SeparationService } from './separate/service.js';
import { openaiVoiceId, type OpenaiSpeechFields, type SynthesisService, type SynthesizeFields } from './synthesize/service.js';
import { speakerVoiceIds, type TranscribeFields, type TranscriptionService } from './transcribe/service.js';

export interface OperationRunner {
  operation: Operation;
  /** Multipart file fields holding audio (checked and measured before a job is accepted). */
  audioFields: readonly string[];
  /**
   * The voice the request speaks in, if any, and the field naming it: checked before a job is accepted, so an unknown
   * voice is a 404 (and one made for identification only a 422) at once.
   */
  voiceOf?: (params: Record<string, unknown>) => { voiceId: string; param: string };
  /** The voice profiles the request names speakers after (speaker_voice_ids), checked before a job is accepted too. */
  speakerVoicesOf?: (params: Record<string, unknown>) => string[];
  run(params: Record<string, unknown>, context: OperationContext): Promise<OperationResult>;
}

export const runnerNames = ['transcribe', 'transcriptions', 'translations', 'tts', 'speech', 'vc', 'separate'] as const;
export type RunnerName = (typeof runnerNames)[number];

export interface OperationServices {
  transcription: TranscriptionService;
  synthesis: SynthesisService;
  conversion: VoiceConversionService;
  separation: SeparationService;
  voices: VoiceService;
}

export function operationRunners(services: OperationServices): Record<RunnerName, OperationRunner> {
  return {
    transcribe: {
      operation: 'transcribe',
      audioFields: ['audio'],
      speakerVoicesOf: (params) => speakerVoiceIds(params.speaker_voice_ids as TranscribeFields['speaker_voice_ids']),
      run: (params, context) => services.transcription.transcribe(params as TranscribeFields, context),
    },
    transcriptions: {
      operation: 'transcribe',
      audioFields: ['file'],
      speakerVoicesOf: (params) => speakerVoiceIds(params.speaker_voice_ids as TranscribeFields['speaker_voice_ids']),
      run: (params, context) =>
        services.transcription.transcribe(
          { ...params, timestamp_granularities: (params['timestamp_granularities[]'] ?? params.timestamp_granularities) as string | string[] | undefined },
          context,
          { uploadField: 'file', openaiCompatible: true },
        ),
    },
    translations: {
      operation: 'transcribe',
      audioFields: ['file'],
      run: (params, context) => services.transcription.transcribe({ ...params, task: 'translate' }, context, { uploadField: 'file', openaiCompatible: true }),
    },
    tts: {
      operation: 'tts',
      audioFields: [],
      voiceOf: (params) => ({ voiceId: String(params.voice_id), param: 'voice_id' }),
      run: (params, context) => services.synthesis.synthesize(params as unknown as SynthesizeFields, context),
    },
    speech: {
      operation: 'tts',
      audioFields: [],
      voiceOf: (params) => ({ voiceId: openaiVoiceId(String(params.voice)), param: 'voice' }),
      run: (params, context) => services.synthesis.synthesizeOpenai(params as unknown as OpenaiSpeechFields, context),
    },
    vc: {
      operation: 'vc',
      audioFields: ['audio'],
      voiceOf: (params) => ({ voiceId: String(params.target_voice_id), param: 'target_voice_id' }),
      run: (params, context) => services.conversion.convert(params as unknown as ConvertFields, context),
    },
    separate: {
      operation: 'separate',
      audioFields: ['audio'],
      run: (params, context) => services.separation.separate(params as SeparateFields, context),
    },
  };
}
