/**
 * Voice profiles, shaped like ElevenLabs' voices API: cloned profiles made from reference clips (with consent),
 * plus the engines' built-in voices. Everything derived from a speaker lives under the profile's blob prefix,
 * so deleting a profile leaves nothing of the speaker behind.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { decodeFile } from '../audio/decode.js';
import { encodeWaveform } from '../audio/encode.js';
import { admitAudio } from '../audio/input.js';
import { clippedFraction, normalizeSpeech } from '../audio/loudness.js';
import { speechSegments, type SileroVad } from '../audio/vad.js';
import { concatSamples, durationSeconds, float32Bytes, float32FromBytes, rmsDb, type Waveform } from '../audio/waveform.js';
import { mayAccess } from '../auth/api-keys.js';
import { VoxError } from '../core/errors.js';
import type { InputFile, OperationContext, OperationResult } from '../core/operation-context.js';
import type { CamppEncoder } from '../speakers/campplus.js';
import type { SpeechChannel } from '../speakers/identification.js';
import { telephoneBand } from '../audio/bandwidth.js';
import { embeddingSampleRate, type SpeakerEncoder } from '../speakers/embedding.js';
import type { Scratch, Store } from '../storage/store.js';
import type { ApiKeyRecord, VoicePurpose, VoiceRecord } from '../core/records.js';
import type { BuiltinAnalysisStore, Derived } from './builtin-store.js';
import { blendingEngine, isBlendId, parseBlend } from './blend.js';
import type { CreateVoiceFields, PatchVoiceFields } from './contract.js';

export const referenceSampleRate = 16000;
const minReferenceSeconds = 3;
const maxReferenceSeconds = 600;
/**
 * Audio decoded per voice request, over all its clips: the 600 s of speech a profile keeps plus room for the pauses VAD
 * trims, so an upload cannot make the service decode hours to build a 10-minute profile.
 */
const maxReferenceAudioSeconds = 900;
const referenceAudioLimitName = `${maxReferenceAudioSeconds} s of reference audio per voice, over all files`;
/** Blob prefix under which every cloned profile has its own (`voices/<voice_id>`). */
const profilesPrefix = 'voices';

export interface VoiceProfile {
  voice_id: string;
  name: string;
  /** `blend`: a weighted mix of Kokoro voices, written as an id (`af_bella*0.6+am_adam*0.4`) or stored by name. */
  type: 'builtin' | 'cloned' | 'blend';
  languages: string[];
  gender_estimate: 'female' | 'male' | null;
  created_at: string | null;
  description: string;
  labels: Record<string, string>;
  reference_seconds: number;
  engine: string;
  purpose: VoicePurpose;
  /** A blend's voices (built-in or cloned, stored blends expanded), weights summing to 1. */
  blend?: BlendVoice[];
}

export interface BlendVoice {
  voice_id: string;
  weight: number;
}

/** Something computed once from a new profile's processed clips (speaker embedding, engine statistics). */
export interface VoiceAnalyzer {
  name: string;
  /**
   * `previous`: the analyses of the analyzers before this one, by name (e.g. `speaker` for the embedding).
   * Throws VoxError('unsupported_value') to reject the clips (e.g. several speakers).
   */
  analyse(
    clips: Waveform[],
    signal: AbortSignal,
    previous: Record<string, unknown>,
  ): Promise<{ analysis: Record<string, unknown>; files?: Record<string, Uint8Array> }>;
}

export interface BuiltinVoiceSource {
  builtinVoices(): Promise<VoiceProfile[]>;
  /**
   * Speech in one of these built-in voices (16 kHz mono, speech only), standing in for a cloned profile's reference
   * clips wherever a voice is analysed (its speaker embedding; what an engine needs of it as a voice-conversion target).
   */
  referenceSpeech(voiceId: string, options?: ReferenceSpeechOptions): Promise<Waveform>;
}

export interface ReferenceSpeechOptions {
  signal?: AbortSignal;
  /** Many voices are analysed and nobody waits on one of them: throughput over latency (SynthesisRequest.background). */
  background?: boolean;
}

type DeriveFunction = (clips: Waveform[]) => Promise<{ analysis: Record<string, unknown>; files: Record<string, Uint8Array> }>;

