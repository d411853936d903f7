/** Storage behind one narrow async interface: SQLite + local disk (embedded) and Postgres + an object store implement it. */

export const scopes = ['tts', 'vc', 'separate', 'transcribe', 'voices', 'metrics', 'admin'] as const;
export type Scope = (typeof scopes)[number];

export interface ApiKeyRecord {
  id: string;
  name: string;
  /** SHA-256 of the full key, hex. The key itself is never stored. */
  hash: string;
  /** First characters of the key, shown in listings so people can tell keys apart. */
  prefix: string;
  scopes: Scope[];
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  /** Standard Webhooks signing secret (`whsec_` + base64) of the jobs this key creates; shown at creation and rotation. */
  webhookSecret: string;
}

export interface FileRecord {
  id: string;
  /** Key that created it; only that key (or an admin) may read it. */
  ownerKeyId: string;
  name: string;
  contentType: string;
  bytes: number;
  /** Blob store key. */
  blobKey: string;
  createdAt: string;
  expiresAt: string;
}

export interface VoiceRecord {
  id: string;
  /** Key that created it. Cloned voices are visible to their owner and to admin keys. */
  ownerKeyId: string;
  name: string;
  languages: string[];
  genderEstimate: 'female' | 'male' | null;
  description: string;
  labels: Record<string, string>;
  referenceSeconds: number;
  engine: string;
  createdAt: string;
  /** Blob key prefix holding the processed clips and every derived file. */
  blobPrefix: string;
  /** Derived data (speaker embeddings, engine statistics), JSON. */
  analysis: Record<string, unknown>;
  /** `speech`: a voice to speak in (TTS and voice-conversion target) and to name speakers; `identify`: only the latter. */
  purpose: VoicePurpose;
}

export const voicePurposes = ['speech', 'identify'] as const;
export type VoicePurpose = (typeof voicePurposes)[number];

export interface VoiceRepository {
  insert(record: VoiceRecord): Promise<void>;
  get(id: string): Promise<VoiceRecord | undefined>;
  list(): Promise<VoiceRecord[]>;
  update(id: string, changes: Partial<Pick<VoiceRecord, 'name' | 'description' | 'labels' | 'analysis'>>): Promise<VoiceRecord | undefined>;
  delete(id: string): Promise<boolean>;
}

export interface KeyRepository {
  insert(record: ApiKeyRecord): Promise<void>;
  findByHash(hash: string): Promise<ApiKeyRecord | undefined>;
  get(id: string): Promise<ApiKeyRecord | undefined>;
  list(): Promise<ApiKeyRecord[]>;
  /** Returns false when no such key exists. */
  revoke(id: string, at: string): Promise<boolean>;
  touch(id: string, at: string): Promise<void>;
  setWebhookSecret(id: string, secret: string): Promise<boolean>;
}

export interface FileRepository {
  insert(record: FileRecord): Promise<void>;
  get(id: string): Promise<FileRecord | undefined>;
  expired(now: string): Promise<FileRecord[]>;
  delete(id: string): Promise<void>;
}

export const operations = ['tts', 'vc', 'separate', 'transcribe'] as const;
export type Operation = (typeof operations)[number];
export const jobStatuses = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof jobStatuses)[number];
export type FinalJobStatus = Extract<JobStatus, 'succeeded' | 'failed' | 'cancelled'>;

export interface JobProgress {
  stage: string;
  /** 0..1 within the whole job. */
  fraction: number;
}

/** An uploaded input kept in the blob store for the job's lifetime. */
export interface JobInput {
  field: string;
  blobKey: string;
  filename: string;
  bytes: number;
}

/** The error envelope's fields, as the synchronous call would have answered. */
export interface JobError {
  code: string;
  type: string;
  message: string;
  param: string | null;
}

export interface JobRecord {
  id: string;
  ownerKeyId: string;
  operation: Operation;
  /** Which route variant made it (e.g. `openai` for the OpenAI aliases): the result is rendered as that route would. */
  route: string;
  status: JobStatus;
  /** The validated request fields (files replaced by their markers). */
  params: Record<string, unknown>;
  inputs: JobInput[];
  /** Duration of the audio input, when there is one. */
  inputSeconds: number | null;
  progress: JobProgress | null;
  /** The body the synchronous call returns (binary outputs as file URLs). */
  result: unknown;
  error: JobError | null;
  webhookUrl: string | null;
  /** Attempts started so far; a crash mid-job leaves the job to be claimed again until maxAttempts. */
  attempts: number;
  maxAttempts: number;
  /** The worker holding the job while it runs, and until when its lease lasts (renewed while it works). */
  workerId: string | null;
  leaseExpiresAt: string | null;
  cancelRequested: boolean;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  /** Inputs and results are deleted after this. */
  expiresAt: string;
}

export interface JobListQuery {
  /** Undefined: every key's jobs (admin). */
  ownerKeyId?: string;
  status?: JobStatus;
  operation?: Operation;
  /** Cursor: jobs created strictly before this (createdAt, id) pair, newest first. */
  before?: { createdAt: string; id: string };
  limit: number;
}

