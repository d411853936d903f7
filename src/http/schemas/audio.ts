/**
 * Route bodies: each operation's contract (operations/<op>/contract.ts) and the fields that run it as a job. Validation
 * and the OpenAPI document come from the same definitions.
 */
import { Type, type TObject } from '@sinclair/typebox';
import { contentTypes } from '../../audio/encode.js';
import { convertContract } from '../../operations/convert/contract.js';
import { dubContract } from '../../operations/dub/contract.js';
import { separateContract } from '../../operations/separate/contract.js';
import { openaiSpeechContract, synthesizeContract } from '../../operations/synthesize/contract.js';
import {
  alignContract,
  openaiTranscriptionContract,
  openaiTranslationContract,
  transcribeContract,
} from '../../operations/transcribe/contract.js';
import { maxAudioUrlRedirects } from '../audio-url.js';
import { binaryContent, openObject } from './common.js';
import { jobFields } from './jobs.js';

const withJobFields = (contract: TObject, options: { additionalProperties?: false } = {}) =>
  Type.Object({ ...contract.properties, ...jobFields }, options);

/** A route body whose file `field` may come as `audio_url` instead (audio-url.ts downloads it): one of the two is required. */
export function withAudioUrl<T extends TObject>(body: T, field: string): TObject {
  const { [field]: file, ...rest } = body.properties;
  if (!file) throw new Error(`withAudioUrl: the body has no '${field}'`);
  return Type.Object(
    { [field]: Type.Optional(file), ...rest, audio_url: audioUrlField(field) },
    { additionalProperties: body.additionalProperties as false | undefined },
  );
}

export function audioUrlField(field: string) {
  return Type.Optional(
    Type.String({
      maxLength: 2048,
      description:
        `http(s) address of the audio, fetched by the server, instead of uploading '${field}' (one of the two is required). ` +
        `Public addresses only unless VOXD_AUDIO_URL_ALLOW_PRIVATE=true; at most ${maxAudioUrlRedirects} redirects, each ` +
        'checked again; the size limit (VOXD_MAX_UPLOAD_MB) stops the download, the duration limit applies as to uploads; ' +
        'VOXD_AUDIO_URL_TIMEOUT_SECONDS bounds it. A failure is a 400 naming the cause (address refused, unreachable, HTTP ' +
        'status, timeout, too many redirects), 413 when too large, 415 when not audio.',
    }),
  );
}

export const transcribeBody = withAudioUrl(withJobFields(transcribeContract), 'audio');
export const alignBody = withAudioUrl(withJobFields(alignContract), 'audio');
/** OpenAI's /v1/audio/transcriptions form, so the official SDKs work unchanged. */
export const openaiTranscriptionBody = withAudioUrl(withJobFields(openaiTranscriptionContract), 'file');
/** OpenAI's /v1/audio/translations form: English text from speech in any language. */
export const openaiTranslationBody = withAudioUrl(withJobFields(openaiTranslationContract), 'file');
export const ttsBody = withJobFields(synthesizeContract, { additionalProperties: false });
/** OpenAI's /v1/audio/speech body, so the official SDKs work unchanged. */
export const openaiSpeechBody = withJobFields(openaiSpeechContract);
export const vcBody = withAudioUrl(withJobFields(convertContract), 'audio');
/** Always a job: only the webhook of the job fields applies. */
export const dubbingBody = withAudioUrl(Type.Object({ ...dubContract.properties, webhook_url: jobFields.webhook_url }), 'audio');
export const separateBody = withAudioUrl(withJobFields(separateContract), 'audio');

export const speechAudio = { description: 'Speech in the requested format', content: binaryContent(Object.values(contentTypes)) };