/**
 * Derived data made with a speaking profile instead of on its first use (what its first speech or conversion would
 * otherwise wait for): kept as `derived` keeps it, under `name`.
 */
export interface DerivedAtCreation {
  name: () => Promise<string>;
  compute: (clips: Waveform[], signal: AbortSignal) => ReturnType<DeriveFunction>;
}

function parseLabels(text: string | undefined): Record<string, string> {
  if (text === undefined || text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new VoxError('invalid_request', "'labels' must be a JSON object of strings.", { param: 'labels' });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || Object.values(parsed).some((v) => typeof v !== 'string')) {
    throw new VoxError('invalid_request', "'labels' must be a JSON object of strings.", { param: 'labels' });
  }
  return parsed as Record<string, string>;
}

/** The same answer for a voice that does not exist and for another key's voice: ids reveal nothing. */
function voiceNotFound(voiceId: string, param = 'voice_id'): VoxError {
  return new VoxError('not_found', `No voice '${voiceId}'. List voices with GET /v1/voices.`, { param });
}

/** A stored blend's voices (kept in its record's analysis: a blend has no clips to derive anything else from). */
const storedBlend = (record: VoiceRecord): BlendVoice[] | undefined => record.analysis.voice_blend as BlendVoice[] | undefined;

/** What needs a recording of the voice (a conversion target's statistics) cannot be made of a blend. */
const blendHasNoRecording = (voiceId: string): VoxError =>
  new VoxError('unsupported_value', `'${voiceId}' is a blended voice: it has no recording to analyse; use one of its voices.`, {
    param: 'voice_id',
  });

function embeddingOf(
  speakerAnalysis: unknown,
  key: 'embedding' | 'campplus_embedding' | 'campplus_narrowband_embedding' = 'embedding',
): Float32Array | undefined {
  const embedding = (speakerAnalysis as Partial<Record<typeof key, number[]>> | undefined)?.[key];
  return embedding ? Float32Array.from(embedding) : undefined;
}

/** Embeddings are kept to six decimals: JSON of a fraction of the size, far below what similarities resolve. */
export const storedEmbedding = (embedding: Float32Array): number[] => Array.from(embedding, (v) => Math.round(v * 1e6) / 1e6);

export class VoiceService {
  constructor(
    private readonly deps: {
      store: Store;
      scratch: Scratch;
      vad: () => Promise<SileroVad>;
      analyzers: VoiceAnalyzer[];
      derivedAtCreation: DerivedAtCreation[];
      builtins: BuiltinVoiceSource[];
      speakerEncoder: () => Promise<SpeakerEncoder>;
      /** CAM++: the embeddings that name diarized speakers. */
      campplus: () => Promise<CamppEncoder>;
      /** Where built-in voices' analyses are kept (beside the models). */
      builtinStore: BuiltinAnalysisStore;
      maxAudioSeconds: number;
    },
  ) {}

  /** Analyses of built-in voices this process computed instead of reading them from the store. */
  get builtinAnalysesComputed(): number {
    return this.deps.builtinStore.computed;
  }

  toProfile(record: VoiceRecord): VoiceProfile {
    const blend = storedBlend(record);
    return {
      voice_id: record.id,
      name: record.name,
      type: blend ? 'blend' : 'cloned',
      languages: record.languages,
      gender_estimate: record.genderEstimate,
      created_at: record.createdAt,
      description: record.description,
      labels: record.labels,
      reference_seconds: Math.round(record.referenceSeconds * 100) / 100,
      engine: record.engine,
      purpose: record.purpose,
      ...(blend ? { blend } : {}),
    };
  }

  private async builtinVoices(): Promise<VoiceProfile[]> {
    return (await Promise.all(this.deps.builtins.map((b) => b.builtinVoices()))).flat();
  }

