/** POST /v1/audio/vc: re-voice a recording as a voice profile (cloned or built-in). */
import { writeFile } from 'node:fs/promises';
import { decodeFile } from '../../audio/decode.js';
import { audioFormats, contentTypes, encodeWaveform, outputSampleRate } from '../../audio/encode.js';
import { admitAudio, uploadedFile, type AudioLimits } from '../../audio/input.js';
import { resample } from '../../audio/resample.js';
import type { Waveform } from '../../audio/waveform.js';
import { VoxError } from '../../core/errors.js';
import type { FileService } from '../../files/service.js';
import type { OperationContext, OperationResult } from '../../core/operation-context.js';
import type { Scheduler } from '../../core/scheduler.js';
import type { Metrics } from '../../core/metrics.js';
import type { ApiKeyRecord } from '../../core/records.js';
import { cosineSimilarity, embeddingSampleRate, type SpeakerEncoder } from '../../speakers/embedding.js';
import type { DerivedAtCreation, VoiceService } from '../../voices/service.js';
import type { ConvertFields } from './contract.js';
import { loadProfileStats, storeProfileStats, type TargetProfileStats, type VoiceConverter } from './voice-converter.js';

export interface ConversionDependencies {
  limits: AudioLimits;
  scheduler: Scheduler;
  metrics: Metrics;
  files: FileService;
  voices: VoiceService;
  speakerEncoder: () => Promise<SpeakerEncoder>;
  /** Undefined when no conversion engine is installed: the route answers 501. */
  converter?: () => Promise<VoiceConverter>;
}

const round = (v: number): number => Math.round(v * 1000) / 1000;

/**
 * The converter's statistics of a target voice, computed once per voice and engine and kept with the voice (from the
 * reference clips of a cloned profile, or from speech synthesised in a built-in voice).
 */
export async function conversionTarget(
  voices: VoiceService,
  converter: VoiceConverter,
  voiceId: string,
  caller: ApiKeyRecord,
  signal?: AbortSignal,
): Promise<TargetProfileStats> {
  const stored = await voices.derived(voiceId, caller, converter.engine, (clips) => targetStatistics(converter, clips, signal), signal);
  return loadProfileStats({ json: JSON.stringify(stored.analysis), blobs: stored.files });
}

async function targetStatistics(
  converter: VoiceConverter,
  clips: Waveform[],
  signal?: AbortSignal,
): Promise<{ analysis: Record<string, unknown>; files: Record<string, Uint8Array> }> {
  const stats = storeProfileStats(await converter.analyseTarget(clips, signal));
  return { analysis: JSON.parse(stats.json) as Record<string, unknown>, files: stats.blobs };
}

/**
 * The converter's statistics of a new cloned voice, made with the profile: its first speech (converted to it) and its
 * first use as a conversion target then read them instead of analysing its clips (about 3 s) first.
 */
export function conversionTargetAtCreation(converter: () => Promise<VoiceConverter>): DerivedAtCreation {
  return {
    name: async () => (await converter()).engine,
    compute: async (clips, signal) => targetStatistics(await converter(), clips, signal),
  };
}

export class VoiceConversionService {
  constructor(private readonly deps: ConversionDependencies) {}

  capabilities() {
    return {
      available: this.deps.converter !== undefined,
      formats: [...audioFormats],
      preserve_emotion: true,
      targets: 'cloned and built-in voices',
      response_formats: ['audio', 'json'],
    };
  }

