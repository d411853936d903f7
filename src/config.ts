/** The only reader of process.env. Validated once; an invalid value stops the start with a clear message. */
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { apiKeyPattern } from './auth/api-keys.js';
import type { BlobConfig } from './storage/open.js';
import { type ConversionEngineChoice, conversionEngineChoices } from './operations/convert/engines/registry.js';
import { whisperEncoderChoices, type WhisperEncoderChoice } from './operations/transcribe/engines/registry.js';
import { operations, type Operation } from './core/records.js';

export const roles = ['all', 'api', 'worker'] as const;
export type Role = (typeof roles)[number];

export interface Config {
  /** all: API and job worker in one process; api: the HTTP API only (no models; operations run as jobs on workers); worker: jobs only. */
  role: Role;
  /** Operations this node's job worker takes (role all or worker). */
  workerOperations: Operation[];
  host: string;
  port: number;
  dataDir: string;
  modelsDir: string;
  /** PostgreSQL for keys, files, voices, jobs and webhook deliveries (several processes share it); null: SQLite in the data dir. */
  databaseUrl: string | null;
  /** Where blobs (uploads, results, voice clips) live: a directory (the data dir's, or one every node mounts) or S3. */
  blobs: BlobConfig;
  /** Keys with every scope, for containers and first start. */
  bootstrapApiKeys: string[];
  maxUploadBytes: number;
  maxAudioSeconds: number;
  /** Requests per minute per key. */
  rateLimitPerMinute: number;
  /** Requests in flight per key. */
  maxConcurrentPerKey: number;
  /** Concurrent inference jobs per operation lane, and how many may wait. */
  workerConcurrency: number;
  queueLimit: number;
  /** Inputs shorter than this go to the short lane, so they never wait behind long jobs. */
  shortJobSeconds: number;
  /** How long result files (e.g. stems) stay downloadable. */
  fileTtlSeconds: number;
  /** Threads each inference engine may use. */
  inferenceThreads: number;
  /** Load models at start instead of on first use. */
  preloadModels: boolean;
  /** On SIGTERM/SIGINT, how long in-flight work may run before it is aborted and the process exits. */
  shutdownGraceSeconds: number;
  /** Extra directories searched for model files before fetching (e.g. ../shared/models in development). */
  localModelDirs: string[];
  /** Model files published under a URL prefix (`from`) are fetched from a mirror's prefix (`to`) instead. */
  modelMirrors: Array<{ from: string; to: string }>;
  /** A catalog model id (default whisper-base) or a path to any whisper.cpp ggml file. */
  asrModel: string;
  /**
   * 'onnx' (default): the model's float32 ONNX encoder (catalog onnxEncoders, pulled with it) encodes the audio when it
   * is installed; 'onnx-int8': its int8 one (faster, less accurate); 'ggml': whisper.cpp's own encoder.
   */
  asrEncoder: WhisperEncoderChoice;
  /** Voice conversion: 'world-dsp' (default; WORLD with an envelope warp) or 'knn' (target frames matched on Whisper content features). */
  vcEngine: ConversionEngineChoice;
  /** Serve /metrics without a key (e.g. when only a private network reaches the port); otherwise it needs scope `metrics`. */
  metricsPublic: boolean;
  /** Jobs: how long a settled job, its inputs and results are kept. */
  jobTtlSeconds: number;
  /** Jobs: attempts when the worker running a job dies (crash, SIGKILL) before the job is failed. */
  jobMaxAttempts: number;
  /** Jobs: a worker's hold on a running job; renewed every second, so a dead worker's jobs are taken over after this. */
  jobLeaseSeconds: number;
  /** Jobs: how often a worker looks for jobs submitted through other processes (its own process wakes it at once). */
  jobPollMilliseconds: number;
  /** Webhooks may reach loopback, private and link-local addresses. */
  webhookAllowPrivate: boolean;
  /** audio_url downloads may reach loopback, private and link-local addresses (tests, private deployments). */
  audioUrlAllowPrivate: boolean;
  /** The whole of an audio_url download (every redirect and the body) must finish within this. */
  audioUrlTimeoutSeconds: number;
  /** Webhooks: first retry delay (doubling, capped at an hour, +-20% jitter) and how long retries go on. */
  webhookRetryBaseMilliseconds: number;
  webhookRetryHours: number;
  webhookTimeoutSeconds: number;
  /**
   * Realtime sockets: open sessions per key, silence from the client before a session is closed, longest session, largest client message.
   */
  realtimeSessionsPerKey: number;
  realtimeIdleSeconds: number;
  realtimeMaxSessionSeconds: number;
  realtimeMaxMessageBytes: number;
  logLevel: string;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max} (got '${raw}').`);
  }
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false (got '${env[name]}').`);
}

