/** Wiring by hand: every service with its explicit dependencies. */
import path from 'node:path';
import { ApiKeyService } from './auth/api-keys.js';
import { ClientSecretService } from './auth/client-secrets.js';
import { liveInputFormats } from './audio/live-audio.js';
import { LiveTranscriptionService } from './operations/live-transcription/service.js';
import { speechStreamFormats } from './operations/synthesize/speech-stream.js';
import type { Config } from './config.js';
import { FileService } from './files/service.js';
import type { SileroVad } from './audio/vad.js';
import { synthesisEngines } from './operations/synthesize/engines/registry.js';
import type { Synthesizer } from './operations/synthesize/synthesizer.js';
import { conversionEngine } from './operations/convert/engines/registry.js';
import { separationEngine } from './operations/separate/engines/registry.js';
import { transcriptionEngine } from './operations/transcribe/engines/registry.js';
import { audioEventEngine, diarizationEngine, speakerEncoderEngine, vadEngine } from './speakers/registry.js';
import type { VoiceConverter } from './operations/convert/voice-converter.js';
import type { Separator } from './operations/separate/separator.js';
import type { SpeakerEncoder } from './speakers/embedding.js';
import { genderAnalyzer } from './voices/gender-analyzer.js';
import { speakerAnalyzer } from './voices/speaker-analyzer.js';
import type { Transcriber } from './operations/transcribe/transcriber.js';
import { LoadedModel, loadedFromCatalog, type EngineEntry, type Readiness } from './models/loaded.js';
import { VoiceService, type BuiltinVoiceSource } from './voices/service.js';
import { PronunciationDictionaryService } from './lexicons/service.js';
import { BuiltinAnalysisStore, builtinAnalysisDir } from './voices/builtin-store.js';
import { Scheduler } from './core/scheduler.js';
import { publishCatalog, PublishedCatalog } from './jobs/catalog.js';
import { JobService } from './jobs/service.js';
import { WebhookSender } from './jobs/webhooks.js';
import { JobWorker } from './jobs/worker.js';
import { createLogger } from './core/logger.js';
import { operationRunners, type OperationRunner, type RunnerName } from './operations/runners.js';
import type { Logger } from 'pino';
import { Metrics } from './core/metrics.js';
import { builtinAnalysisModels, catalog } from './models/catalog/index.js';
import { ModelManager } from './models/manager.js';
import { conversionTargetAtCreation, VoiceConversionService } from './operations/convert/service.js';
import { SeparationService } from './operations/separate/service.js';
import { DubbingService, dubbingUses } from './operations/dub/service.js';
import { SynthesisService } from './operations/synthesize/service.js';
import { TranscriptionService } from './operations/transcribe/service.js';
import { openStore } from './storage/open.js';
import { localScratch } from './storage/scratch.js';
import type { Scratch, Store } from './storage/store.js';
import { version } from './core/version.js';

export interface Container {
  version: string;
  config: Readonly<Config>;
  store: Store;
  scratch: Scratch;
  apiKeys: ApiKeyService;
  clientSecrets: ClientSecretService;
  models: ModelManager;
  metrics: Metrics;
  scheduler: Scheduler;
  files: FileService;
  voices: VoiceService;
  dictionaries: PronunciationDictionaryService;
  vad: LoadedModel<SileroVad>;
  asr: LoadedModel<Transcriber>;
  speakerEncoder: LoadedModel<SpeakerEncoder>;
  separator: LoadedModel<Separator>;
  converter: LoadedModel<VoiceConverter>;
  /** The speech engines by registry id, in order of preference. */
  synthesizers: ReadonlyMap<string, LoadedModel<Synthesizer>>;
  operations: {
    transcription: TranscriptionService;
    synthesis: SynthesisService;
    conversion: VoiceConversionService;
    separation: SeparationService;
    dubbing: DubbingService;
    liveTranscription: LiveTranscriptionService;
  };
  /** Every way to call an operation by name: what sync routes and job workers run. */
  runners: Record<RunnerName, OperationRunner>;
  jobs: JobService;
  /** Started by `serve` (not by the CLI): runs queued jobs of this node's operations. */
  jobWorker: JobWorker;
  webhookSender: WebhookSender;
  /** Ready when every model of this node's operations is loaded; a model whose load failed is tried again (throttled). */
  readiness(): Readiness;
  /** The catalog models that the operations this node runs load: what setup pulls (`voxd models pull --needed`). */
  neededModels(): string[];
  /** What a serving process runs besides requests: the job worker, webhook deliveries, deletion of expired files and jobs. */
  startBackground(): void;
  /** Loads every model now, so the first request does not wait (failures show in readiness). */
  preload(): Promise<void>;
  capabilities(): Promise<unknown>;
  /** Stops admitting work and taking jobs, waits for running work (the signal aborts it: jobs go back to the queue), closes storage. */
  close(abort?: AbortSignal): Promise<void>;
}

