/**
 * The six tables, each declared once: its columns (SQL name, portable type, nullability), which record field each one
 * holds, and its indexes; then the schema's history. The dialects (dialect.ts) turn these into DDL and row mappers.
 */
import { newWebhookSecret } from '../../core/webhook-secret.js';
import type {
  ApiKeyRecord,
  FileRecord,
  JobRecord,
  PronunciationDictionaryRecord,
  VoiceRecord,
  WebhookDeliveryRecord,
} from '../../core/records.js';

/**
 * Portable column types. `id`: the text primary key (compared byte-wise on every backend); `bigint`: integers that may
 * pass 2^31; `json`: any JSON value, kept as written; `time`: an ISO-8601 instant at millisecond precision.
 */
export type ColumnType = 'id' | 'text' | 'integer' | 'bigint' | 'real' | 'json' | 'time' | 'boolean';

export interface Column<T = unknown> {
  name: string;
  type: ColumnType;
  nullable: boolean;
  unique?: boolean;
  /** A text default, for rows that existed before the column did. */
  default?: string;
  /** Type only: the record field's type, checked where a table lists its columns. */
  readonly value?: T;
}

export interface TableSpec {
  name: string;
  columns: Record<string, Column>;
  /** Index name -> the fields it covers, in order. */
  indexes: Record<string, string[]>;
}

/** A column for every field of R, nullable exactly where the field may be null. */
type Columns<R> = { [K in keyof R]-?: Column<R[K]> & { nullable: null extends R[K] ? true : false } };

export interface Table<R> extends TableSpec {
  columns: Columns<R>;
  indexes: Record<string, Array<keyof R & string>>;
}

type NotNull<T> = Column<T> & { nullable: false };
type Nullable<T> = Column<T | null> & { nullable: true };
/** A column constructor for one type, taking fields whose values are of `Base` (or narrower, as a union of names). */
const column =
  <Base>(type: ColumnType) =>
  <T extends Base>(name: string, options: Pick<Column, 'unique' | 'default'> = {}): NotNull<T> => ({
    name,
    type,
    nullable: false,
    ...options,
  });
const nullable = <T>(spec: NotNull<T>): Nullable<T> => ({ ...spec, nullable: true }) as Nullable<T>;
const id = column<string>('id');
const text = column<string>('text');
const integer = column<number>('integer');
const bigint = column<number>('bigint');
const real = column<number>('real');
const json = column<unknown>('json');
const time = column<string>('time');
const boolean = column<boolean>('boolean');

export const apiKeys: Table<ApiKeyRecord> = {
  name: 'api_keys',
  columns: {
    id: id('id'),
    name: text('name'),
    hash: text('hash', { unique: true }),
    prefix: text('prefix'),
    scopes: json('scopes'),
    createdAt: time('created_at'),
    lastUsedAt: nullable(time('last_used_at')),
    revokedAt: nullable(time('revoked_at')),
    webhookSecret: text('webhook_secret'),
  },
  indexes: {},
};

export const files: Table<FileRecord> = {
  name: 'files',
  columns: {
    id: id('id'),
    ownerKeyId: text('owner_key_id'),
    name: text('name'),
    contentType: text('content_type'),
    bytes: bigint('bytes'),
    blobKey: text('blob_key'),
    createdAt: time('created_at'),
    expiresAt: time('expires_at'),
  },
  indexes: { files_expires_at: ['expiresAt'] },
};

export const voices: Table<VoiceRecord> = {
  name: 'voices',
  columns: {
    id: id('id'),
    ownerKeyId: text('owner_key_id'),
    name: text('name'),
    languages: json('languages'),
    genderEstimate: nullable(text('gender_estimate')),
    description: text('description'),
    labels: json('labels'),
    referenceSeconds: real('reference_seconds'),
    engine: text('engine'),
    createdAt: time('created_at'),
    blobPrefix: text('blob_prefix'),
    analysis: json('analysis'),
    purpose: text('purpose', { default: 'speech' }),
  },
  indexes: {},
};

export const jobs: Table<JobRecord> = {
  name: 'jobs',
  columns: {
    id: id('id'),
    ownerKeyId: text('owner_key_id'),
    operation: text('operation'),
    route: text('route'),
    status: text('status'),
    params: json('params'),
    inputs: json('inputs'),
    inputSeconds: nullable(real('input_seconds')),
    progress: nullable(json('progress')),
    result: nullable(json('result')),
    error: nullable(json('error')),
    webhookUrl: nullable(text('webhook_url')),
    attempts: integer('attempts'),
    maxAttempts: integer('max_attempts'),
    workerId: nullable(text('worker_id')),
    leaseExpiresAt: nullable(time('lease_expires_at')),
    cancelRequested: boolean('cancel_requested'),
    createdAt: time('created_at'),
    startedAt: nullable(time('started_at')),
    finishedAt: nullable(time('finished_at')),
    expiresAt: time('expires_at'),
  },
  indexes: { jobs_queue: ['status', 'createdAt'], jobs_owner: ['ownerKeyId', 'createdAt'], jobs_expires_at: ['expiresAt'] },
};

export const webhookDeliveries: Table<WebhookDeliveryRecord> = {
  name: 'webhook_deliveries',
  columns: {
    id: id('id'),
    jobId: text('job_id'),
    ownerKeyId: text('owner_key_id'),
    url: text('url'),
    event: text('event'),
    // The exact body that is signed: text, not JSON that a backend may rewrite.
    payload: text('payload'),
    status: text('status'),
    attempts: json('attempts'),
    nextAttemptAt: time('next_attempt_at'),
    createdAt: time('created_at'),
  },
  indexes: { webhook_deliveries_due: ['status', 'nextAttemptAt'], webhook_deliveries_job: ['jobId'] },
};

export const pronunciationDictionaries: Table<PronunciationDictionaryRecord> = {
  name: 'pronunciation_dictionaries',
  columns: {
    id: id('id'),
    ownerKeyId: text('owner_key_id'),
    name: text('name'),
    rules: json('rules'),
    createdAt: time('created_at'),
  },
  indexes: {},
};

/** A table created (with its indexes), or a column added to one; `backfill` gives each existing row its value. */
export type Step = { create: TableSpec } | { table: TableSpec; addColumn: string; backfill?: () => string };

/**
 * The schema's versions, oldest first, each a list of steps applied in one transaction. Databases record the version
 * they have, so a version that has shipped never changes: a new column is a new version (and its field in the table
 * above), and a created table takes its columns as they were then (those that later versions add are left out).
 * test/storage/migrations.test.ts opens databases made by the versions as they shipped and compares them with a new one.
 */
export const history: Step[][] = [
  [{ create: apiKeys }, { create: files }],
  [{ create: voices }],
  // Keys made before webhooks existed get their secret now (readable with the key, rotatable).
  [{ table: apiKeys, addColumn: 'webhookSecret', backfill: newWebhookSecret }],
  [{ create: jobs }, { create: webhookDeliveries }],
  [{ table: voices, addColumn: 'purpose' }],
  [{ create: pronunciationDictionaries }],
];