  /** Built-in voices and the cloned voices the caller may use (its own; every one for an admin key). */
  async list(filter: { language?: string; type?: VoiceProfile['type'] }, caller: ApiKeyRecord): Promise<OperationResult> {
    const builtin = await this.builtinVoices();
    const cloned = (await this.deps.store.voices.list()).filter((r) => mayAccess(caller, r.ownerKeyId)).map((r) => this.toProfile(r));
    const language = filter.language?.toLowerCase();
    const voices = [...builtin, ...cloned].filter(
      (v) =>
        (!filter.type || v.type === filter.type) &&
        (!language || v.languages.some((l) => l.toLowerCase() === language || l.toLowerCase().startsWith(`${language}-`))),
    );
    return { kind: 'json', body: { voices } };
  }

  /**
   * A cloned profile's record if the caller may use it (its owner or an admin key), else 404: every lookup of a cloned
   * voice by id goes through here.
   */
  async record(voiceId: string, caller: ApiKeyRecord, param = 'voice_id'): Promise<VoiceRecord> {
    const record = await this.deps.store.voices.get(voiceId);
    if (!record || !mayAccess(caller, record.ownerKeyId)) throw voiceNotFound(voiceId, param);
    return record;
  }

  /** A built-in voice (any caller), a cloned or stored blend one the caller may use, or a blend written as an id. */
  async profile(voiceId: string, caller: ApiKeyRecord, param = 'voice_id'): Promise<VoiceProfile> {
    if (isBlendId(voiceId)) return this.blendProfile(voiceId, caller, param);
    const builtin = (await this.builtinVoices()).find((v) => v.voice_id === voiceId);
    return builtin ?? this.toProfile(await this.record(voiceId, caller, param));
  }

  /**
   * A blend written as an id, its voices checked: each a Kokoro built-in voice (400 for another engine's), a cloned voice
   * the caller may use (404 otherwise, as any lookup; 422 for one made to identify only), or a stored blend (expanded into
   * its voices). It speaks the first voice's first language unless the request names one (as Kokoro-FastAPI takes the
   * first voice's language); its gender is the voices' when they agree.
   */
  async blendProfile(written: string, caller: ApiKeyRecord, param = 'voice_id'): Promise<VoiceProfile> {
    const builtins = await this.builtinVoices();
    const voices = new Map<string, number>();
    const profiles: VoiceProfile[] = [];
    for (const part of parseBlend(written, param)) {
      const builtin = builtins.find((v) => v.voice_id === part.voiceId);
      const profile = builtin ?? this.toProfile(await this.record(part.voiceId, caller, param));
      if (profile.type === 'builtin' && profile.engine !== blendingEngine) {
        throw new VoxError(
          'invalid_request',
          `Blend part '${part.voiceId}' is a voice of ${profile.engine}: only Kokoro voices (and cloned voices, spoken with Kokoro) blend.`,
          { param },
        );
      }
      if (profile.purpose === 'identify') {
        throw new VoxError(
          'unsupported_value',
          `Blend part '${part.voiceId}' was created to name speakers (purpose=identify), not to speak in.`,
          {
            param,
          },
        );
      }
      profiles.push(profile);
      for (const voice of profile.blend ?? [{ voice_id: profile.voice_id, weight: 1 }])
        voices.set(voice.voice_id, (voices.get(voice.voice_id) ?? 0) + voice.weight * part.weight);
    }
    const genders = new Set(profiles.map((p) => p.gender_estimate));
    return {
      voice_id: written,
      name: written,
      type: 'blend',
      languages: profiles[0]!.languages.slice(0, 1),
      gender_estimate: genders.size === 1 ? profiles[0]!.gender_estimate : null,
      created_at: null,
      description: 'A weighted mix of Kokoro voices',
      labels: {},
      reference_seconds: 0,
      engine: blendingEngine,
      purpose: 'speech',
      blend: [...voices].map(([voice_id, weight]) => ({ voice_id, weight: Math.round(weight * 1e6) / 1e6 })),
    };
  }

  /** A voice to speak in (TTS, or a conversion target): a profile made for identification only is refused (422). */
  async speechProfile(voiceId: string, caller: ApiKeyRecord, param = 'voice_id'): Promise<VoiceProfile> {
    const profile = await this.profile(voiceId, caller, param);
    if (profile.purpose === 'identify') {
      throw new VoxError(
        'unsupported_value',
        `Voice '${voiceId}' was created to name speakers in transcripts (purpose=identify), not to speak in: use it in ` +
          `speaker_voice_ids, or create a voice with purpose=speech.`,
        { param },
      );
    }
    return profile;
  }

