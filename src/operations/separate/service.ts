/** POST /v1/audio/separate: validation, scheduling, stem files (JSON with download URLs) or a zip archive. */
import { mkdir, rm } from 'node:fs/promises';
import { PassThrough } from 'node:stream';
import yazl from 'yazl';
import { contentTypes, outputSampleRate } from '../../audio/encode.js';
import { admitAudio, uploadedFile, type AudioInput, type AudioLimits } from '../../audio/input.js';
import { unsupportedValue, VoxError } from '../../core/errors.js';
import type { FileService } from '../../files/service.js';
import type { OperationContext, OperationResult } from '../../core/operation-context.js';
import type { Scheduler } from '../../core/scheduler.js';
import type { Metrics } from '../../core/metrics.js';
import { stemNames, type Separator, type StemName } from './separator.js';
import { writeStemFiles } from './stem-files.js';
import { stemFormats, type SeparateFields, type StemFormat } from './contract.js';

export { stemNames, type StemName } from './separator.js';
const extensions: Record<StemFormat, string> = { wav: 'wav', flac: 'flac', mp3: 'mp3', opus: 'ogg' };

export interface SeparationDependencies {
  limits: AudioLimits;
  scheduler: Scheduler;
  metrics: Metrics;
  files: FileService;
  /** A fresh path in the server's temp area (cleared at start), for a request's stem files while they are written. */
  scratchPath: () => string;
  /** Undefined when no separation model is installed: the route answers 501. */
  separator?: () => Promise<Separator>;
}

/** 'dialogue, music' -> ['dialogue', 'music']; empty -> all; duplicates ignored; unknown -> 422. */
export function parseStems(text: string | undefined): StemName[] {
  const requested = (text ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  for (const name of requested) if (!(stemNames as readonly string[]).includes(name)) throw unsupportedValue('stems', name, stemNames);
  return requested.length === 0 ? [...stemNames] : stemNames.filter((name) => requested.includes(name));
}

const db = (value: number): number | null => (Number.isFinite(value) ? Math.round(value * 100) / 100 : null);

export class SeparationService {
  constructor(private readonly deps: SeparationDependencies) {}

  capabilities() {
    return {
      available: this.deps.separator !== undefined,
      stems: [...stemNames],
      formats: [...stemFormats],
      response_formats: ['json', 'zip'],
    };
  }

  async separate(fields: SeparateFields, context: OperationContext): Promise<OperationResult> {
    const stems = parseStems(fields.stems);
    const format = fields.format ?? 'wav';
    const input = await admitAudio(uploadedFile(context.inputs, 'audio'), this.deps.limits, context.signal);
    const loadSeparator = this.deps.separator;
    if (!loadSeparator)
      throw new VoxError(
        'not_implemented',
        'Separation is not available on this server: no separation model is installed (voxd models pull).',
      );

    const layout = { sampleRate: input.probe.sampleRate, channels: input.probe.channels };
    const sampleRate = outputSampleRate(format, fields.sample_rate ?? layout.sampleRate);
    const scratch = this.deps.scratchPath();
    await mkdir(scratch, { recursive: true });
    let keepScratch = false;
    try {
      const result = await this.writeStems(loadSeparator, input, { stems, format, sampleRate, dir: scratch }, context);

      if (fields.response_format === 'zip') {
        const zip = new yazl.ZipFile();
        for (const file of result.files) zip.addFile(file.path, file.fileName);
        zip.end();
        const stream = zip.outputStream.pipe(new PassThrough());
        // The archive reads the stem files as it streams: they go once it is sent or abandoned.
        stream.on('close', () => void rm(scratch, { recursive: true, force: true }));
        keepScratch = true;
        return {
          kind: 'stream',
          stream,
          contentType: 'application/zip',
          headers: { 'content-disposition': 'attachment; filename="stems.zip"' },
        };
      }

      const described = [];
      for (const file of result.files) {
        const record = await this.deps.files.keep(context.apiKey, file.path, file.fileName, contentTypes[format], context.resultTtlSeconds);
        described.push({
          name: file.name,
          url: `/v1/audio/files/${record.id}`,
          expires_at: record.expiresAt,
          rms_db: db(file.rmsDb),
          peak_db: db(file.peakDb),
          active_fraction: Math.round(file.activeFraction * 1000) / 1000,
        });
      }
      return {
        kind: 'json',
        body: {
          id: `sep_${context.requestId.slice(4)}`,
          duration: result.durationSeconds,
          sample_rate: sampleRate,
          channels: layout.channels,
          stems: described,
          warnings: result.warnings,
        },
      };
    } finally {
      if (!keepScratch) await rm(scratch, { recursive: true, force: true });
    }
  }

  /**
   * The dialogue of an admitted upload and the rest of it (music, effects and ambience: the input minus the dialogue, so
   * the two sum to it) as WAV files at the input's rate and channels in `dir`, for operations that re-voice a recording.
   */
  async splitDialogue(
    input: AudioInput,
    dir: string,
    context: Pick<OperationContext, 'signal' | 'log' | 'onProgress'>,
  ): Promise<{ dialoguePath: string; backgroundPath: string; warnings: string[] }> {
    const loadSeparator = this.deps.separator;
    if (!loadSeparator)
      throw new VoxError(
        'not_implemented',
        'Separation is not available on this server: no separation model is installed (voxd models pull).',
      );
    const written = await this.writeStems(
      loadSeparator,
      input,
      { stems: ['dialogue'], format: 'wav', sampleRate: input.probe.sampleRate, dir },
      context,
    );
    const pathOf = (name: string): string => written.files.find((file) => file.name === name)!.path;
    return { dialoguePath: pathOf('dialogue'), backgroundPath: pathOf('residual'), warnings: written.warnings };
  }

  /** Separates in a separation slot, recording the metrics. */
  private async writeStems(
    loadSeparator: () => Promise<Separator>,
    input: AudioInput,
    output: { stems: StemName[]; format: StemFormat; sampleRate: number; dir: string },
    context: Pick<OperationContext, 'signal' | 'log' | 'onProgress'>,
  ) {
    const layout = { sampleRate: input.probe.sampleRate, channels: input.probe.channels };
    return this.deps.scheduler.run('separate', input.durationSeconds, context.signal, async (signal) => {
      const separator = await loadSeparator();
      const startedAt = performance.now();
      const written = await writeStemFiles({
        separator,
        inputPath: input.path,
        layout,
        stems: output.stems,
        format: output.format,
        extension: extensions[output.format],
        sampleRate: output.sampleRate,
        dir: output.dir,
        maxSeconds: this.deps.limits.maxAudioSeconds,
        expectedSeconds: input.durationSeconds,
        ...(context.onProgress ? { onProgress: context.onProgress } : {}),
        ...(signal ? { signal } : {}),
      });
      const elapsedSeconds = (performance.now() - startedAt) / 1000;
      this.deps.metrics.recordInference(
        { operation: 'separate', engine: separator.engine, model: separator.modelId },
        elapsedSeconds,
        written.durationSeconds,
      );
      context.log.info(
        {
          op: 'separate',
          engine: separator.engine,
          model: separator.modelId,
          audio_seconds: written.durationSeconds,
          elapsed_ms: Math.round(elapsedSeconds * 1000),
          rtf: elapsedSeconds / written.durationSeconds,
        },
        'separated',
      );
      return written;
    });
  }
}