const characterTimes = openObject(
  {
    characters: Type.Array(Type.String()),
    character_start_times_seconds: Type.Array(Type.Number()),
    character_end_times_seconds: Type.Array(Type.Number()),
  },
  "Every character of the text with the times of the word it belongs to (ElevenLabs' alignment); spaces span the gap",
);
const timedSpeech = openObject(
  {
    audio_base64: Type.String({ description: 'The speech, encoded as `format`' }),
    format: Type.String(),
    sample_rate: Type.Integer(),
    words: Type.Array(
      openObject(
        { word: Type.String(), start: Type.Number({ description: 'Seconds' }), end: Type.Number({ description: 'Seconds' }) },
        'A word as written, with its seconds in the audio',
      ),
    ),
    characters: characterTimes,
    marks: Type.Array(
      openObject(
        { name: Type.String(), time: Type.Number({ description: 'Seconds' }) },
        'An SSML <mark>: its name and its seconds in the audio (in a stream, on the line whose audio it is in)',
      ),
    ),
    warnings: Type.Optional(
      Type.Array(Type.String(), { description: 'What was asked for but not honoured (also in the x-voxd-warnings header)' }),
    ),
  },
  'Speech with the times of its words and characters',
);
export const timedSpeechResponse = {
  description:
    'The speech (base64) with word and character times; with stream=true newline-delimited JSON, one such object per chunk ' +
    '(its audio, its words; times from the start of the whole speech). Every engine gives them: Kokoro and Piper voices ' +
    "from the model's predicted phoneme durations, espeak-ng voices by aligning the speech with its words spoken alone; " +
    '422 where they cannot be had (a Piper model exported without its duration node; espeak-ng words it could not tell apart)',
  content: { 'application/json': { schema: timedSpeech }, 'application/x-ndjson': { schema: timedSpeech } },
};

const vcJson = openObject(
  {
    url: Type.String({ description: 'Download of the converted audio (GET, same key)' }),
    expires_at: Type.String({ format: 'date-time' }),
    duration: Type.Number(),
    sample_rate: Type.Integer(),
    warnings: Type.Array(Type.String()),
  },
  'The converted file and similarity metrics',
);
export const vcResponse = {
  description: 'The re-voiced recording, or with response_format=json its download URL and similarity metrics',
  content: { ...binaryContent(Object.values(contentTypes)), 'application/json': { schema: vcJson } },
};

const separateJson = openObject(
  {
    id: Type.String(),
    duration: Type.Number(),
    sample_rate: Type.Integer(),
    channels: Type.Integer(),
    stems: Type.Array(
      openObject(
        { name: Type.String(), url: Type.String(), expires_at: Type.String({ format: 'date-time' }) },
        'One stem: download URL and levels',
      ),
    ),
    warnings: Type.Array(Type.String()),
  },
  'Stem download URLs',
);
export const separateResponse = {
  description: 'Stems: download URLs (json, default) or one zip archive',
  content: { 'application/json': { schema: separateJson }, ...binaryContent(['application/zip']) },
};

const timed = { start: Type.Number({ description: 'Seconds from the start of the audio.' }), end: Type.Number() };
export const alignResponse = {
  description: 'The time of every word of the text, in order',
  content: {
    'application/json': {
      schema: Type.Object({
        words: Type.Array(
          Type.Object({
            word: Type.String(),
            ...timed,
            confidence: Type.Number({
              description: "The model's probability of the word here (0-1): low where the audio does not say it.",
            }),
          }),
        ),
        characters: Type.Array(Type.Object({ character: Type.String(), ...timed }), {
          description: 'The words spread over their characters, with the spaces between them.',
        }),
        language: Type.String({ description: 'The language given, or the one detected.' }),
      }),
    },
  },
};

const transcriptionJson = openObject(
  { text: Type.String() },
  'The transcript: text, and per response_format segments, words, speakers (with their channel under multichannel), ' +
    "language. diarized_json: OpenAI's TranscriptionDiarized, { task, text, segments: [{ type: 'transcript.text.segment', " +
    'id, start, end, text, speaker (and channel under multichannel) }], duration, usage: { type: duration, seconds } }',
);
export const transcriptionResponse = {
  description: 'The transcript in the requested response_format',
  content: {
    'application/json': { schema: transcriptionJson },
    'text/plain': { schema: Type.String() },
    'application/x-subrip': { schema: Type.String() },
    'text/vtt': { schema: Type.String() },
  },
};
