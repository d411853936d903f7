/** Wiring by hand: every service with its explicit dependencies. */
import { ApiKeyService } from './auth/api-keys.js';
import type { Config } from './config.js';
import type { Readiness } from './http/routes/system.js';
import { FileService } from './files/service.js';
import { SileroVad } from './audio/vad.js';
import { LoadedModel } from './models/loaded.js';
import { VoiceService } from './voices/service.js';
import { Scheduler } from './jobs/scheduler.js';
import { Metrics } from './metrics.js';
import { catalog } from './models/catalog.js';
import { ModelManager } from './models/manager.js';
import { VoiceConversionService } from './operations/convert/service.js';
import { SeparationService } from './operations/separate/service.js';
import { SynthesisService } from './operations/synthesize/service.js';
import { TranscriptionService } from './operations/transcribe/service.js';
import { openSqliteStore } from './storage/sqlite-store.js';
import type { Store } from './storage/store.js';
import { version } from './version.js';

export interface Container {
  version: string;
  config: Readonly<Config>;
  store: Store;
  apiKeys: ApiKeyService;
  models: ModelManager;
  metrics: Metrics;
  scheduler: Scheduler;
  files: FileService;
  voices: VoiceService;
  vad: LoadedModel<SileroVad>;
  operations: {
    transcription: TranscriptionService;
    synthesis: SynthesisService;
    conversion: VoiceConversionService;
    separation: SeparationService;
  };
  readiness(): Readiness;
  /** Loads every model now, so the first request does not wait (failures show in readiness). */
  preload(): Promise<void>;
  capabilities(): Promise<unknown>;
  /** Stops admitting work, waits for running jobs, closes storage. */
  close(): Promise<void>;
}

export function createContainer(config: Readonly<Config>): Container {
  const store = openSqliteStore(config.dataDir);
  const apiKeys = new ApiKeyService(store.keys);
  apiKeys.seed(config.bootstrapApiKeys);
  const models = new ModelManager({ modelsDir: config.modelsDir, localModelDirs: config.localModelDirs, catalog });
  const metrics = new Metrics();
  const scheduler = new Scheduler({ concurrency: config.workerConcurrency, queueLimit: config.queueLimit, shortJobSeconds: config.shortJobSeconds }, metrics);
  const files = new FileService(store, config.fileTtlSeconds);
  const limits = { maxAudioSeconds: config.maxAudioSeconds };
  const vad = new LoadedModel('silero-vad', ['transcribe', 'voices'], async () => SileroVad.load(`${await models.require('silero-vad')}/silero_vad.onnx`), (m) => m.close());
  const loadedModels: Array<Pick<LoadedModel<unknown>, 'get' | 'state' | 'close'>> = [vad];
  const voices = new VoiceService({ store, vad: () => vad.get(), analyzers: [], builtins: [], maxAudioSeconds: config.maxAudioSeconds });
  const operations = {
    transcription: new TranscriptionService({ limits, scheduler, metrics, vad: () => vad.get() }),
    synthesis: new SynthesisService(),
    conversion: new VoiceConversionService(limits),
    separation: new SeparationService({ limits, scheduler, metrics, files }),
  };

  return {
    version,
    config,
    store,
    apiKeys,
    models,
    metrics,
    scheduler,
    files,
    voices,
    vad,
    operations,
    readiness: () => {
      const states = loadedModels.map((m) => m.state());
      return { ready: states.every((s) => s.loaded), models: states };
    },
    preload: async () => {
      await Promise.allSettled(loadedModels.map((m) => m.get()));
    },
    capabilities: async () => ({
      tts: operations.synthesis.capabilities(),
      vc: operations.conversion.capabilities(),
      separate: operations.separation.capabilities(),
      transcribe: operations.transcription.capabilities(),
      limits: {
        max_upload_bytes: config.maxUploadBytes,
        max_audio_seconds: config.maxAudioSeconds,
        rate_limit_per_minute: config.rateLimitPerMinute,
        max_concurrent_requests_per_key: config.maxConcurrentPerKey,
      },
      models: (await models.list()).map(({ id, task, license, installed }) => ({ id, task, license, installed })),
    }),
    close: async () => {
      files.stopSweeping();
      await scheduler.drain();
      await Promise.all(loadedModels.map((m) => m.close()));
      store.close();
    },
  };
}
