/** Storage behind one narrow async interface: SQLite + local disk (embedded) and Postgres + an object store implement it. */
import type {
  ApiKeyRecord,
  FileRecord,
  FinalJobStatus,
  JobError,
  JobProgress,
  JobRecord,
  JobStatus,
  Operation,
  PronunciationDictionaryRecord,
  VoiceRecord,
  WebhookAttempt,
  WebhookDeliveryRecord,
} from '../core/records.js';

export interface VoiceRepository {
  insert(record: VoiceRecord): Promise<void>;
  get(id: string): Promise<VoiceRecord | undefined>;
  list(): Promise<VoiceRecord[]>;
  update(id: string, changes: Partial<Pick<VoiceRecord, 'name' | 'description' | 'labels' | 'analysis'>>): Promise<VoiceRecord | undefined>;
  delete(id: string): Promise<boolean>;
}

export interface PronunciationDictionaryRepository {
  insert(record: PronunciationDictionaryRecord): Promise<void>;
  get(id: string): Promise<PronunciationDictionaryRecord | undefined>;
  list(): Promise<PronunciationDictionaryRecord[]>;
  update(
    id: string,
    changes: Partial<Pick<PronunciationDictionaryRecord, 'name' | 'rules'>>,
  ): Promise<PronunciationDictionaryRecord | undefined>;
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
  claim(
    operations: readonly Operation[],
    workerId: string,
    now: string,
    leaseExpiresAt: string,
  ): Promise<{ claimed?: JobRecord; abandoned: JobRecord[] }>;
  /** Extends the lease and records progress; false when the job is no longer this worker's (lease lost, or finished). */
  heartbeat(
    id: string,
    workerId: string,
    leaseExpiresAt: string,
    progress: JobProgress | null,
  ): Promise<{ owned: boolean; cancelRequested: boolean }>;
  /**
   * Settles a job once: only while it is running under `workerId` (or queued, for a cancel). The webhook delivery, when
   * given, is recorded in the same transaction, so a final state and its delivery exist together or not at all.
   */
  finish(
    id: string,
    workerId: string | null,
    outcome: JobOutcome,
    now: string,
    expiresAt: string,
    delivery: WebhookDeliveryRecord | undefined,
  ): Promise<JobRecord | undefined>;
  /** Marks a running job for cancellation (its worker stops it); returns the record after the change. */
  requestCancel(id: string): Promise<JobRecord | undefined>;
  /** Gives a running job back to the queue (graceful shutdown): queued again, this attempt not counted. */
  release(id: string, workerId: string): Promise<boolean>;
  expired(now: string): Promise<JobRecord[]>;
  delete(id: string): Promise<void>;
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
  pronunciationDictionaries: PronunciationDictionaryRepository;
  jobs: JobRepository;
  webhooks: WebhookRepository;
  blobs: BlobStore;
  close(): Promise<void>;
}