  /**
   * The profiles that may name the speakers of a transcript, checked before any work: cloned profiles the caller may use
   * (404 otherwise, as for any voice lookup); built-in voices have no recording of a person to match (422).
   */
  async identificationProfiles(voiceIds: string[], caller: ApiKeyRecord): Promise<VoiceRecord[]> {
    const builtin = new Set((await this.builtinVoices()).map((v) => v.voice_id));
    const records: VoiceRecord[] = [];
    for (const voiceId of voiceIds) {
      if (builtin.has(voiceId)) {
        throw new VoxError(
          'unsupported_value',
          `'${voiceId}' is a built-in voice: it has no reference recording of a person to recognise. List cloned voices in ` +
            `speaker_voice_ids.`,
          { param: 'speaker_voice_ids' },
        );
      }
      const record = await this.record(voiceId, caller, 'speaker_voice_ids');
      if (storedBlend(record)) {
        throw new VoxError('unsupported_value', `'${voiceId}' is a blended voice: it has no recording of a person to recognise.`, {
          param: 'speaker_voice_ids',
        });
      }
      records.push(record);
    }
    return records;
  }

  /**
   * A cloned profile's CAM++ embedding: made at creation; a profile made before CAM++ gets it from its reference clips
   * on first use, stored with its other speaker analysis. The narrowband one (its clips through a telephone line, to
   * name speakers of phone-band audio) is made on its first use and stored too: one CAM++ pass over the clips once,
   * rather than on every call that needs it.
   */
  async identificationEmbedding(record: VoiceRecord, signal?: AbortSignal, channel: SpeechChannel = 'wideband'): Promise<Float32Array> {
    const key = channel === 'wideband' ? 'campplus_embedding' : 'campplus_narrowband_embedding';
    const stored = embeddingOf(record.analysis.speaker, key);
    if (stored) return stored;
    let clips = await this.referenceClips(record, signal);
    if (channel === 'narrowband') {
      const line = [];
      for (const clip of clips) line.push(await telephoneBand(clip, signal));
      clips = line;
    }
    const embedding = await (await this.deps.campplus()).embedSpeaker(clips, signal);
    const current = (await this.deps.store.voices.get(record.id)) ?? record;
    await this.deps.store.voices.update(record.id, {
      analysis: {
        ...current.analysis,
        speaker: { ...(current.analysis.speaker as Record<string, unknown> | undefined), [key]: storedEmbedding(embedding) },
      },
    });
    return embedding;
  }

  async get(voiceId: string, caller: ApiKeyRecord): Promise<OperationResult> {
    return { kind: 'json', body: await this.profile(voiceId, caller) };
  }

