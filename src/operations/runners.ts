/**
 * Every way to call an operation (our routes and the OpenAI aliases), by name: the HTTP layer runs them for synchronous
 * requests, the job worker runs the same call for jobs (a job records the runner's name), so both give the same result.
 */
import type { ApiKeyRecord, Operation } from '../core/records.js';
import type { VoiceService } from '../voices/service.js';
import type { OperationContext, OperationResult } from '../core/operation-context.js';
import { contractFields } from '../core/contract-fields.js';
import { convertFields } from './convert/contract.js';
import { dubFields } from './dub/contract.js';
import type { DubbingService } from './dub/service.js';
import type { VoiceConversionService } from './convert/service.js';
import { separateFields } from './separate/contract.js';
import type { SeparationService } from './separate/service.js';
import { openaiSpeechContract, synthesizeContract } from './synthesize/contract.js';
import { openaiVoiceId, type SynthesisService } from './synthesize/service.js';
import { alignFields, fromOpenaiTranscription, fromOpenaiTranslation, transcribeFields } from './transcribe/contract.js';
import { speakerVoiceIds, type TranscriptionService } from './transcribe/service.js';

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
  /** The pronunciation dictionaries the request applies, checked before a job is accepted too (404 for another key's). */
  dictionariesOf?: (params: Record<string, unknown>) => string[];
  /** Any other check of the request before a job is accepted (its voices, languages, consent), as its run makes it. */
  admit?: (params: Record<string, unknown>, caller: ApiKeyRecord) => Promise<void>;
  run(params: Record<string, unknown>, context: OperationContext): Promise<OperationResult>;
}

export const runnerNames = [
  'transcribe',
  'transcriptions',
  'translations',
  'align',
  'tts',
  'tts-timestamps',
  'speech',
  'vc',
  'separate',
  'dub',
] as const;
export type RunnerName = (typeof runnerNames)[number];

export interface OperationServices {
  transcription: TranscriptionService;
  synthesis: SynthesisService;
  conversion: VoiceConversionService;
  separation: SeparationService;
  dubbing: DubbingService;
  voices: VoiceService;
}

export function operationRunners(services: OperationServices): Record<RunnerName, OperationRunner> {
  const speakerVoicesOf = (params: Record<string, unknown>): string[] =>
    speakerVoiceIds(contractFields(transcribeFields, params).speaker_voice_ids);
  return {
    transcribe: {
      operation: 'transcribe',
      audioFields: ['audio'],
      speakerVoicesOf,
      run: (params, context) => services.transcription.transcribe(contractFields(transcribeFields, params), context),
    },
    transcriptions: {
      operation: 'transcribe',
      audioFields: ['file'],
      speakerVoicesOf,
      run: (params, context) =>
        services.transcription.transcribe(contractFields(transcribeFields, fromOpenaiTranscription(params)), context, {
          uploadField: 'file',
          openaiCompatible: true,
        }),
    },
    translations: {
      operation: 'transcribe',
      audioFields: ['file'],
      run: (params, context) =>
        services.transcription.transcribe(contractFields(transcribeFields, fromOpenaiTranslation(params)), context, {
          uploadField: 'file',
          openaiCompatible: true,
        }),
    },
    align: {
      operation: 'transcribe',
      audioFields: ['audio'],
      run: (params, context) => services.transcription.align(contractFields(alignFields, params), context),
    },
    tts: {
      operation: 'tts',
      audioFields: [],
      voiceOf: (params) => ({ voiceId: contractFields(synthesizeContract, params).voice_id, param: 'voice_id' }),
      dictionariesOf: (params) => contractFields(synthesizeContract, params).pronunciation_dictionary_ids ?? [],
      run: (params, context) => services.synthesis.synthesize(contractFields(synthesizeContract, params), context),
    },
    'tts-timestamps': {
      operation: 'tts',
      audioFields: [],
      voiceOf: (params) => ({ voiceId: contractFields(synthesizeContract, params).voice_id, param: 'voice_id' }),
      dictionariesOf: (params) => contractFields(synthesizeContract, params).pronunciation_dictionary_ids ?? [],
      run: (params, context) => services.synthesis.synthesizeWithTimestamps(contractFields(synthesizeContract, params), context),
    },
    speech: {
      operation: 'tts',
      audioFields: [],
      voiceOf: (params) => ({ voiceId: openaiVoiceId(contractFields(openaiSpeechContract, params).voice), param: 'voice' }),
      dictionariesOf: (params) => contractFields(openaiSpeechContract, params).pronunciation_dictionary_ids ?? [],
      run: (params, context) => services.synthesis.synthesizeOpenai(contractFields(openaiSpeechContract, params), context),
    },
    vc: {
      operation: 'vc',
      audioFields: ['audio'],
      voiceOf: (params) => ({ voiceId: contractFields(convertFields, params).target_voice_id, param: 'target_voice_id' }),
      run: (params, context) => services.conversion.convert(contractFields(convertFields, params), context),
    },
    separate: {
      operation: 'separate',
      audioFields: ['audio'],
      run: (params, context) => services.separation.separate(contractFields(separateFields, params), context),
    },
    dub: {
      operation: 'dub',
      audioFields: ['audio'],
      admit: async (params, caller) => void (await services.dubbing.admit(contractFields(dubFields, params), caller)),
      run: (params, context) => services.dubbing.dub(contractFields(dubFields, params), context),
    },
  };
}