export interface JobOutcome {
  status: FinalJobStatus;
  result?: unknown;
  error?: JobError;
}

export interface JobRepository {
  insert(record: JobRecord): Promise<void>;
  get(id: string): Promise<JobRecord | undefined>;
  list(query: JobListQuery): Promise<JobRecord[]>;
  /**
   * Atomically takes the oldest job of these operations that is queued, or running with an expired lease (its worker
   * died), and has attempts left: it becomes running under `workerId` until `leaseExpiresAt`, attempts + 1.
   * A job out of attempts whose lease expired is failed instead (returned in `abandoned`, to be announced).
   */
  claim(operations: readonly Operation[], workerId: string, now: string, leaseExpiresAt: string): Promise<{ claimed?: JobRecord; abandoned: JobRecord[] }>;
  /** Extends the lease and records progress; false when the job is no longer this worker's (lease lost, or finished). */
  heartbeat(id: string, workerId: string, leaseExpiresAt: string, progress: JobProgress | null): Promise<{ owned: boolean; cancelRequested: boolean }>;
  /**
   * Settles a job once: only while it is running under `workerId` (or queued, for a cancel). The webhook delivery, when
   * given, is recorded in the same transaction, so a final state and its delivery exist together or not at all.
   */
  finish(id: string, workerId: string | null, outcome: JobOutcome, now: string, expiresAt: string, delivery: WebhookDeliveryRecord | undefined): Promise<JobRecord | undefined>;
  /** Marks a running job for cancellation (its worker stops it); returns the record after the change. */
  requestCancel(id: string): Promise<JobRecord | undefined>;
  /** Gives a running job back to the queue (graceful shutdown): queued again, this attempt not counted. */
  release(id: string, workerId: string): Promise<boolean>;
  expired(now: string): Promise<JobRecord[]>;
  delete(id: string): Promise<void>;
}

export interface WebhookAttempt {
  at: string;
  /** HTTP status, or null when no answer came (refused, timeout, blocked address). */
  status: number | null;
  error: string | null;
  durationMs: number;
}

export interface WebhookDeliveryRecord {
  /** The `webhook-id`: the same on every retry, so receivers can deduplicate. */
  id: string;
  jobId: string;
  ownerKeyId: string;
  url: string;
  event: string;
  /** The exact body signed and sent. */
  payload: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: WebhookAttempt[];
  nextAttemptAt: string;
  createdAt: string;
}

export interface WebhookRepository {
  /**
   * Atomically takes up to `limit` pending deliveries due at `now`, pushing their next attempt to `leaseUntil` so no
   * other process sends them meanwhile (a sender that dies leaves them due again after that).
   */
  claimDue(now: string, leaseUntil: string, limit: number): Promise<WebhookDeliveryRecord[]>;
  /** Records an attempt and the delivery's new state. */
  recordAttempt(id: string, attempt: WebhookAttempt, status: WebhookDeliveryRecord['status'], nextAttemptAt: string): Promise<void>;
  forJob(jobId: string): Promise<WebhookDeliveryRecord[]>;
  /** The earliest next attempt of a pending delivery, so senders can sleep until then. */
  nextDue(): Promise<string | undefined>;
}

export interface BlobStore {
  /** Moves a finished local file into the store; the key is final (whole) only once this returns. */
  putFile(key: string, sourcePath: string): Promise<number>;
  /** Writes bytes; the key is whole or absent. */
  putBytes(key: string, bytes: Uint8Array): Promise<number>;
  /** Moves a finished local directory under a prefix (its files keep their names). */
  putDirectory(prefix: string, sourceDir: string): Promise<void>;
  /** Names directly under a prefix (files and sub-prefixes); empty when there is nothing. */
  list(prefix: string): Promise<string[]>;
  readBytes(key: string): Promise<Buffer>;
  readStream(key: string): Promise<NodeJS.ReadableStream>;
  /** A local file holding the blob (the blob itself on disk, a downloaded copy otherwise) until `release`. */
  localFile(key: string, scratch: Scratch): Promise<LocalFile>;
  exists(key: string): Promise<boolean>;
  /** Deletes a key, or everything under a prefix. */
  delete(key: string): Promise<void>;
}

export interface LocalFile {
  path: string;
  release(): Promise<void>;
}

/** This process's local scratch space (uploads, intermediate results), on the same file system as disk blobs. */
export interface Scratch {
  path(suffix?: string): string;
  /**
   * Removes every scratch file. Only the server calls it, at start: other processes on the same data dir (the CLI) would
   * remove a running server's uploads and staged files.
   */
  clear(): Promise<void>;
}

export interface Store {
  keys: KeyRepository;
  files: FileRepository;
  voices: VoiceRepository;
  jobs: JobRepository;
  webhooks: WebhookRepository;
  blobs: BlobStore;
  close(): Promise<void>;
}