  async create(fields: CreateVoiceFields, context: OperationContext): Promise<OperationResult> {
    if (fields.blend !== undefined) return this.createBlend(fields.blend, fields, context);
    if (fields.consent !== true) {
      const use = fields.purpose === 'identify' ? 'recognised in recordings' : 'cloned';
      throw new VoxError('invalid_request', `'consent' must be true: confirm that the speaker agreed to having their voice ${use}.`, {
        param: 'consent',
      });
    }
    const name = fields.name.trim();
    if (name.length === 0) throw new VoxError('invalid_request', "'name' must not be empty.", { param: 'name' });
    const labels = parseLabels(fields.labels);
    const uploads: InputFile[] = context.inputs.get('files') ?? [];
    if (uploads.length === 0)
      throw new VoxError('invalid_request', "'files' is required: one or more reference clips as multipart files.", { param: 'files' });

    const clips: Waveform[] = [];
    let decodedSeconds = 0;
    for (const upload of uploads) {
      const leftSeconds = maxReferenceAudioSeconds - decodedSeconds;
      const limits =
        leftSeconds < this.deps.maxAudioSeconds
          ? { maxAudioSeconds: leftSeconds, limitName: referenceAudioLimitName }
          : { maxAudioSeconds: this.deps.maxAudioSeconds };
      await admitAudio(upload, limits, context.signal);
      const decoded = await decodeFile(upload.path, {
        sampleRate: referenceSampleRate,
        channels: 1,
        maxSeconds: limits.maxAudioSeconds,
        limitName: limits.limitName,
        param: 'files',
        signal: context.signal,
      });
      decodedSeconds += durationSeconds(decoded);
      clips.push(await this.prepareClip(decoded, upload.filename, context.signal));
    }
    const referenceSeconds = clips.reduce((sum, c) => sum + c.samples.length / referenceSampleRate, 0);
    if (referenceSeconds < minReferenceSeconds) {
      throw new VoxError(
        'unsupported_value',
        `The clips hold ${referenceSeconds.toFixed(1)} s of speech; at least ${minReferenceSeconds} s are needed.`,
        { param: 'files' },
      );
    }
    if (referenceSeconds > maxReferenceSeconds) {
      throw new VoxError(
        'unsupported_value',
        `The clips hold ${Math.round(referenceSeconds)} s of speech; at most ${maxReferenceSeconds} s (10 minutes) are used for a profile.`,
        { param: 'files' },
      );
    }

    const id = `voice_${randomUUID().replaceAll('-', '').slice(0, 20)}`;
    const blobPrefix = `${profilesPrefix}/${id}`;
    const analysis: Record<string, unknown> = {};
    // Crash safety (kill -9 at any point): the files are made in a scratch directory (wiped at start), moved under the
    // profile's prefix in one step, and only then is the record inserted. A crash before the move leaves scratch files;
    // one between the move and the insert leaves a prefix without a record, which removeOrphans deletes at the next start.
    // So a record never points at missing files, and files without a record do not outlive a restart.
    const staging = this.deps.scratch.path('-voice');
    try {
      await mkdir(staging);
      for (const [index, clip] of clips.entries()) {
        await writeFile(path.join(staging, `reference-${index + 1}.flac`), await encodeWaveform(clip, { format: 'flac' }));
      }
      for (const analyzer of this.deps.analyzers) {
        const result = await analyzer.analyse(clips, context.signal, analysis);
        analysis[analyzer.name] = result.analysis;
        for (const [file, bytes] of Object.entries(result.files ?? {}))
          await writeFile(path.join(staging, `${analyzer.name}-${file}`), bytes);
      }
      // A profile made only to name speakers never speaks: nothing more to prepare. What cannot be made now (e.g. no
      // conversion engine) is made on first use instead, where its failure is the request's.
      if (fields.purpose !== 'identify') {
        for (const derived of this.deps.derivedAtCreation) {
          try {
            const [name, computed] = await Promise.all([derived.name(), derived.compute(clips, context.signal)]);
            analysis[name] = { analysis: computed.analysis, files: Object.keys(computed.files) };
            for (const [file, bytes] of Object.entries(computed.files)) await writeFile(path.join(staging, `${name}-${file}`), bytes);
          } catch (error) {
            context.signal.throwIfAborted();
            context.log.warn({ err: error }, 'voice analysis left for first use');
          }
        }
      }
      const record: VoiceRecord = {
        id,
        ownerKeyId: context.apiKey.id,
        name,
        languages: fields.language ? [fields.language] : [],
        genderEstimate: (analysis.gender as { estimate?: 'female' | 'male' } | undefined)?.estimate ?? null,
        description: fields.description ?? '',
        labels,
        referenceSeconds,
        engine: 'clone',
        createdAt: new Date().toISOString(),
        blobPrefix,
        analysis,
        purpose: fields.purpose ?? 'speech',
      };
      await this.deps.store.blobs.putDirectory(blobPrefix, staging);
      await this.deps.store.voices.insert(record);
      return { kind: 'json', status: 201, body: this.toProfile(record) };
    } catch (error) {
      // Nothing half-made stays behind: no record was written, so the files go too.
      await rm(staging, { recursive: true, force: true });
      await this.deps.store.blobs.delete(blobPrefix);
      throw error;
    }
  }

