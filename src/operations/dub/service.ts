/**
 * POST /v1/dubbing: a recording re-voiced, into English or in its own language, over its own music and effects. Joins
 * the other operations: separation (dialogue and the rest), diarized transcription (Whisper translating into English),
 * a voice per speaker (cloned from their own speech, or named), speech per line, fitted to the line's time and loudness.
 */
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { decodeFile } from '../../audio/decode.js';
import { contentTypes, encodeWaveformToFile, outputSampleRate, type AudioFormat } from '../../audio/encode.js';
import { admitAudio, uploadedFile, type AudioLimits } from '../../audio/input.js';
import { activeRmsDb } from '../../audio/loudness.js';
import { resample } from '../../audio/resample.js';
import { applyGainDb } from '../../audio/shaping.js';
import { trimEdgeSilence } from '../../audio/silence.js';
import { changeTempo } from '../../audio/tempo.js';
import { speechSegments, vadSampleRate, type SileroVad, type SpeechSegment } from '../../audio/vad.js';
import { probeVideo, remuxTarget, replaceAudio } from '../../audio/video.js';
import { concatSamples, type Waveform } from '../../audio/waveform.js';
import { unsupportedValue, VoxError } from '../../core/errors.js';
import type { InputFile, OperationContext, OperationResult, Progress } from '../../core/operation-context.js';
import type { ApiKeyRecord } from '../../core/records.js';
import type { FileService } from '../../files/service.js';
import type { VoiceService } from '../../voices/service.js';
import type { SeparationService } from '../separate/service.js';
import type { SynthesisService } from '../synthesize/service.js';
import { toSrt, toVtt, type TranscriptSegment } from '../transcribe/formats.js';
import { baseLanguage, whisperLanguages } from '../transcribe/languages.js';
import type { TranscriptionService } from '../transcribe/service.js';
import type { DubFields } from './contract.js';

export interface DubbingDependencies {
  limits: AudioLimits;
  files: FileService;
  voices: VoiceService;
  separation: SeparationService;
  transcription: TranscriptionService;
  synthesis: SynthesisService;
  /** Finds where each source line's speech starts in the dialogue stem. */
  vad: () => Promise<SileroVad>;
  /** A fresh path in the server's temp area (cleared at start), for a dub's intermediate files. */
  scratchPath: () => string;
}

/** What a dub runs through: a node running dubs loads the models of these (voices: the speaker encoders of cloning). */
export const dubbingUses = ['separate', 'transcribe', 'tts', 'vc', 'voices'] as const;
/** The fastest a dubbed line is spoken to fit the time of its source line. */
export const maxTempo = 1.25;
/** A cloned voice is made from the speaker's longest turns, up to this much speech. */
const cloneSeconds = 30;
/** A line cut short (it would run over another speaker's next line) fades out over this. */
const fadeSeconds = 0.05;
/** Per-line loudness matching moves a line by at most this much. */
const maxGainDb = 24;
/**
 * Speech regions of the dialogue stem that lines start at: a low threshold, so a quiet first syllable counts, and no
 * padding (chosen on the tuning part of bench/dubbing.ts: Whisper's segment starts were 0.2-1 s off the speech).
 */
export const onsetSegmentation = { threshold: 0.25, minSilenceSeconds: 0.1, padBeforeSeconds: 0, padAfterSeconds: 0 };
/** A line's start moves to a speech onset at most this far from its transcript segment's start. */
const maxOnsetShiftSeconds = 1;
/** A line never moves back to within this much of the previous line's start (two lines in one stretch of speech). */
const minLineSeconds = 0.3;

const extensions: Record<AudioFormat, string> = { mp3: 'mp3', wav: 'wav', opus: 'ogg', flac: 'flac', pcm: 'pcm', aac: 'aac' };

/** Where each stage's progress sits in the whole job. */
const stages = {
  separating: [0, 0.3],
  transcribing: [0.3, 0.55],
  translating: [0.3, 0.55],
  voicing: [0.55, 0.92],
  mixing: [0.92, 1],
} as const satisfies Record<string, readonly [number, number]>;
type Stage = keyof typeof stages;

