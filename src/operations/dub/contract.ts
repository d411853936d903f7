/** What dubbing takes. */
import { Type, type Static } from '@sinclair/typebox';
import { audioFormats } from '../../audio/encode.js';
import { closedSet, fileField, maxLanguageLength } from '../../core/contract-fields.js';

export const dubContract = Type.Object({
  audio: fileField('Audio or video with speech (any format ffmpeg decodes).'),
  target_language: Type.String({
    minLength: 1,
    maxLength: maxLanguageLength,
    description:
      'en (the speech translated into English), or the source language itself (re-voiced in its own language). Whisper ' +
      'translates only into English, so no other target is produced.',
  }),
  source_language: Type.Optional(
    Type.String({ maxLength: maxLanguageLength, description: "ISO 639-1 code of the speech, or 'auto' (default: detected)." }),
  ),
  voices: Type.Optional(
    Type.String({
      maxLength: 4000,
      description:
        'clone (default): each speaker speaks in a voice cloned from their own speech in the recording (needs consent=true); ' +
        'or a JSON object from diarized speaker to voice id, e.g. {"SPEAKER_1": "af_heart", "SPEAKER_2": "voice_..."}: ' +
        'speakers it leaves out are cloned (with consent) or the job fails naming them.',
    }),
  ),
  consent: Type.Optional(
    Type.Boolean({ description: 'Must be true to clone: the caller asserts the speakers agreed to having their voices cloned.' }),
  ),
  num_speakers: Type.Optional(Type.Integer({ minimum: 1, maximum: 32, description: 'Speakers in the recording, when known.' })),
  keep_background: Type.Optional(
    Type.Boolean({
      default: true,
      description: 'Mix the dubbed speech over the original music, effects and ambience (false: speech only).',
    }),
  ),
  save_voices: Type.Optional(
    Type.Boolean({ default: false, description: 'Keep the voices cloned for this dub as voice profiles (default: deleted at the end).' }),
  ),
  format: Type.Optional(closedSet(audioFormats, 'Encoding of the dubbed audio and of the dubbed dialogue alone (default mp3).')),
});
/** The fields the service reads: the file itself reaches it as an upload. */
export const dubFields = Type.Omit(dubContract, ['audio']);
export type DubFields = Static<typeof dubFields>;