  /**
   * A blend stored under a name: its voices are checked as a blend id's are and kept (stored blends among them expanded);
   * no recording is involved, so no consent is asked (a cloned voice in it had its own). A cloned voice it names that is
   * deleted later makes its speech a 404 naming that voice.
   */
  private async createBlend(written: string, fields: CreateVoiceFields, context: OperationContext): Promise<OperationResult> {
    if ((context.inputs.get('files') ?? []).length > 0)
      throw new VoxError('invalid_request', "Give either 'files' (to clone a voice) or 'blend' (to mix voices), not both.", {
        param: 'blend',
      });
    if (fields.purpose === 'identify')
      throw new VoxError('invalid_request', 'A blend has no recording of a person to recognise: purpose=identify needs files.', {
        param: 'purpose',
      });
    const name = fields.name.trim();
    if (name.length === 0) throw new VoxError('invalid_request', "'name' must not be empty.", { param: 'name' });
    const labels = parseLabels(fields.labels);
    const blend = await this.blendProfile(written.trim(), context.apiKey, 'blend');
    await this.refuseUnblendableLanguage(fields.language ?? blend.languages[0], fields.language ? 'language' : 'blend');
    const id = `voice_${randomUUID().replaceAll('-', '').slice(0, 20)}`;
    const record: VoiceRecord = {
      id,
      ownerKeyId: context.apiKey.id,
      name,
      languages: fields.language ? [fields.language] : blend.languages,
      genderEstimate: blend.gender_estimate,
      description: fields.description ?? '',
      labels,
      referenceSeconds: 0,
      engine: blendingEngine,
      createdAt: new Date().toISOString(),
      blobPrefix: `${profilesPrefix}/${id}`,
      analysis: { voice_blend: blend.blend },
      purpose: 'speech',
    };
    await this.deps.store.voices.insert(record);
    return { kind: 'json', status: 201, body: this.toProfile(record) };
  }

  /**
   * A stored blend speaks its language by default: one the blending engine has no voices for (a cloned voice of such a
   * language first in the blend) is refused when the blend is stored, not at each use. The engine's voices say what it
   * speaks ('en' and 'pt' as its 'en-us' and 'pt-br'); without them (not installed) the speech says so instead.
   */
  private async refuseUnblendableLanguage(language: string | undefined, param: 'language' | 'blend'): Promise<void> {
    const spoken = [...new Set((await this.builtinVoices()).filter((v) => v.engine === blendingEngine).flatMap((v) => v.languages))].sort();
    const tag = language?.trim().toLowerCase().replace(/_/g, '-');
    if (!tag || spoken.length === 0 || spoken.some((l) => l === tag || l.startsWith(`${tag}-`))) return;
    throw new VoxError(
      'unsupported_value',
      `A blend speaks with ${blendingEngine}, which has no voices for '${language}' (${param === 'language' ? "the 'language' given" : "the blend's language: its first voice's"}). ` +
        `Give a 'language' it speaks (${spoken.join(', ')}); a cloned voice then enters as its mix of that language's voices.`,
      { param },
    );
  }

  async update(voiceId: string, changes: PatchVoiceFields, caller: ApiKeyRecord): Promise<OperationResult> {
    await this.rejectBuiltin(voiceId);
    await this.record(voiceId, caller);
    if (changes.name !== undefined && changes.name.trim() === '')
      throw new VoxError('invalid_request', "'name' must not be empty.", { param: 'name' });
    const updated = await this.deps.store.voices.update(voiceId, {
      ...(changes.name !== undefined ? { name: changes.name.trim() } : {}),
      ...(changes.description !== undefined ? { description: changes.description } : {}),
      ...(changes.labels !== undefined ? { labels: changes.labels } : {}),
    });
    // Deleted since the lookup above.
    if (!updated) throw voiceNotFound(voiceId);
    return { kind: 'json', body: this.toProfile(updated) };
  }

  async delete(voiceId: string, caller: ApiKeyRecord): Promise<OperationResult> {
    await this.rejectBuiltin(voiceId);
    const record = await this.record(voiceId, caller);
    // The record first, so it never points at missing files: a crash before the files are gone leaves files without a
    // record, which removeOrphans deletes at the next start.
    await this.deps.store.voices.delete(voiceId);
    await this.deps.store.blobs.delete(record.blobPrefix);
    return { kind: 'json', body: { voice_id: voiceId, deleted: true } };
  }