export interface DubbedLine {
  speaker: string;
  text: string;
  sourceStartSeconds: number;
  sourceEndSeconds: number;
  dubbedStartSeconds: number;
  dubbedEndSeconds: number;
  /** How much faster than the voice's own pace the line is spoken (1: as synthesised). */
  tempo: number;
  /** Gain that brought the line to the loudness of the original line. */
  gainDb: number;
  /** Seconds cut off the line's end because another speaker's next line starts there. */
  cutSeconds: number;
}

export interface SpeakerVoice {
  speaker: string;
  voice_id: string;
  /** Cloned from this speaker's speech in the recording. */
  cloned: boolean;
  /** Deleted once the dub is done (save_voices=false). */
  temporary: boolean;
}

interface Plan {
  target: string;
  /** 'auto': detected by the transcription. */
  source: string;
  /** Named voices by speaker; speakers not named are cloned. */
  named: Map<string, string>;
  consent: boolean;
}

/** The 422 of a target the server does not produce. */
function targetRefused(target: string, source: string): VoxError {
  return new VoxError(
    'unsupported_value',
    `This server dubs into English (en) or re-voices speech in its own language${source === 'auto' ? '' : ` (${source})`}; it ` +
      `cannot produce '${target}': Whisper translates only into English, and it is what translates the speech.`,
    { param: 'target_language' },
  );
}

/** `voices` as named voices by speaker: 'clone' (or nothing) names none; else a JSON object of speaker -> voice id. */
export function parseVoices(value: string | undefined): Map<string, string> {
  const text = value?.trim() ?? '';
  if (text === '' || text === 'clone') return new Map();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const entries = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? Object.entries(parsed) : [];
  if (entries.length === 0 || entries.some(([speaker, id]) => speaker.trim() === '' || typeof id !== 'string' || id.trim() === ''))
    throw new VoxError(
      'invalid_request',
      `'voices' must be clone or a JSON object from speaker to voice id, e.g. {"SPEAKER_1": "af_heart"}.`,
      { param: 'voices' },
    );
  return new Map(entries.map(([speaker, id]) => [speaker.trim(), (id as string).trim()]));
}

const round = (seconds: number): number => Math.round(seconds * 1000) / 1000;

export class DubbingService {
  constructor(private readonly deps: DubbingDependencies) {}

  capabilities() {
    return { targets: ['en', 'the source language'], voices: ['clone', 'a voice id per speaker'], max_tempo: maxTempo };
  }

  /**
   * What is checked before a dub is accepted as a job: the languages (a target other than English or the source is a
   * 422), the voices (malformed: 400, an unknown id: 404), consent for cloning (400).
   */
  async admit(fields: DubFields, caller: ApiKeyRecord): Promise<Plan> {
    const target = baseLanguage(fields.target_language);
    const source = baseLanguage(fields.source_language || 'auto');
    if (source !== 'auto' && !(whisperLanguages as readonly string[]).includes(source))
      throw unsupportedValue('source_language', fields.source_language ?? '', ['auto', ...whisperLanguages]);
    // With the source detected, re-voicing is checked once it is known.
    if (target !== 'en' && target !== source && !(source === 'auto' && (whisperLanguages as readonly string[]).includes(target)))
      throw targetRefused(target, source);
    const named = parseVoices(fields.voices);
    const consent = fields.consent === true;
    if (named.size === 0 && !consent)
      throw new VoxError(
        'invalid_request',
        "'consent' must be true to clone the speakers' voices (voices=clone, the default): confirm that they agreed to it, or " +
          'name a voice per speaker in voices.',
        { param: 'consent' },
      );
    for (const voiceId of new Set(named.values())) await this.deps.voices.speechProfile(voiceId, caller, 'voices');
    return { target, source, named, consent };
  }

