/** POST /v1/audio/separate: validation, scheduling, stem files (JSON with download URLs) or a zip archive. */
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import yazl from 'yazl';
import { decodeFile } from '../../audio/decode.js';
import { contentTypes, encodeWaveform, encodeWaveformToFile, outputSampleRate } from '../../audio/encode.js';
import { admitAudio, uploadedFile, type AudioLimits } from '../../audio/input.js';
import { peak, rmsDb, type Waveform } from '../../audio/waveform.js';
import { unsupportedValue, VoxError } from '../../errors.js';
import type { FileService } from '../../files/service.js';
import type { OperationResult, RequestContext } from '../../http/context.js';
import type { Scheduler } from '../../jobs/scheduler.js';
import type { Metrics } from '../../metrics.js';
import { stemNames, type Separator, type StemName } from './separator.js';

export { stemNames, type StemName } from './separator.js';
export const stemFormats = ['wav', 'flac', 'mp3', 'opus'] as const;
type StemFormat = (typeof stemFormats)[number];
const extensions: Record<StemFormat, string> = { wav: 'wav', flac: 'flac', mp3: 'mp3', opus: 'ogg' };

export interface SeparateFields {
  stems?: string;
  format?: StemFormat;
  sample_rate?: number;
  response_format?: 'json' | 'zip';
}

export interface SeparationDependencies {
  limits: AudioLimits;
  scheduler: Scheduler;
  metrics: Metrics;
  files: FileService;
  /** Undefined when no separation model is installed: the route answers 501. */
  separator?: () => Promise<Separator>;
}

/** 'dialogue, music' -> ['dialogue', 'music']; empty -> all; duplicates ignored; unknown -> 422. */
export function parseStems(text: string | undefined): StemName[] {
  const requested = (text ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
  for (const name of requested) if (!(stemNames as readonly string[]).includes(name)) throw unsupportedValue('stems', name, stemNames);
  return requested.length === 0 ? [...stemNames] : stemNames.filter((name) => requested.includes(name));
}

/** Share of 50 ms frames louder than -50 dBFS: how much of the stem has something in it. */
export function activeFraction(waveform: Waveform): number {
  const frameSamples = Math.max(1, Math.round(waveform.sampleRate * 0.05) * waveform.channels);
  let active = 0;
  let frames = 0;
  for (let offset = 0; offset < waveform.samples.length; offset += frameSamples) {
    frames++;
    if (rmsDb(waveform.samples.subarray(offset, offset + frameSamples)) > -50) active++;
  }
  return frames === 0 ? 0 : active / frames;
}

const db = (value: number): number | null => (Number.isFinite(value) ? Math.round(value * 100) / 100 : null);

export class SeparationService {
  constructor(private readonly deps: SeparationDependencies) {}

  capabilities() {
    return { available: this.deps.separator !== undefined, stems: [...stemNames], formats: [...stemFormats], response_formats: ['json', 'zip'] };
  }

  async separate(fields: SeparateFields, context: RequestContext): Promise<OperationResult> {
    const stems = parseStems(fields.stems);
    const format = fields.format ?? 'wav';
    const input = await admitAudio(uploadedFile(context.uploads, 'audio'), this.deps.limits, context.signal);
    const loadSeparator = this.deps.separator;
    if (!loadSeparator) throw new VoxError('not_implemented', 'Separation is not available on this server: no separation model is installed (voxd models pull).');

    const { waveform, result } = await this.deps.scheduler.run('separate', input.durationSeconds, context.signal, async (signal) => {
      const separator = await loadSeparator();
      const decoded = await decodeFile(input.path, { maxSeconds: this.deps.limits.maxAudioSeconds, ...(signal ? { signal } : {}) });
      const startedAt = performance.now();
      const separated = await separator.separate(decoded, { stems, ...(signal ? { signal } : {}) });
      const elapsedSeconds = (performance.now() - startedAt) / 1000;
      const audioSeconds = decoded.samples.length / decoded.channels / decoded.sampleRate;
      this.deps.metrics.recordInference({ operation: 'separate', engine: separator.engine, model: separator.modelId }, elapsedSeconds, audioSeconds);
      context.log.info({ op: 'separate', engine: separator.engine, model: separator.modelId, audio_seconds: audioSeconds, elapsed_ms: Math.round(elapsedSeconds * 1000), rtf: elapsedSeconds / audioSeconds }, 'separated');
      return { waveform: decoded, result: separated };
    });

    const sampleRate = outputSampleRate(format, fields.sample_rate ?? waveform.sampleRate);
    const encodeOptions = { format, sampleRate, signal: context.signal };
    const named: Array<{ name: StemName | 'residual'; stem: Waveform; file: string }> = stems.map((name) => ({ name, stem: result.stems[name]!, file: `${name}.${extensions[format]}` }));
    // A subset comes with the rest of the input as `residual`, so what is returned always sums to the input.
    if (stems.length < stemNames.length) {
      const residual = waveform.samples.slice();
      for (const { stem } of named) for (let i = 0; i < residual.length; i++) residual[i]! -= stem.samples[i]!;
      named.push({ name: 'residual', stem: { ...waveform, samples: residual }, file: `residual.${extensions[format]}` });
    }
    if (fields.response_format === 'zip') {
      const zip = new yazl.ZipFile();
      for (const { stem, file } of named) zip.addBuffer(await encodeWaveform(stem, encodeOptions), file);
      zip.end();
      const stream = zip.outputStream.pipe(new PassThrough());
      return { kind: 'stream', stream, contentType: 'application/zip', headers: { 'content-disposition': 'attachment; filename="stems.zip"' } };
    }

    const scratch = await mkdtemp(path.join(path.dirname(input.path), 'stems-'));
    try {
      const described = [];
      for (const { name, stem, file } of named) {
        const target = path.join(scratch, file);
        await encodeWaveformToFile(stem, encodeOptions, target);
        const record = await this.deps.files.keep(context.apiKey, target, file, contentTypes[format]);
        described.push({ name, url: `/v1/audio/files/${record.id}`, expires_at: record.expiresAt, rms_db: db(rmsDb(stem.samples)), peak_db: db(20 * Math.log10(peak(stem.samples))), active_fraction: Math.round(activeFraction(stem) * 1000) / 1000 });
      }
      return {
        kind: 'json',
        body: { id: `sep_${context.requestId.slice(4)}`, duration: waveform.samples.length / waveform.channels / waveform.sampleRate, sample_rate: sampleRate, channels: waveform.channels, stems: described, warnings: result.warnings },
      };
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }
}
