/**
 * The speaker-naming step of a diarized (or multichannel) transcript: speakers matched to known voices
 * (speakers/identification.ts; phone-band speech against the voices through the same line), and the names written into
 * speakers[], segments and words. The known voices are voice profiles (speaker_voice_ids) or OpenAI's
 * known_speaker_references, audio sent with the request and used for it alone. Unmatched speakers keep their SPEAKER_n
 * label with null names.
 */
import { writeFile, rm } from 'node:fs/promises';
import { decodeBlocks } from '../../audio/decode.js';
import { concatSamples } from '../../audio/waveform.js';
import { VoxError } from '../../core/errors.js';
import type { CamppEncoder } from '../../speakers/campplus.js';
import { camppSampleRate } from '../../speakers/campplus.js';
import {
  channelOf,
  embedSpeakers,
  matchSimilarityOf,
  matchSpeakers,
  type SpeechChannel,
  speechOfSpeakers,
  speechToEmbed,
} from '../../speakers/identification.js';
import { telephoneBand } from '../../audio/bandwidth.js';
import type { Transcript } from './formats.js';
import type { SpeakerTurn } from './pipeline.js';

/** A voice to name speakers after: a profile (voiceId) or a reference sent with the request (voiceId null). */
export interface KnownSpeaker {
  name: string;
  voiceId: string | null;
  /** CAM++ embedding for speech of a channel (made through the line when narrowband). */
  embedding: (channel: SpeechChannel) => Promise<Float32Array>;
}

export interface SpeakerNaming {
  encoder: CamppEncoder;
  known: KnownSpeaker[];
  /** The recording (decoded once more, only up to the last span embedded). */
  path: string;
  turns: SpeakerTurn[];
  /** Multichannel: each speaker's channel, whose audio alone is embedded for it. */
  channelOf?: ReadonlyMap<string, number>;
  maxAudioSeconds: number;
  signal?: AbortSignal;
}

export async function nameSpeakers(transcript: Transcript, naming: SpeakerNaming): Promise<Transcript> {
  const options = { maxAudioSeconds: naming.maxAudioSeconds, ...(naming.signal ? { signal: naming.signal } : {}) };
  const speech = new Map<string, Float32Array>();
  if (naming.channelOf) {
    for (const channel of new Set(naming.channelOf.values())) {
      const turns = naming.turns.filter((t) => naming.channelOf!.get(t.speaker) === channel);
      for (const [speaker, samples] of await speechOfSpeakers(naming.path, speechToEmbed(turns), { ...options, channel }))
        speech.set(speaker, samples);
    }
  } else {
    for (const [speaker, samples] of await speechOfSpeakers(naming.path, speechToEmbed(naming.turns), options))
      speech.set(speaker, samples);
  }
  const embeddings = await embedSpeakers(naming.encoder, speech, naming.signal);
  // Telephone speech is compared with the known voices through the same line, at that line's threshold (issue 35).
  const channel = channelOf(speech);
  // Matched by position: a reference sent with the request has no id.
  const known = [];
  for (const [i, k] of naming.known.entries()) known.push({ voiceId: String(i), embedding: await k.embedding(channel) });
  const matches = matchSpeakers(embeddings, known, matchSimilarityOf[channel]);
  const knownOf = (speaker: string | null): KnownSpeaker | undefined => {
    const index = speaker === null ? undefined : matches.get(speaker)?.voiceId;
    return index === undefined ? undefined : naming.known[Number(index)];
  };
  const named = (speaker: string | null) => {
    const known = knownOf(speaker);
    return { speaker_name: known?.name ?? null, voice_id: known?.voiceId ?? null };
  };
  return {
    ...transcript,
    segments: transcript.segments.map((s) => ({ ...s, ...named(s.speaker), words: s.words.map((w) => ({ ...w, ...named(w.speaker) })) })),
    speakers: transcript.speakers.map((s) => {
      const similarity = matches.get(s.id)?.similarity;
      return { ...s, ...named(s.id), voice_similarity: similarity === undefined ? null : Math.round(similarity * 1000) / 1000 };
    }),
  };
}

/** A known speaker reference as OpenAI takes them: `data:<media type>;base64,<audio>`. */
const dataUrl = /^data:[^,;]*(?:;[^,;]*)*;base64,/i;
const minReferenceSeconds = 1;
const maxReferenceSeconds = 30;

/** The audio of known_speaker_references[index]; not a base64 data URL -> 400. */
export function referenceAudio(value: string, index: number): Buffer {
  const prefix = dataUrl.exec(value);
  const bytes = prefix ? Buffer.from(value.slice(prefix[0].length), 'base64') : Buffer.alloc(0);
  if (bytes.length === 0)
    throw new VoxError(
      'invalid_request',
      `known_speaker_references[${index}] is not a base64 data URL of audio (data:audio/wav;base64,...).`,
      {
        param: 'known_speaker_references',
      },
    );
  return bytes;
}

/**
 * The CAM++ embedding of each known speaker reference (known_speaker_references, paired with known_speaker_names by
 * position), decoded from its data URL through a scratch file that is removed at once: nothing is stored.
 */
export async function embedReferences(
  references: Array<{ name: string; dataUrl: string }>,
  options: { encoder: CamppEncoder; scratchPath: () => string; signal?: AbortSignal },
): Promise<KnownSpeaker[]> {
  const param = 'known_speaker_references';
  const known: KnownSpeaker[] = [];
  for (const [index, reference] of references.entries()) {
    const bytes = referenceAudio(reference.dataUrl, index);
    const path = options.scratchPath();
    try {
      await writeFile(path, bytes);
      // Not decodeFile: its probe would name the upload field in a 415.
      const blocks: Float32Array[] = [];
      for await (const block of decodeBlocks(path, {
        sampleRate: camppSampleRate,
        channels: 1,
        blockFrames: 10 * camppSampleRate,
        maxSeconds: maxReferenceSeconds,
        limitName: 'the longest known speaker reference',
        param,
        ...(options.signal ? { signal: options.signal } : {}),
      }))
        blocks.push(block);
      const waveform = { samples: concatSamples(blocks), sampleRate: camppSampleRate, channels: 1 };
      if (waveform.samples.length < minReferenceSeconds * camppSampleRate)
        throw new VoxError(
          'invalid_request',
          `known_speaker_references[${index}] lasts under ${minReferenceSeconds} s: too little of the voice to recognise it.`,
          { param },
        );
      const { encoder, signal } = options;
      const wideband = await encoder.embedSpeaker([waveform], signal);
      let narrowband: Promise<Float32Array> | undefined;
      known.push({
        name: reference.name,
        voiceId: null,
        embedding: async (channel) =>
          channel === 'wideband'
            ? wideband
            : (narrowband ??= telephoneBand(waveform, signal).then((line) => encoder.embedSpeaker([line], signal))),
      });
    } finally {
      await rm(path, { force: true });
    }
  }
  return known;
}
