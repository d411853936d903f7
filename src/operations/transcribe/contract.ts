/** What a transcription takes: our fields, and OpenAI's transcription and translation forms (aliases onto ours). */
import { Type, type Static } from '@sinclair/typebox';
import { closedSet, fileField, maxIdLength, maxLanguageLength } from '../../core/contract-fields.js';
import { maxKeytermCharacters, maxKeyterms } from './keyterms.js';

export const transcriptionResponseFormats = ['json', 'verbose_json', 'srt', 'vtt', 'text', 'diarized_json'] as const;
export type TranscriptionResponseFormat = (typeof transcriptionResponseFormats)[number];
export const transcriptionTasks = ['transcribe', 'translate'] as const;
export type TranscriptionTask = (typeof transcriptionTasks)[number];
/** Profiles (or known speaker references) one transcript may name its speakers after. */
export const maxSpeakerVoices = 20;
/** Channels multichannel=true transcribes, one speaker each (a call or a small panel, not a mixing desk). */
export const maxChannels = 8;

const granularities = Type.Union([Type.String({ maxLength: 20 }), Type.Array(Type.String({ maxLength: 20 }), { maxItems: 2 })], {
  description: 'segment and/or word.',
});
const responseFormat = closedSet(
  transcriptionResponseFormats,
  "json (default), verbose_json, srt, vtt, text or diarized_json (OpenAI's diarized transcript: segments of type " +
    'transcript.text.segment with speaker A, B, ... or the matched known speaker name; implies diarize=true).',
);

const knownSpeakerNames = Type.Union(
  [Type.String({ maxLength: 200 }), Type.Array(Type.String({ maxLength: 200 }), { maxItems: maxSpeakerVoices })],
  {
    description:
      'Names for known_speaker_references, in the same order (OpenAI: known_speaker_names[]). A diarized speaker matched to a ' +
      'reference gets its name (speaker_name; the speaker label in diarized_json). Needs diarize=true, diarized_json or ' +
      'multichannel.',
  },
);
const knownSpeakerReferences = Type.Union(
  [Type.String({ maxLength: 1024 * 1024 }), Type.Array(Type.String({ maxLength: 1024 * 1024 }), { maxItems: maxSpeakerVoices })],
  {
    description:
      'Audio of each known speaker as a base64 data URL (data:audio/wav;base64,...), 1 to 30 s, any format ffmpeg decodes ' +
      '(OpenAI: known_speaker_references[]). Matched as speaker_voice_ids are; used for this request only, never stored.',
  },
);

/** Speakers per channel, and OpenAI's known speakers: on both transcription routes. */
const speakerFields = {
  multichannel: Type.Optional(
    Type.Boolean({
      default: false,
      description:
        `Each channel of the recording (2 to ${maxChannels}) transcribed on its own as one speaker (a call with each party on ` +
        'its own channel): segments carry channel (0-based) and speaker SPEAKER_<channel>, in time order. Not with diarize; ' +
        'a mono recording is refused (use diarize).',
    }),
  ),
  known_speaker_names: Type.Optional(knownSpeakerNames),
  known_speaker_references: Type.Optional(knownSpeakerReferences),
};

/** How srt and vtt cues are cut; the defaults are defaultSubtitleRules. */
const subtitleFields = {
  max_line_chars: Type.Optional(
    Type.Integer({ minimum: 10, maximum: 200, default: 42, description: 'srt/vtt: characters per subtitle line at most.' }),
  ),
  max_lines: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, default: 2, description: 'srt/vtt: lines per cue at most.' })),
  max_cue_seconds: Type.Optional(
    Type.Number({ minimum: 1, maximum: 60, default: 7, description: 'srt/vtt: longest time a cue stays on screen.' }),
  ),
  min_cue_seconds: Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: 10,
      default: 1,
      description:
        'srt/vtt: shortest time a cue stays on screen where the next cue leaves room. Cues are cut at word times, preferably ' +
        'at sentence or clause ends and pauses; a change of speaker always starts a new cue, labelled [speaker] (its name when ' +
        'matched).',
    }),
  ),
};