function list(env: Env, name: string, separator: string): string[] {
  return (env[name] ?? '')
    .split(separator)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** VOXD_MODEL_MIRRORS: comma list of `<published prefix>=<mirror prefix>`, both http(s) URLs. */
function modelMirrors(env: Env): Config['modelMirrors'] {
  return list(env, 'VOXD_MODEL_MIRRORS', ',').map((pair) => {
    const separator = pair.indexOf('=');
    const [from, to] = [pair.slice(0, separator).trim(), pair.slice(separator + 1).trim()];
    const isHttp = (url: string): boolean => URL.canParse(url) && /^https?:$/.test(new URL(url).protocol);
    if (separator < 0 || !isHttp(from) || !isHttp(to))
      throw new ConfigError(`VOXD_MODEL_MIRRORS must be a comma list of <published URL prefix>=<mirror URL prefix> (got '${pair}').`);
    return { from, to };
  });
}

function databaseUrl(env: Env): string | null {
  const raw = env.VOXD_DATABASE_URL?.trim();
  if (!raw) return null;
  const url = URL.parse(raw);
  if (!url || !['postgres:', 'postgresql:'].includes(url.protocol) || url.hostname === '') {
    throw new ConfigError('VOXD_DATABASE_URL must be a PostgreSQL URL such as postgres://user:password@host:5432/voxd.');
  }
  return raw;
}

// S3's bucket naming rules (lower case, 3-63 characters); the prefix is kept without surrounding slashes.
const bucketPattern = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

function blobConfig(env: Env, dataDir: string): BlobConfig {
  const raw = env.VOXD_BLOB_URL?.trim();
  const endpointRaw = env.VOXD_S3_ENDPOINT?.trim();
  if (!raw?.startsWith('s3:') && endpointRaw) throw new ConfigError('VOXD_S3_ENDPOINT is set but VOXD_BLOB_URL is not an s3:// URL.');
  if (!raw) return { kind: 'disk', dir: path.join(dataDir, 'blobs') };
  const url = URL.parse(raw);
  if (url?.protocol === 'file:') {
    if (url.host !== '' || url.pathname === '/')
      throw new ConfigError(`VOXD_BLOB_URL must name a directory as file:///absolute/path (got '${raw}').`);
    return { kind: 'disk', dir: fileURLToPath(url) };
  }
  if (url?.protocol !== 's3:' || !bucketPattern.test(url.hostname) || url.search !== '' || url.hash !== '') {
    throw new ConfigError(`VOXD_BLOB_URL must be s3://bucket/prefix (a valid bucket name) or file:///absolute/path (got '${raw}').`);
  }
  let endpoint: string | null = null;
  if (endpointRaw) {
    const parsed = URL.parse(endpointRaw);
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol))
      throw new ConfigError(`VOXD_S3_ENDPOINT must be an http(s) URL such as http://127.0.0.1:8333 (got '${endpointRaw}').`);
    endpoint = endpointRaw;
  }
  return {
    kind: 's3',
    bucket: url.hostname,
    prefix: decodeURIComponent(url.pathname).replace(/^\/+|\/+$/g, ''),
    endpoint,
    region: env.VOXD_S3_REGION?.trim() || 'us-east-1',
    // Self-hosted S3 servers (SeaweedFS, MinIO) answer on one host name: buckets go in the path there.
    forcePathStyle: boolean(env, 'VOXD_S3_FORCE_PATH_STYLE', endpoint !== null),
  };
}