  /**
   * Deletes the profile prefixes no record points at: what a crash during creation or deletion leaves behind (or derived
   * files written while the profile was being deleted). Runs at start, before requests: a creation under way looks the
   * same between its move and its insert.
   */
  async removeOrphans(): Promise<string[]> {
    const referenced = new Set((await this.deps.store.voices.list()).map((r) => r.blobPrefix));
    const orphans = (await this.deps.store.blobs.list(profilesPrefix))
      .map((name) => `${profilesPrefix}/${name}`)
      .filter((prefix) => !referenced.has(prefix));
    for (const prefix of orphans) await this.deps.store.blobs.delete(prefix);
    return orphans;
  }

  /** Reference clips of a cloned profile (16 kHz mono, speech only, normalised). */
  async referenceClips(record: VoiceRecord, signal?: AbortSignal): Promise<Waveform[]> {
    const clips: Waveform[] = [];
    for (let index = 1; await this.deps.store.blobs.exists(`${record.blobPrefix}/reference-${index}.flac`); index++) {
      const clip = await this.deps.store.blobs.localFile(`${record.blobPrefix}/reference-${index}.flac`, this.deps.scratch);
      try {
        clips.push(await decodeFile(clip.path, { sampleRate: referenceSampleRate, channels: 1, maxSeconds: maxReferenceSeconds, signal }));
      } finally {
        await clip.release();
      }
    }
    return clips;
  }

  /**
   * Derived data of a profile computed on first use (e.g. an engine's statistics of the speaker) and kept: for a cloned
   * profile, JSON in its record and arrays as blobs under its prefix (so deleting the profile removes them); for a
   * built-in voice, in the built-in analysis store beside the models, computed from speech synthesised in that voice
   * (normally already there: prepared at pull time or at start). Files are written before the record names them: a crash
   * in between leaves files nothing refers to, which the next use computes and writes again.
   */
  async derived(voiceId: string, caller: ApiKeyRecord, name: string, compute: DeriveFunction, signal?: AbortSignal): Promise<Derived> {
    const source = await this.builtinSourceOf(voiceId);
    if (source) return this.derivedBuiltin(voiceId, source, name, compute, signal);
    if (isBlendId(voiceId)) throw blendHasNoRecording(voiceId);
    const record = await this.record(voiceId, caller);
    if (storedBlend(record)) throw blendHasNoRecording(voiceId);
    const stored = record.analysis[name] as { analysis: Record<string, unknown>; files: string[] } | undefined;
    if (stored) {
      const files: Record<string, Buffer> = {};
      for (const file of stored.files) files[file] = await this.deps.store.blobs.readBytes(`${record.blobPrefix}/${name}-${file}`);
      return { analysis: stored.analysis, files };
    }
    const computed = await compute(await this.referenceClips(record, signal));
    for (const [file, bytes] of Object.entries(computed.files))
      await this.deps.store.blobs.putBytes(`${record.blobPrefix}/${name}-${file}`, bytes);
    await this.deps.store.voices.update(record.id, {
      analysis: { ...record.analysis, [name]: { analysis: computed.analysis, files: Object.keys(computed.files) } },
    });
    return { analysis: computed.analysis, files: Object.fromEntries(Object.entries(computed.files).map(([k, v]) => [k, Buffer.from(v)])) };
  }

  /**
   * The speaker embedding of any voice: made at creation for a cloned profile; for a built-in voice, the mean GE2E
   * embedding of its reference speech, computed once and kept.
   */
  async speakerEmbedding(voiceId: string, caller: ApiKeyRecord, options: ReferenceSpeechOptions = {}): Promise<Float32Array | undefined> {
    const source = await this.builtinSourceOf(voiceId);
    if (!source) return embeddingOf((await this.record(voiceId, caller)).analysis.speaker);
    return this.builtinSpeakerEmbedding(voiceId, source, options);
  }

  /**
   * The speaker embeddings of the given built-in voices whose gender is known, as far as they are prepared (read only: a
   * request never waits for their computation).
   */
  async builtinEmbeddings(
    voiceIds: readonly string[],
  ): Promise<Array<{ voiceId: string; gender: 'female' | 'male'; embedding: Float32Array }>> {
    const found: Array<{ voiceId: string; gender: 'female' | 'male'; embedding: Float32Array }> = [];
    for (const voice of await this.builtinVoices()) {
      if (!voiceIds.includes(voice.voice_id) || !voice.gender_estimate) continue;
      const embedding = embeddingOf((await this.deps.builtinStore.read(voice.voice_id, 'speaker'))?.analysis);
      if (embedding) found.push({ voiceId: voice.voice_id, gender: voice.gender_estimate, embedding });
    }
    return found;
  }