  async dub(fields: DubFields, context: OperationContext): Promise<OperationResult> {
    const plan = await this.admit(fields, context.apiKey);
    const input = await admitAudio(uploadedFile(context.inputs, 'audio'), this.deps.limits, context.signal);
    const { signal } = context;
    const report = (stage: Stage, fraction = 0): void => {
      const [from, to] = stages[stage];
      context.onProgress?.({ stage, fraction: from + (to - from) * Math.min(1, Math.max(0, fraction)) });
    };
    const within = (stage: Stage) => (progress: Progress) => report(stage, progress.fraction);
    const scratch = this.deps.scratchPath();
    await mkdir(scratch, { recursive: true });
    const temporaryVoices: string[] = [];
    try {
      report('separating');
      const video = await probeVideo(input.path, signal);
      const split = await this.deps.separation.splitDialogue(input, scratch, {
        signal,
        log: context.log,
        onProgress: within('separating'),
      });
      const warnings = [...split.warnings];

      const translate = plan.target === 'en' && plan.source !== 'en';
      const transcribeStage = translate ? 'translating' : 'transcribing';
      report(transcribeStage);
      const transcript = await this.transcribe(split.dialoguePath, plan, fields.num_speakers, translate, {
        ...context,
        onProgress: within(transcribeStage),
      });
      const sourceLanguage = baseLanguage(transcript.language);
      if (plan.target !== 'en' && plan.target !== sourceLanguage) throw targetRefused(plan.target, sourceLanguage);
      const found = transcript.segments
        .filter((s) => s.kind !== 'event' && s.text.trim() !== '')
        .map((s) => ({ speaker: s.speaker ?? 'SPEAKER_1', text: s.text.trim(), startSeconds: s.start, endSeconds: s.end }))
        .sort((a, b) => a.startSeconds - b.startSeconds);
      if (found.length === 0) throw new VoxError('unsupported_value', 'The recording holds no speech to dub.', { param: 'audio' });

      report('voicing');
      // The dialogue at the recording's rate, mono: where lines start, what cloned voices are made from and lines are
      // matched in loudness to.
      const dialogue = await decodeFile(split.dialoguePath, { channels: 1, ...(signal ? { signal } : {}) });
      const onsets = speechOnsets(found, await this.speechIn(dialogue, signal));
      const lines = found.map((s, i) => ({ ...s, startSeconds: onsets[i]! })).sort((a, b) => a.startSeconds - b.startSeconds);
      const speakers = [...new Set(lines.map((l) => l.speaker))].sort();
      const voices: SpeakerVoice[] = [];
      for (const speaker of speakers) {
        const named = plan.named.get(speaker);
        if (named) {
          voices.push({ speaker, voice_id: named, cloned: false, temporary: false });
          continue;
        }
        if (!plan.consent)
          throw new VoxError(
            'invalid_request',
            `'voices' names no voice for ${speaker} (speakers found: ${speakers.join(', ')}), and without consent=true it ` +
              'cannot be cloned.',
            { param: 'voices' },
          );
        const clone = await this.cloneSpeaker(speaker, lines, dialogue, plan.target, scratch, context);
        if (clone.voiceId) {
          if (fields.save_voices !== true) temporaryVoices.push(clone.voiceId);
          voices.push({ speaker, voice_id: clone.voiceId, cloned: true, temporary: fields.save_voices !== true });
        } else {
          const fallback = await this.builtinVoiceFor(plan.target);
          warnings.push(`${speaker} could not be cloned (${clone.reason}); ${fallback} speaks for them.`);
          voices.push({ speaker, voice_id: fallback, cloned: false, temporary: false });
        }
      }

      const voiceOf = new Map(voices.map((v) => [v.speaker, v.voice_id]));
      const sampleRate = dialogue.sampleRate;
      const frames = dialogue.samples.length;
      const dubbedDialogue = new Float32Array(frames);
      const dubbed: DubbedLine[] = [];
      const lastEndOf = new Map<string, number>();
      for (const [index, line] of lines.entries()) {
        signal.throwIfAborted();
        report('voicing', index / lines.length);
        let speech: Waveform;
        try {
          speech = await this.speak(line.text, voiceOf.get(line.speaker)!, plan.target, sampleRate, scratch, context);
        } catch (error) {
          // A line the voice cannot say (e.g. only symbols) is left out; the rest of the dub goes on.
          if (!(error instanceof VoxError) || error.status >= 500 || signal.aborted) throw error;
          warnings.push(`The line at ${line.startSeconds.toFixed(2)} s ("${line.text}") was not voiced: ${error.message}`);
          continue;
        }
        const { startSeconds, tempo, limitSeconds } = placeLine(line, speech.samples.length / sampleRate, {
          ownPreviousEndSeconds: lastEndOf.get(line.speaker) ?? 0,
          nextOtherStartSeconds: lines.slice(index + 1).find((l) => l.speaker !== line.speaker)?.startSeconds ?? Infinity,
          totalSeconds: frames / sampleRate,
        });
        const fitted = tempo > 1.001 ? await changeTempo(speech, tempo, signal) : speech;
        const fullSeconds = fitted.samples.length / sampleRate;
        const endSeconds = Math.min(startSeconds + fullSeconds, limitSeconds);
        const samples = fitted.samples.slice(0, Math.max(0, Math.round((endSeconds - startSeconds) * sampleRate)));
        const cutSeconds = fullSeconds - samples.length / sampleRate;
        if (cutSeconds > 0.001) fadeOut(samples, Math.round(fadeSeconds * sampleRate));
        const originalDb = activeRmsDb(
          dialogue.samples.subarray(Math.floor(line.startSeconds * sampleRate), Math.ceil(line.endSeconds * sampleRate)),
          sampleRate,
        );
        const speechDb = activeRmsDb(samples, sampleRate);
        const gainDb =
          Number.isFinite(originalDb) && Number.isFinite(speechDb) ? Math.max(-maxGainDb, Math.min(maxGainDb, originalDb - speechDb)) : 0;
        applyGainDb(samples, gainDb);
        const offset = Math.round(startSeconds * sampleRate);
        for (let i = 0; i < samples.length && offset + i < frames; i++) dubbedDialogue[offset + i]! += samples[i]!;
        lastEndOf.set(line.speaker, endSeconds);
        dubbed.push({
          speaker: line.speaker,
          text: line.text,
          sourceStartSeconds: round(line.startSeconds),
          sourceEndSeconds: round(line.endSeconds),
          dubbedStartSeconds: round(startSeconds),
          dubbedEndSeconds: round(endSeconds),
          tempo: round(tempo),
          gainDb: Math.round(gainDb * 10) / 10,
          cutSeconds: round(Math.max(0, cutSeconds)),
        });
      }

      report('mixing');
      const keepBackground = fields.keep_background ?? true;
      const background = await decodeFile(split.backgroundPath, { sampleRate, ...(signal ? { signal } : {}) });
      const channels = background.channels;
      const mixed = new Float32Array(frames * channels);
      for (let i = 0; i < frames; i++)
        for (let c = 0; c < channels; c++)
          mixed[i * channels + c] = dubbedDialogue[i]! + (keepBackground ? (background.samples[i * channels + c] ?? 0) : 0);
      const format = fields.format ?? 'mp3';
      const rate = outputSampleRate(format, sampleRate);
      const audioPath = path.join(scratch, `dubbed.${extensions[format]}`);
      const dialoguePath = path.join(scratch, `dialogue.${extensions[format]}`);
      await encodeWaveformToFile({ samples: mixed, sampleRate, channels }, { format, sampleRate: rate, signal }, audioPath);
      await encodeWaveformToFile({ samples: dubbedDialogue, sampleRate, channels: 1 }, { format, sampleRate: rate, signal }, dialoguePath);
      report('mixing', 0.5);
      let videoPath: string | undefined;
      if (video) {
        const soundPath = path.join(scratch, 'dubbed-for-video.wav');
        await encodeWaveformToFile({ samples: mixed, sampleRate, channels }, { format: 'wav', wavSampleFormat: 'f32', signal }, soundPath);
        videoPath = path.join(scratch, `dubbed.${remuxTarget(video).extension}`);
        await replaceAudio(input.path, soundPath, videoPath, signal);
      }

      const segments = dubbed.map((line, id) => ({
        id,
        start: line.dubbedStartSeconds,
        end: line.dubbedEndSeconds,
        text: line.text,
        speaker: line.speaker,
        source_start: line.sourceStartSeconds,
        source_end: line.sourceEndSeconds,
      }));
      const cues = segments.map((s) => ({ ...s, kind: 'speech' as const }));
      const transcriptFiles = {
        json: JSON.stringify(
          { language: plan.target, source_language: sourceLanguage, duration: round(frames / sampleRate), segments },
          null,
          2,
        ),
        srt: toSrt(cues),
        vtt: toVtt(cues),
      };
      for (const [extension, text] of Object.entries(transcriptFiles)) await writeFile(path.join(scratch, `transcript.${extension}`), text);

      const keep = async (filePath: string, contentType: string) => {
        const record = await this.deps.files.keep(context.apiKey, filePath, path.basename(filePath), contentType, context.resultTtlSeconds);
        return {
          file_id: record.id,
          url: `/v1/audio/files/${record.id}`,
          content_type: contentType,
          bytes: record.bytes,
          expires_at: record.expiresAt,
        };
      };
      const files = {
        audio: await keep(audioPath, contentTypes[format]),
        dialogue: await keep(dialoguePath, contentTypes[format]),
        video: video && videoPath ? await keep(videoPath, remuxTarget(video).contentType) : null,
        transcript_json: await keep(path.join(scratch, 'transcript.json'), 'application/json'),
        transcript_srt: await keep(path.join(scratch, 'transcript.srt'), 'application/x-subrip; charset=utf-8'),
        transcript_vtt: await keep(path.join(scratch, 'transcript.vtt'), 'text/vtt; charset=utf-8'),
      };
      report('mixing', 1);
      return {
        kind: 'json',
        body: {
          id: `dub_${context.requestId.replace(/^[a-z]+_/, '')}`,
          object: 'dubbing',
          source_language: sourceLanguage,
          target_language: plan.target,
          // Whisper's translate task on English speech is a transcription.
          task: translate && sourceLanguage !== 'en' ? 'translate' : 'transcribe',
          duration: round(frames / sampleRate),
          keep_background: keepBackground,
          files,
          voices,
          lines: dubbed,
          warnings: [...new Set([...warnings, ...transcript.warnings])],
        },
      };
    } finally {
      // Cloned voices are the caller's only when asked for, whatever the outcome.
      for (const voiceId of temporaryVoices)
        await this.deps.voices
          .delete(voiceId, context.apiKey)
          .catch((error: unknown) => context.log.warn({ err: error, voice_id: voiceId }, 'deleting a temporary dubbing voice failed'));
      await rm(scratch, { recursive: true, force: true });
    }
  }