export function loadConfig(env: Env = process.env): Readonly<Config> {
  const host = env.VOXD_HOST?.trim() || '127.0.0.1';
  const bootstrapApiKeys = list(env, 'VOXD_API_KEYS', ',');
  for (const key of bootstrapApiKeys) {
    if (!apiKeyPattern.test(key)) {
      throw new ConfigError(
        `VOXD_API_KEYS holds a malformed key '${key.slice(0, 6)}...': keys look like vx_ + 43 base64url characters (create one with ` +
          `'voxd keys create').`,
      );
    }
  }
  const logLevel = env.VOXD_LOG_LEVEL?.trim() || 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError(`VOXD_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got '${logLevel}').`);
  }
  const role = (env.VOXD_ROLE?.trim() || 'all') as Role;
  if (!roles.includes(role)) throw new ConfigError(`VOXD_ROLE must be one of ${roles.join(', ')} (got '${env.VOXD_ROLE}').`);
  const workerOperations = list(env, 'VOXD_WORKER_OPERATIONS', ',');
  for (const operation of workerOperations) {
    if (!(operations as readonly string[]).includes(operation))
      throw new ConfigError(`VOXD_WORKER_OPERATIONS lists '${operation}'; operations are ${operations.join(', ')}.`);
  }
  const asrEncoder = (env.VOXD_ASR_ENCODER?.trim() || 'onnx') as Config['asrEncoder'];
  if (!whisperEncoderChoices.includes(asrEncoder))
    throw new ConfigError(`VOXD_ASR_ENCODER must be onnx, onnx-int8 or ggml (got '${env.VOXD_ASR_ENCODER}').`);
  const vcEngine = (env.VOXD_VC_ENGINE?.trim() || 'world-dsp') as Config['vcEngine'];
  if (!conversionEngineChoices.includes(vcEngine))
    throw new ConfigError(`VOXD_VC_ENGINE must be ${conversionEngineChoices.join(' or ')} (got '${env.VOXD_VC_ENGINE}').`);
  const dataDir = path.resolve(env.VOXD_DATA_DIR?.trim() || './data');
  const config: Config = {
    role,
    workerOperations: workerOperations.length > 0 ? (workerOperations as Operation[]) : [...operations],
    host,
    port: integer(env, 'VOXD_PORT', 8080, 0, 65535),
    dataDir,
    modelsDir: path.resolve(env.VOXD_MODELS_DIR?.trim() || path.join(homedir(), '.cache', 'voxd', 'models')),
    databaseUrl: databaseUrl(env),
    blobs: blobConfig(env, dataDir),
    bootstrapApiKeys,
    maxUploadBytes: integer(env, 'VOXD_MAX_UPLOAD_MB', 100, 1, 10240) * 1024 * 1024,
    maxAudioSeconds: integer(env, 'VOXD_MAX_AUDIO_SECONDS', 7200, 1, 86400),
    rateLimitPerMinute: integer(env, 'VOXD_RATE_LIMIT_PER_MINUTE', 120, 1, 1_000_000),
    maxConcurrentPerKey: integer(env, 'VOXD_MAX_CONCURRENT_PER_KEY', 4, 1, 1000),
    workerConcurrency: integer(env, 'VOXD_WORKER_CONCURRENCY', 1, 1, 64),
    queueLimit: integer(env, 'VOXD_QUEUE_LIMIT', 16, 0, 10000),
    shortJobSeconds: integer(env, 'VOXD_SHORT_JOB_SECONDS', 30, 0, 3600),
    fileTtlSeconds: integer(env, 'VOXD_FILE_TTL_SECONDS', 3600, 10, 30 * 86400),
    inferenceThreads: integer(env, 'VOXD_THREADS', 2, 1, 256),
    preloadModels: boolean(env, 'VOXD_PRELOAD_MODELS', true),
    shutdownGraceSeconds: integer(env, 'VOXD_SHUTDOWN_GRACE_SECONDS', 30, 0, 3600),
    localModelDirs: list(env, 'VOXD_LOCAL_MODEL_DIRS', path.delimiter).map((dir) => path.resolve(dir)),
    modelMirrors: modelMirrors(env),
    asrModel: env.VOXD_ASR_MODEL?.trim() || 'whisper-base',
    asrEncoder,
    vcEngine,
    metricsPublic: boolean(env, 'VOXD_METRICS_PUBLIC', false),
    jobTtlSeconds: integer(env, 'VOXD_JOB_TTL_SECONDS', 86400, 60, 365 * 86400),
    jobMaxAttempts: integer(env, 'VOXD_JOB_MAX_ATTEMPTS', 3, 1, 100),
    jobLeaseSeconds: integer(env, 'VOXD_JOB_LEASE_SECONDS', 30, 3, 3600),
    jobPollMilliseconds: integer(env, 'VOXD_JOB_POLL_MS', 100, 10, 60_000),
    webhookAllowPrivate: boolean(env, 'VOXD_WEBHOOK_ALLOW_PRIVATE', false),
    audioUrlAllowPrivate: boolean(env, 'VOXD_AUDIO_URL_ALLOW_PRIVATE', false),
    audioUrlTimeoutSeconds: integer(env, 'VOXD_AUDIO_URL_TIMEOUT_SECONDS', 120, 1, 3600),
    webhookRetryBaseMilliseconds: integer(env, 'VOXD_WEBHOOK_RETRY_BASE_MS', 5000, 10, 3_600_000),
    webhookRetryHours: integer(env, 'VOXD_WEBHOOK_RETRY_HOURS', 24, 0, 24 * 30),
    webhookTimeoutSeconds: integer(env, 'VOXD_WEBHOOK_TIMEOUT_SECONDS', 10, 1, 300),
    realtimeSessionsPerKey: integer(env, 'VOXD_REALTIME_SESSIONS_PER_KEY', 4, 1, 1000),
    realtimeIdleSeconds: integer(env, 'VOXD_REALTIME_IDLE_SECONDS', 60, 1, 86400),
    realtimeMaxSessionSeconds: integer(env, 'VOXD_REALTIME_MAX_SESSION_SECONDS', 3600, 10, 7 * 86400),
    // OpenAI's limit for one input_audio_buffer.append (15 MiB).
    realtimeMaxMessageBytes: integer(env, 'VOXD_REALTIME_MAX_MESSAGE_MB', 15, 1, 1024) * 1024 * 1024,
    logLevel,
  };
  return Object.freeze(config);
}