  private async builtinSpeakerEmbedding(
    voiceId: string,
    source: BuiltinVoiceSource,
    options: ReferenceSpeechOptions,
  ): Promise<Float32Array | undefined> {
    return embeddingOf((await this.builtinSpeakerAnalysis(voiceId, source, options)).analysis);
  }

  /**
   * A built-in voice's speaker analysis: its embedding, and the reference speech it came from, kept with it so that the
   * voice's later analyses (an engine's statistics on first use as a conversion target) need no synthesis.
   */
  private async builtinSpeakerAnalysis(voiceId: string, source: BuiltinVoiceSource, options: ReferenceSpeechOptions): Promise<Derived> {
    const stored = await this.deps.builtinStore.read(voiceId, 'speaker');
    if (stored?.files.speech) return stored;
    const speech = await source.referenceSpeech(voiceId, options);
    const embedding = await (await this.deps.speakerEncoder()).embedUtterance(speech, options.signal);
    return this.deps.builtinStore.write(voiceId, 'speaker', {
      analysis: { embedding: storedEmbedding(embedding) },
      files: { speech: float32Bytes(speech.samples) },
    });
  }

  private async builtinSourceOf(voiceId: string): Promise<BuiltinVoiceSource | undefined> {
    for (const source of this.deps.builtins) if ((await source.builtinVoices()).some((v) => v.voice_id === voiceId)) return source;
    return undefined;
  }

  private async derivedBuiltin(
    voiceId: string,
    source: BuiltinVoiceSource,
    name: string,
    compute: DeriveFunction,
    signal?: AbortSignal,
  ): Promise<Derived> {
    const stored = await this.deps.builtinStore.read(voiceId, name);
    if (stored) return stored;
    const { files } = await this.builtinSpeakerAnalysis(voiceId, source, signal ? { signal } : {});
    const speech: Waveform = { samples: float32FromBytes(files.speech!), sampleRate: embeddingSampleRate, channels: 1 };
    return this.deps.builtinStore.write(voiceId, name, await compute([speech]));
  }

  private async rejectBuiltin(voiceId: string): Promise<void> {
    if ((await this.builtinVoices()).some((v) => v.voice_id === voiceId)) {
      throw new VoxError('invalid_request', `'${voiceId}' is a built-in voice; only cloned voices can be changed or deleted.`, {
        param: 'voice_id',
      });
    }
  }

  /** Speech only (VAD), checked for silence and clipping, loudness-normalised. */
  private async prepareClip(clip: Waveform, filename: string, signal: AbortSignal): Promise<Waveform> {
    const vad = await this.deps.vad();
    const totalSeconds = clip.samples.length / referenceSampleRate;
    const segments = speechSegments(await vad.probabilities(clip.samples, signal), totalSeconds, {
      padBeforeSeconds: 0.1,
      padAfterSeconds: 0.1,
    });
    // No speech first: a tone or a DC offset sits at its peak often enough to look clipped.
    if (segments.length === 0 || rmsDb(clip.samples) < -60) {
      throw new VoxError('unsupported_value', `'${filename}' contains no speech.`, { param: 'files' });
    }
    if (clippedFraction(clip.samples) > 0.001) {
      throw new VoxError(
        'unsupported_value',
        `'${filename}' is clipped (${(clippedFraction(clip.samples) * 100).toFixed(2)}% of samples at full scale): record at a lower ` +
          `level.`,
        { param: 'files' },
      );
    }
    const pieces = segments.map((s) =>
      clip.samples.subarray(Math.floor(s.startSeconds * referenceSampleRate), Math.ceil(s.endSeconds * referenceSampleRate)),
    );
    return { samples: normalizeSpeech(concatSamples(pieces)), sampleRate: referenceSampleRate, channels: 1 };
  }
}