  async convert(fields: ConvertFields, context: OperationContext): Promise<OperationResult> {
    // 404 for an unknown voice (or another key's), before the upload is looked at.
    await this.deps.voices.speechProfile(fields.target_voice_id, context.apiKey, 'target_voice_id');
    const input = await admitAudio(uploadedFile(context.inputs, 'audio'), this.deps.limits, context.signal);
    const loadConverter = this.deps.converter;
    if (!loadConverter)
      throw new VoxError('not_implemented', 'Voice conversion is not available on this server: no conversion engine is installed.');
    const preserveEmotion = fields.preserve_emotion ?? true;

    const outcome = await this.deps.scheduler.run('vc', input.durationSeconds, context.signal, async (signal) => {
      const converter = await loadConverter();
      context.onProgress?.({ stage: 'analysing target voice', fraction: 0 });
      const target = await conversionTarget(this.deps.voices, converter, fields.target_voice_id, context.apiKey, signal);
      const source = await decodeFile(input.path, {
        channels: 1,
        maxSeconds: this.deps.limits.maxAudioSeconds,
        ...(signal ? { signal } : {}),
      });
      context.onProgress?.({ stage: 'converting', fraction: 0.2 });
      const startedAt = performance.now();
      const result = await converter.convert(source, target, { preserveEmotion, ...(signal ? { signal } : {}) });
      const elapsedSeconds = (performance.now() - startedAt) / 1000;
      const audioSeconds = source.samples.length / source.sampleRate;
      this.deps.metrics.recordInference(
        { operation: 'vc', engine: converter.engine, model: converter.modelId },
        elapsedSeconds,
        audioSeconds,
      );
      context.log.info(
        {
          op: 'vc',
          engine: converter.engine,
          model: converter.modelId,
          audio_seconds: audioSeconds,
          elapsed_ms: Math.round(elapsedSeconds * 1000),
          rtf: elapsedSeconds / audioSeconds,
        },
        'converted',
      );
      context.onProgress?.({ stage: 'measuring similarity', fraction: 0.9 });
      const similarity = await this.similarities(
        source,
        result.waveform,
        await this.deps.voices.speakerEmbedding(fields.target_voice_id, context.apiKey, { signal }),
        signal,
      );
      return { waveform: result.waveform, f0Correlation: result.f0Correlation, warnings: result.warnings, ...similarity };
    });

    const format = fields.format ?? 'wav';
    const sampleRate = outputSampleRate(format, fields.sample_rate ?? outcome.waveform.sampleRate);
    const bytes = await encodeWaveform(outcome.waveform, { format, sampleRate, signal: context.signal });
    const report = {
      similarity_to_target: outcome.similarityToTarget,
      similarity_to_source: outcome.similarityToSource,
      source_similarity_to_target: outcome.sourceSimilarityToTarget,
      f0_correlation: round(outcome.f0Correlation),
    };
    if (fields.response_format === 'json') {
      const scratch = `${input.path}.out.${format}`;
      await writeFile(scratch, bytes);
      const file = await this.deps.files.keep(
        context.apiKey,
        scratch,
        `converted.${format}`,
        contentTypes[format],
        context.resultTtlSeconds,
      );
      return {
        kind: 'json',
        body: {
          url: `/v1/audio/files/${file.id}`,
          expires_at: file.expiresAt,
          duration: outcome.waveform.samples.length / outcome.waveform.sampleRate,
          sample_rate: sampleRate,
          ...report,
          warnings: outcome.warnings,
        },
      };
    }
    const headers: Record<string, string> = {
      'x-similarity-to-target': String(report.similarity_to_target),
      'x-similarity-to-source': String(report.similarity_to_source),
      'x-source-similarity-to-target': String(report.source_similarity_to_target),
      'x-f0-correlation': String(report.f0_correlation),
    };
    return { kind: 'audio', bytes, contentType: contentTypes[format], headers };
  }

  /** Speaker-embedding cosines: output vs target profile, output vs source, and source vs target for reference. */
  private async similarities(source: Waveform, output: Waveform, target: Float32Array | undefined, signal?: AbortSignal) {
    const encoder = await this.deps.speakerEncoder();
    const [sourceEmbedding, outputEmbedding] = await Promise.all(
      [source, output].map(async (w) => encoder.embedUtterance(await resample(w, embeddingSampleRate, signal), signal)),
    );
    const toTarget = (e: Float32Array): number | null => (target ? round(cosineSimilarity(e, target)) : null);
    return {
      similarityToTarget: toTarget(outputEmbedding!),
      sourceSimilarityToTarget: toTarget(sourceEmbedding!),
      similarityToSource: round(cosineSimilarity(outputEmbedding!, sourceEmbedding!)),
    };
  }
}