  /** Where the dialogue has speech (Silero VAD at 16 kHz). */
  private async speechIn(dialogue: Waveform, signal: AbortSignal): Promise<SpeechSegment[]> {
    const vad = await this.deps.vad();
    const at16k = await resample(dialogue, vadSampleRate, signal);
    const totalSeconds = dialogue.samples.length / dialogue.sampleRate;
    return speechSegments(await vad.probabilities(at16k.samples, signal), totalSeconds, onsetSegmentation);
  }

  /** The dialogue stem's diarized transcript (translated into English when `translate`). */
  private async transcribe(
    dialoguePath: string,
    plan: Plan,
    numSpeakers: number | undefined,
    translate: boolean,
    context: OperationContext,
  ): Promise<{ language: string; segments: TranscriptSegment[]; warnings: string[] }> {
    const result = await this.deps.transcription.transcribe(
      {
        diarize: true,
        ...(numSpeakers !== undefined ? { num_speakers: numSpeakers } : {}),
        language: plan.source,
        task: translate ? 'translate' : 'transcribe',
        response_format: 'verbose_json',
        timestamp_granularities: ['segment', 'word'],
      },
      { ...context, inputs: await inputOf('audio', dialoguePath) },
    );
    if (result.kind !== 'json') throw new VoxError('internal', 'The transcription answered without a transcript.');
    return result.body as { language: string; segments: TranscriptSegment[]; warnings: string[] };
  }

