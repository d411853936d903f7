/** Wiring by hand: every service with its explicit dependencies. */
import path from 'node:path';
import { ApiKeyService } from './auth/api-keys.js';
import type { Config } from './config.js';
import type { Readiness } from './http/routes/system.js';
import { FileService } from './files/service.js';
import { sileroVoiceFlags } from './audio/silence.js';
import { SileroVad } from './audio/vad.js';
import { EspeakSynthesizer } from './operations/synthesize/engines/espeak.js';
import { KokoroSynthesizer } from './operations/synthesize/engines/kokoro.js';
import { defaultWorldAddonPath, World } from './audio/world.js';
import { WorldDspConverter } from './operations/convert/engines/world-dsp.js';
import type { VoiceConverter } from './operations/convert/voice-converter.js';
import { SoundtrackSeparator } from './operations/separate/engines/soundtrack.js';
import type { Separator } from './operations/separate/separator.js';
import { SpeechDiarizer } from './speakers/diarization.js';
import { SpeakerEncoder } from './speakers/embedding.js';
import { genderAnalyzer } from './voices/gender-analyzer.js';
import { speakerAnalyzer } from './voices/speaker-analyzer.js';
import { WhisperCppTranscriber } from './operations/transcribe/engines/whisper-cpp.js';
import type { Transcriber } from './operations/transcribe/transcriber.js';
import { LoadedModel } from './models/loaded.js';
import { VoiceService, type BuiltinVoiceSource } from './voices/service.js';
import { Scheduler } from './jobs/scheduler.js';
import { Metrics } from './metrics.js';
import { catalog } from './models/catalog.js';
import { ModelManager } from './models/manager.js';
import { VoiceConversionService } from './operations/convert/service.js';
import { SeparationService } from './operations/separate/service.js';
import { SynthesisService } from './operations/synthesize/service.js';
import { TranscriptionService } from './operations/transcribe/service.js';
import { openStore } from './storage/open.js';
import { localScratch } from './storage/scratch.js';
import type { Scratch, Store } from './storage/store.js';
import { version } from './version.js';