const sweepIntervalMilliseconds = 60_000;

export async function createContainer(config: Readonly<Config>, logger: Logger = createLogger(config.logLevel)): Promise<Container> {
  // Every process on the data dir (server or CLI) creates its files for the service user only: the database and its
  // -wal/-shm, blobs, uploads, and what ffmpeg children write there. A umask covers all of them, children included.
  process.umask(0o077);
  const store = await openStore(config);
  const scratch = localScratch(path.join(config.dataDir, 'tmp'));
  const apiKeys = new ApiKeyService(store.keys);
  await apiKeys.seed(config.bootstrapApiKeys);
  const models = new ModelManager({
    modelsDir: config.modelsDir,
    localModelDirs: config.localModelDirs,
    catalog,
    urlMirrors: config.modelMirrors,
  });
  const metrics = new Metrics();
  const scheduler = new Scheduler(
    { concurrency: config.workerConcurrency, queueLimit: config.queueLimit, shortJobSeconds: config.shortJobSeconds },
    metrics,
  );
  const files = new FileService(store, config.fileTtlSeconds);
  const limits = { maxAudioSeconds: config.maxAudioSeconds };
  // One LoadedModel per registered engine; each operation's registry says what it loads.
  const load = <T>(entry: EngineEntry<T>): LoadedModel<T> => loadedFromCatalog(models, entry, config.inferenceThreads);
  const vad = load(vadEngine);
  const audioEvents = load(audioEventEngine);
  const asr = load(transcriptionEngine({ model: config.asrModel, encoder: config.asrEncoder }));
  // GE2E: voice profiles (blend search, gender estimate) and conversion metrics; transcription's speakers are CAM++'s.
  const speakerEncoder = load(speakerEncoderEngine(() => vad.get()));
  const diarization = load(diarizationEngine);
  const separator = load(separationEngine);
  const converter = load(conversionEngine(config.vcEngine, () => speakerEncoder.get()));
  const synthesizers = new Map(synthesisEngines.map((entry) => [entry.id, load(entry)]));
  // Built-in voices' analyses depend only on model files: those the first requests read (preparedVoiceIds) are normally
  // prepared at pull time, else here once (as a model "loads": readiness waits for it) so that the first requests analyse none of them.
  const preparation = new AbortController();
  const builtinAnalysis = new LoadedModel('builtin-voice-analysis', ['tts', 'vc'], [], async () => {
    const prepared = await synthesis.prepareBuiltinVoices({
      onVoice: (_done, _total, message) => logger.info(message),
      signal: preparation.signal,
    });
    if (prepared > 0) logger.info({ voices: prepared }, 'built-in voices analysed and stored beside the models');
  });
  const loadedModels: Array<Pick<LoadedModel<unknown>, 'get' | 'state' | 'close' | 'operations' | 'modelIds' | 'retryFailed'>> = [
    vad,
    audioEvents,
    asr,
    speakerEncoder,
    diarization,
    separator,
    converter,
    ...synthesizers.values(),
    builtinAnalysis,
  ];
  // Built-in voices come from the synthesis engines, which need the voice service: the link is a closure.
  // An API-only node loads no models: what the engines offer comes from the catalog its workers publish.
  const localEngines = config.role !== 'api';
  const published = new PublishedCatalog(store.blobs);
  const builtinVoices: BuiltinVoiceSource = localEngines
    ? { builtinVoices: () => synthesis.builtinVoices(), referenceSpeech: (voiceId, options) => synthesis.referenceSpeech(voiceId, options) }
    : published;
  // The models this node needs: those of the operations it runs (none on an API-only node).
  const nodeOperations: readonly string[] = localEngines
    ? config.workerOperations.flatMap((operation) => (operation === 'dub' ? [operation, ...dubbingUses] : [operation]))
    : [];
  const nodeModels = loadedModels.filter((m) => m.operations.some((operation) => nodeOperations.includes(operation)));
  const builtinStore = new BuiltinAnalysisStore(
    builtinAnalysisDir(
      config.modelsDir,
      builtinAnalysisModels.flatMap((id) => models.spec(id).files.map((f) => f.sha256 ?? f.sha1 ?? f.name)),
    ),
    (analysis) => metrics.builtinVoiceAnalyses.inc({ analysis }),
  );
  const campplus = async () => (await diarization.get()).encoder;
  const diarizer = async () => new (await import('./speakers/overlap-diarization.js')).OverlapDiarizer(await diarization.get());
  const voices: VoiceService = new VoiceService({
    store,
    scratch,
    vad: () => vad.get(),
    analyzers: [
      speakerAnalyzer(() => speakerEncoder.get(), campplus, diarizer),
      genderAnalyzer(async () => voices.builtinEmbeddings(await synthesis.preparedVoiceIds())),
    ],
    derivedAtCreation: [conversionTargetAtCreation(() => converter.get())],
    builtins: [builtinVoices],
    speakerEncoder: () => speakerEncoder.get(),
    campplus,
    builtinStore,
    maxAudioSeconds: config.maxAudioSeconds,
  });
  const dictionaries = new PronunciationDictionaryService(store);
  const synthesis: SynthesisService = new SynthesisService({
    scheduler,
    metrics,
    voices,
    dictionaries,
    engines: [...synthesizers.values()].map((engine) => () => engine.get()),
    converter: () => converter.get(),
  });
  const engineOperations = {
    transcription: new TranscriptionService({
      limits,
      scheduler,
      metrics,
      vad: () => vad.get(),
      audioEvents: () => audioEvents.get(),
      transcriber: () => asr.get(),
      diarizer,
      speakerNaming: { voices, encoder: campplus, scratchPath: () => scratch.path('-reference') },
    }),
    synthesis,
    conversion: new VoiceConversionService({
      limits,
      scheduler,
      metrics,
      files,
      voices,
      speakerEncoder: () => speakerEncoder.get(),
      converter: () => converter.get(),
    }),
    separation: new SeparationService({
      limits,
      scheduler,
      metrics,
      files,
      scratchPath: () => scratch.path('-stems'),
      separator: () => separator.get(),
    }),
    liveTranscription: new LiveTranscriptionService({
      scheduler,
      vad: () => vad.get(),
      ...(localEngines ? { transcriber: () => asr.get(), speakerEncoder: campplus } : {}),
    }),
  };
  const operations = {
    ...engineOperations,
    // Joins the others: it calls them as any caller would, so each keeps its own scheduling and checks.
    dubbing: new DubbingService({
      limits,
      files,
      voices,
      separation: engineOperations.separation,
      transcription: engineOperations.transcription,
      synthesis,
      vad: () => vad.get(),
      scratchPath: () => scratch.path('-dub'),
    }),
  };
  const capabilities = async () => ({
    tts: await operations.synthesis.capabilities(),
    vc: operations.conversion.capabilities(),
    separate: operations.separation.capabilities(),
    transcribe: operations.transcription.capabilities(),
    dub: operations.dubbing.capabilities(),
    realtime: {
      // Sessions run where the engines are.
      available: localEngines,
      transcription: { path: '/v1/realtime?intent=transcription', input_audio_formats: [...liveInputFormats] },
      speech: { path: '/v1/audio/tts/stream', formats: [...speechStreamFormats] },
      sessions_per_key: config.realtimeSessionsPerKey,
    },
    limits: {
      max_upload_bytes: config.maxUploadBytes,
      max_audio_seconds: config.maxAudioSeconds,
      rate_limit_per_minute: config.rateLimitPerMinute,
      max_concurrent_requests_per_key: config.maxConcurrentPerKey,
    },
    models: (await models.list()).map(({ id, task, license, installed }) => ({ id, task, license, installed })),
  });

  let sweeper: NodeJS.Timeout | undefined;
  const runners = operationRunners({ ...operations, voices });
  const jobs: JobService = new JobService({
    store,
    voices,
    dictionaries,
    runners,
    limits,
    ttlSeconds: config.jobTtlSeconds,
    maxAttempts: config.jobMaxAttempts,
    webhookPolicy: { allowPrivate: config.webhookAllowPrivate },
    onSubmitted: () => jobWorker.wake(),
    onCancelRequested: (jobId) => jobWorker.cancel(jobId),
  });
  const webhookSender = new WebhookSender({
    store,
    policy: { allowPrivate: config.webhookAllowPrivate },
    retryBaseMilliseconds: config.webhookRetryBaseMilliseconds,
    retryWindowSeconds: config.webhookRetryHours * 3600,
    timeoutMilliseconds: config.webhookTimeoutSeconds * 1000,
    log: logger,
    metrics,
  });
  const jobWorker: JobWorker = new JobWorker({
    store,
    scratch,
    files,
    jobs,
    runners,
    operations: config.workerOperations,
    concurrency: config.workerConcurrency,
    leaseSeconds: config.jobLeaseSeconds,
    heartbeatMilliseconds: 1000,
    pollMilliseconds: config.jobPollMilliseconds,
    resultTtlSeconds: config.jobTtlSeconds,
    log: logger,
    metrics,
    onSettled: () => webhookSender.wake(),
  });

  return {
    version,
    config,
    store,
    scratch,
    apiKeys,
    clientSecrets: new ClientSecretService(store.keys),
    models,
    metrics,
    scheduler,
    files,
    voices,
    dictionaries,
    vad,
    asr,
    speakerEncoder,
    separator,
    converter,
    synthesizers,
    operations,
    runners,
    jobs,
    jobWorker,
    webhookSender,
    readiness: () => {
      for (const m of nodeModels) m.retryFailed();
      const states = nodeModels.map((m) => m.state());
      return { ready: states.every((s) => s.loaded), models: states };
    },
    neededModels: () => [...new Set(nodeModels.flatMap((m) => m.modelIds))],
    startBackground: () => {
      if (localEngines) {
        jobWorker.start();
        // Once the engines are up, API-only nodes learn from this node what they offer (the voice catalog comes from
        // the speech engines, so a node serving tts publishes it; only when it loads its models anyway).
        if (config.workerOperations.includes('tts') && (config.preloadModels || config.role === 'worker'))
          void (async () => {
            await Promise.allSettled(nodeModels.map((m) => m.get()));
            await publishCatalog(store.blobs, await synthesis.builtinVoices(), await capabilities());
            logger.info('engine catalog published (built-in voices, capabilities) for API-only nodes');
          })().catch((error: unknown) => logger.warn({ err: error }, 'publishing the engine catalog for API-only nodes failed'));
      }
      webhookSender.start();
      sweeper = setInterval(() => {
        Promise.all([files.sweep(), jobs.sweep()]).catch((error: unknown) =>
          logger.error({ err: error }, 'deleting expired files and jobs failed'),
        );
      }, sweepIntervalMilliseconds);
      sweeper.unref();
    },
    preload: async () => {
      await Promise.allSettled(nodeModels.map((m) => m.get()));
    },
    capabilities: () => (localEngines ? capabilities() : published.capabilities()),
    close: async (abort = new AbortController().signal) => {
      clearInterval(sweeper);
      preparation.abort();
      await jobWorker.stop(abort);
      await webhookSender.stop();
      await scheduler.drain();
      await Promise.all(loadedModels.map((m) => m.close()));
      await store.close();
    },
  };
}