  /** A temporary voice cloned from the speaker's longest lines in the dialogue stem; a reason instead when it cannot be. */
  private async cloneSpeaker(
    speaker: string,
    lines: Array<{ speaker: string; startSeconds: number; endSeconds: number }>,
    dialogue: Waveform,
    language: string,
    scratch: string,
    context: OperationContext,
  ): Promise<{ voiceId?: string; reason?: string }> {
    const longestFirst = lines
      .filter((l) => l.speaker === speaker)
      .sort((a, b) => b.endSeconds - b.startSeconds - (a.endSeconds - a.startSeconds));
    const chosen: typeof longestFirst = [];
    let seconds = 0;
    for (const line of longestFirst) {
      if (seconds >= cloneSeconds) break;
      chosen.push(line);
      seconds += line.endSeconds - line.startSeconds;
    }
    chosen.sort((a, b) => a.startSeconds - b.startSeconds);
    const first = await this.createClone(speaker, chosen, dialogue, language, scratch, context);
    if (first.voiceId || chosen.length < 2) return first;
    // Refused (two voices heard in the joined turns: diarization merged two speakers, or unlike recordings of one):
    // the longest turn alone is mostly one voice, and a clone of it is closer to the speaker than a built-in voice.
    const second = await this.createClone(speaker, longestFirst.slice(0, 1), dialogue, language, scratch, context);
    return second.voiceId ? second : first;
  }