export interface Container {
  version: string;
  config: Readonly<Config>;
  store: Store;
  scratch: Scratch;
  apiKeys: ApiKeyService;
  models: ModelManager;
  metrics: Metrics;
  scheduler: Scheduler;
  files: FileService;
  voices: VoiceService;
  vad: LoadedModel<SileroVad>;
  asr: LoadedModel<Transcriber>;
  speakerEncoder: LoadedModel<SpeakerEncoder>;
  separator: LoadedModel<Separator>;
  converter: LoadedModel<VoiceConverter>;
  kokoro: LoadedModel<KokoroSynthesizer>;
  espeak: LoadedModel<EspeakSynthesizer>;
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

export async function createContainer(config: Readonly<Config>): Promise<Container> {
  // Every process on the data dir (server or CLI) creates its files for the service user only: the database and its
  // -wal/-shm, blobs, uploads, and what ffmpeg children write there. A umask covers all of them, children included.
  process.umask(0o077);
  const store = await openStore(config);
  const scratch = localScratch(path.join(config.dataDir, 'tmp'));
  const apiKeys = new ApiKeyService(store.keys);
  await apiKeys.seed(config.bootstrapApiKeys);
  const models = new ModelManager({ modelsDir: config.modelsDir, localModelDirs: config.localModelDirs, catalog });
  const metrics = new Metrics();
  const scheduler = new Scheduler({ concurrency: config.workerConcurrency, queueLimit: config.queueLimit, shortJobSeconds: config.shortJobSeconds }, metrics);
  const files = new FileService(store, config.fileTtlSeconds);
  const limits = { maxAudioSeconds: config.maxAudioSeconds };
  const vad = new LoadedModel('silero-vad', ['transcribe', 'voices'], async () => SileroVad.load(`${await models.require('silero-vad')}/silero_vad.onnx`), (m) => m.close());
  const asr = new LoadedModel<Transcriber>(config.asrModel, ['transcribe'], async () => {
    // A path loads any ggml file as is; a catalog id loads the verified install.
    const isPath = config.asrModel.includes('/') || config.asrModel.endsWith('.bin');
    const modelPath = isPath ? config.asrModel : path.join(await models.require(config.asrModel), models.spec(config.asrModel).files[0]!.name);
    return WhisperCppTranscriber.load(modelPath, { modelId: isPath ? path.basename(modelPath) : config.asrModel, threads: config.inferenceThreads });
  });
  const speakerEncoder = new LoadedModel(
    'resemblyzer-ge2e',
    ['transcribe', 'voices', 'vc'],
    async () => SpeakerEncoder.load(path.join(await models.require('resemblyzer-ge2e'), 'ge2e.onnx'), { threads: config.inferenceThreads, voiceFlags: sileroVoiceFlags(await vad.get()) }),
    (m) => m.close(),
  );
  const separator = new LoadedModel<Separator>('deepfilternet3+dtln', ['separate'], async () => {
    await Promise.all([models.require('deepfilternet3'), models.require('dtln')]);
    return SoundtrackSeparator.load(config.modelsDir);
  }, (m) => m.close());
  const converter = new LoadedModel<VoiceConverter>('world-dsp', ['vc'], async () => new WorldDspConverter(World.load(defaultWorldAddonPath()), await speakerEncoder.get()));
  const kokoro = new LoadedModel('kokoro-82m', ['tts'], async () => {
    const [modelDir, voicesDir] = await Promise.all([models.require('kokoro-82m'), models.require('kokoro-voices')]);
    return KokoroSynthesizer.load({ modelDir, voicesDir, threads: config.inferenceThreads });
  }, (m) => m.close());
  const espeak = new LoadedModel('espeak-ng', ['tts'], () => EspeakSynthesizer.load(), (m) => m.close());
  const loadedModels: Array<Pick<LoadedModel<unknown>, 'get' | 'state' | 'close'>> = [vad, asr, speakerEncoder, separator, converter, kokoro, espeak];
  // Built-in voices come from the synthesis engines, which need the voice service: the link is a closure.
  const builtinVoices: BuiltinVoiceSource = { builtinVoices: () => synthesis.builtinVoices(), referenceSpeech: (voiceId, signal) => synthesis.referenceSpeech(voiceId, signal) };
  const voices: VoiceService = new VoiceService({ store, scratch, vad: () => vad.get(), analyzers: [speakerAnalyzer(() => speakerEncoder.get()), genderAnalyzer], builtins: [builtinVoices], speakerEncoder: () => speakerEncoder.get(), maxAudioSeconds: config.maxAudioSeconds });
  const synthesis: SynthesisService = new SynthesisService({ scheduler, metrics, voices, kokoro: () => kokoro.get(), espeak: () => espeak.get(), converter: () => converter.get() });
  const operations = {
    transcription: new TranscriptionService({ limits, scheduler, metrics, vad: () => vad.get(), transcriber: () => asr.get(), diarizer: async () => new SpeechDiarizer(await speakerEncoder.get()) }),
    synthesis,
    conversion: new VoiceConversionService({ limits, scheduler, metrics, files, voices, speakerEncoder: () => speakerEncoder.get(), converter: () => converter.get() }),
    separation: new SeparationService({ limits, scheduler, metrics, files, scratchPath: () => scratch.path('-stems'), separator: () => separator.get() }),
  };

  return {
    version,
    config,
    store,
    scratch,
    apiKeys,
    models,
    metrics,
    scheduler,
    files,
    voices,
    vad,
    asr,
    speakerEncoder,
    separator,
    converter,
    kokoro,
    espeak,
    operations,
    readiness: () => {
      const states = loadedModels.map((m) => m.state());
      return { ready: states.every((s) => s.loaded), models: states };
    },
    preload: async () => {
      await Promise.allSettled(loadedModels.map((m) => m.get()));
    },
    capabilities: async () => ({
      tts: await operations.synthesis.capabilities(),
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
      await store.close();
    },
  };
}