export const transcribeContract = Type.Object({
  audio: fileField('Audio or video file in any format ffmpeg decodes.'),
  language: Type.Optional(
    Type.String({ maxLength: maxLanguageLength, description: "ISO 639-1 code (BCP-47 accepted, region ignored) or 'auto' (default)." }),
  ),
  task: Type.Optional(
    closedSet(
      transcriptionTasks,
      'transcribe (default) or translate: English text whatever the spoken language; language then names the source language.',
    ),
  ),
  diarize: Type.Optional(Type.Boolean({ default: false, description: 'Label speakers.' })),
  tag_audio_events: Type.Optional(
    Type.Boolean({
      default: false,
      description:
        'Add music and singing stretches as segments of kind event, text (music) or (singing), among the speech (which gets ' +
        'kind speech); their labels join the text where they start.',
    }),
  ),
  ...speakerFields,
  num_speakers: Type.Optional(Type.Integer({ minimum: 1, maximum: 32 })),
  min_speakers: Type.Optional(Type.Integer({ minimum: 1, maximum: 32 })),
  max_speakers: Type.Optional(Type.Integer({ minimum: 1, maximum: 32 })),
  response_format: Type.Optional(responseFormat),
  ...subtitleFields,
  timestamp_granularities: Type.Optional(granularities),
  prompt: Type.Optional(Type.String({ maxLength: 2000, description: 'Initial prompt: spelling and vocabulary hints.' })),
  // Bounds against abuse only: the service checks the limits, so a 400 names keyterms whichever form the list came in.
  keyterms: Type.Optional(
    Type.Union([Type.String({ maxLength: 20_000 }), Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 1000 })], {
      description:
        `Words or phrases expected in the audio (names, jargon): up to ${maxKeyterms}, each up to ${maxKeytermCharacters} ` +
        `characters; the field repeated, or one value with a JSON array or a comma list. They bias the decoding, near misses are ` +
        `corrected to them, and found_keyterms reports them.`,
    }),
  ),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  speaker_voice_ids: Type.Optional(
    Type.Union([Type.String({ maxLength: 2000 }), Type.Array(Type.String({ maxLength: maxIdLength }), { maxItems: maxSpeakerVoices })], {
      description:
        `Cloned voice profiles to name the speakers after (comma list or repeated field, at most ${maxSpeakerVoices}; needs ` +
        `diarize=true): a matched speaker gets speaker_name and voice_id.`,
    }),
  ),
});
/** The fields the service reads: the file itself reaches it as an upload. */
export const transcribeFields = Type.Omit(transcribeContract, ['audio']);
export type TranscribeFields = Static<typeof transcribeFields>;

/** Characters of text one alignment takes: a book chapter and more (2 h of speech is ~120 000), inside the form's 1 MB field. */
export const maxAlignTextCharacters = 200_000;

/** POST /v1/audio/align: the time of every word of a given text in the audio. */
export const alignContract = Type.Object({
  audio: fileField(
    'Audio or video file in any format ffmpeg decodes, as long as transcription takes (VOXD_MAX_AUDIO_SECONDS): longer than 30 s, it is cut at pauses and the text with it.',
  ),
  text: Type.String({
    minLength: 1,
    maxLength: maxAlignTextCharacters,
    description:
      'What the audio says. Every word of it is timed, in order; words the audio does not say keep their place with a low confidence.',
  }),
  language: Type.Optional(
    Type.String({ maxLength: maxLanguageLength, description: "ISO 639-1 code (BCP-47 accepted, region ignored) or 'auto' (default)." }),
  ),
});
export const alignFields = Type.Omit(alignContract, ['audio']);
export type AlignFields = Static<typeof alignFields>;

const compatibleModel = Type.Optional(
  Type.String({ maxLength: 200, description: 'Accepted for compatibility; the server uses its configured ASR model.' }),
);

/** OpenAI's /v1/audio/transcriptions form, so the official SDKs work unchanged. */
export const openaiTranscriptionContract = Type.Object({
  file: fileField('Audio file.'),
  model: compatibleModel,
  language: Type.Optional(Type.String({ maxLength: maxLanguageLength })),
  prompt: Type.Optional(Type.String({ maxLength: 2000 })),
  response_format: Type.Optional(responseFormat),
  ...subtitleFields,
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  ...speakerFields,
  'known_speaker_names[]': Type.Optional(knownSpeakerNames),
  'known_speaker_references[]': Type.Optional(knownSpeakerReferences),
  chunking_strategy: Type.Optional(
    Type.String({
      maxLength: 1000,
      description:
        'Accepted for compatibility (auto, or server_vad as chunking_strategy[type] and its settings): the server always ' +
        'cuts the audio at the pauses its own voice activity detection finds.',
    }),
  ),
  'timestamp_granularities[]': Type.Optional(granularities),
  timestamp_granularities: Type.Optional(granularities),
});

/** OpenAI's /v1/audio/translations form: English text from speech in any language. */
export const openaiTranslationContract = Type.Object({
  file: fileField('Audio file.'),
  model: compatibleModel,
  prompt: Type.Optional(Type.String({ maxLength: 2000, description: 'Initial prompt, in English.' })),
  response_format: Type.Optional(responseFormat),
  ...subtitleFields,
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
});

/**
 * Our fields from OpenAI's transcription form: the SDKs send lists as `name[]` (granularities, known speakers); the
 * other fields are ours by name (ours that OpenAI lacks, e.g. diarize, pass through).
 */
export function fromOpenaiTranscription(form: Record<string, unknown>): Record<string, unknown> {
  return {
    ...form,
    timestamp_granularities: form['timestamp_granularities[]'] ?? form.timestamp_granularities,
    known_speaker_names: form['known_speaker_names[]'] ?? form.known_speaker_names,
    known_speaker_references: form['known_speaker_references[]'] ?? form.known_speaker_references,
  };
}

/** Our fields from OpenAI's translation form. */
export function fromOpenaiTranslation(form: Record<string, unknown>): Record<string, unknown> {
  return { ...form, task: 'translate' };
}