  /** A temporary voice from `lines` of the dialogue stem, or why voice creation refused it. */
  private async createClone(
    speaker: string,
    lines: Array<{ startSeconds: number; endSeconds: number }>,
    dialogue: Waveform,
    language: string,
    scratch: string,
    context: OperationContext,
  ): Promise<{ voiceId?: string; reason?: string }> {
    const rate = dialogue.sampleRate;
    const clip = concatSamples(
      lines.map((l) => dialogue.samples.subarray(Math.floor(l.startSeconds * rate), Math.ceil(l.endSeconds * rate))),
    );
    const clipPath = path.join(scratch, `${speaker}.wav`);
    await encodeWaveformToFile({ samples: clip, sampleRate: rate, channels: 1 }, { format: 'wav', signal: context.signal }, clipPath);
    try {
      const created = await this.deps.voices.create(
        {
          name: `${speaker} (dub ${context.requestId})`,
          consent: true,
          language,
          description: `Cloned from ${speaker}'s speech for dub ${context.requestId}.`,
          purpose: 'speech',
        },
        { ...context, inputs: await inputOf('files', clipPath) },
      );
      if (created.kind !== 'json') throw new VoxError('internal', 'Voice creation answered without a profile.');
      return { voiceId: (created.body as { voice_id: string }).voice_id };
    } catch (error) {
      // Too little (or no) speech for a profile: the speaker still gets a voice.
      if (error instanceof VoxError && error.code === 'unsupported_value') return { reason: error.message };
      throw error;
    }
  }

  /** The first built-in voice speaking `language`: for a speaker that could not be cloned. */
  private async builtinVoiceFor(language: string): Promise<string> {
    const builtins = await this.deps.synthesis.builtinVoices();
    const voice = builtins.find((v) => v.languages.some((l) => baseLanguage(l) === language)) ?? builtins[0];
    if (!voice) throw new VoxError('not_implemented', 'No built-in voice is installed to speak for a speaker too brief to clone.');
    return voice.voice_id;
  }

  /** A line spoken in a voice, mono at `sampleRate`, its edge silence trimmed (so its start is the speech's). */
  private async speak(
    text: string,
    voiceId: string,
    language: string,
    sampleRate: number,
    scratch: string,
    context: OperationContext,
  ): Promise<Waveform> {
    const result = await this.deps.synthesis.synthesize(
      { text, voice_id: voiceId, language, format: 'wav' },
      { ...context, inputs: new Map(), onProgress: () => undefined },
    );
    if (result.kind !== 'audio') throw new VoxError('internal', 'Speech synthesis answered without audio.');
    const speechPath = path.join(scratch, 'line.wav');
    await writeFile(speechPath, result.bytes);
    const speech = await decodeFile(speechPath, { sampleRate, channels: 1, signal: context.signal });
    const trimmed = trimEdgeSilence(speech.samples, sampleRate, { leadingSeconds: 0.02, trailingSeconds: 0.05, thresholdDb: -50 });
    return { samples: trimmed.slice(), sampleRate, channels: 1 };
  }
}

/**
 * Where a line's speech goes and how fast: at its source start (later only while the same speaker's previous line still
 * runs), sped up to fit the source line by at most maxTempo, and allowed to run on until another speaker's next line or
 * the end of the recording (`limitSeconds`: cut there).
 */
export function placeLine(
  line: { startSeconds: number; endSeconds: number },
  speechSeconds: number,
  around: { ownPreviousEndSeconds: number; nextOtherStartSeconds: number; totalSeconds: number },
): { startSeconds: number; tempo: number; limitSeconds: number } {
  const startSeconds = Math.max(line.startSeconds, around.ownPreviousEndSeconds);
  const slotSeconds = Math.max(line.endSeconds - startSeconds, 0.1);
  const tempo = speechSeconds > slotSeconds ? Math.min(maxTempo, speechSeconds / slotSeconds) : 1;
  const limitSeconds = Math.max(startSeconds, Math.min(around.nextOtherStartSeconds, around.totalSeconds));
  return { startSeconds, tempo, limitSeconds };
}

/**
 * Where each line's speech starts: Whisper's segment starts are often 0.2-1 s off it (late into a quiet first syllable,
 * early into the pause before it, or at the end of the segment before). A start inside a stretch of speech that began at
 * most maxOnsetShiftSeconds earlier moves back to where it began (not to within minLineSeconds of the previous line's
 * start: two lines in one stretch); otherwise to the first onset after it within the line and maxOnsetShiftSeconds; with
 * neither, it stays. `lines` in order of start.
 */
export function speechOnsets(lines: Array<{ startSeconds: number; endSeconds: number }>, speech: SpeechSegment[]): number[] {
  return lines.map((line, index) => {
    const start = line.startSeconds;
    const within = speech.find((s) => s.startSeconds <= start && start < s.endSeconds);
    if (within && start - within.startSeconds <= maxOnsetShiftSeconds) {
      const floor = index > 0 ? lines[index - 1]!.startSeconds + minLineSeconds : 0;
      return Math.min(start, Math.max(within.startSeconds, floor));
    }
    const next = speech.find((s) => s.startSeconds > start && s.startSeconds < Math.min(line.endSeconds, start + maxOnsetShiftSeconds));
    return next ? next.startSeconds : start;
  });
}

/** A file in `scratch` as an operation's upload under `field`. */
async function inputOf(field: string, filePath: string): Promise<Map<string, InputFile[]>> {
  const { size } = await stat(filePath);
  return new Map([[field, [{ field, path: filePath, filename: path.basename(filePath), mimetype: 'audio/wav', bytes: size }]]]);
}

/** Fades the last `length` samples to silence (in place). */
function fadeOut(samples: Float32Array, length: number): void {
  const n = Math.min(length, samples.length);
  for (let i = 0; i < n; i++) samples[samples.length - n + i]! *= 1 - (i + 1) / n;
}
