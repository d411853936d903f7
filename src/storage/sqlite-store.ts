/** Embedded default store: SQLite (WAL) for records, files under the data dir for blobs. */
import Database from 'better-sqlite3';
import { chmodSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { newWebhookSecret } from '../auth/webhook-secret.js';
import { DiskBlobStore } from './disk-blobs.js';
import type { ApiKeyRecord, BlobStore, FileRecord, JobRecord, JobRepository, Scope, Store, VoicePurpose, VoiceRecord, WebhookDeliveryRecord, WebhookRepository } from './store.js';

/** Ordered schema migrations; the index + 1 is the schema version stored in user_version. */
const migrations: Array<string | ((db: Database.Database) => void)> = [
  `CREATE TABLE api_keys (
     id TEXT PRIMARY KEY, name TEXT NOT NULL, hash TEXT NOT NULL UNIQUE, prefix TEXT NOT NULL, scopes TEXT NOT NULL,
     created_at TEXT NOT NULL, last_used_at TEXT, revoked_at TEXT);
   CREATE TABLE files (
     id TEXT PRIMARY KEY, owner_key_id TEXT NOT NULL, name TEXT NOT NULL, content_type TEXT NOT NULL, bytes INTEGER NOT NULL,
     blob_key TEXT NOT NULL, created_at TEXT NOT NULL, expires_at TEXT NOT NULL);
   CREATE INDEX files_expires_at ON files (expires_at);`,
  `CREATE TABLE voices (
     id TEXT PRIMARY KEY, owner_key_id TEXT NOT NULL, name TEXT NOT NULL, languages TEXT NOT NULL, gender_estimate TEXT,
     description TEXT NOT NULL, labels TEXT NOT NULL, reference_seconds REAL NOT NULL, engine TEXT NOT NULL,
     created_at TEXT NOT NULL, blob_prefix TEXT NOT NULL, analysis TEXT NOT NULL);`,
  (db) => {
    db.exec(`ALTER TABLE api_keys ADD COLUMN webhook_secret TEXT NOT NULL DEFAULT ''`);
    // Keys made before webhooks existed get their secret now (readable with the key, rotatable).
    const setSecret = db.prepare('UPDATE api_keys SET webhook_secret = ? WHERE id = ?');
    for (const { id } of db.prepare<[], { id: string }>('SELECT id FROM api_keys').all()) setSecret.run(newWebhookSecret(), id);
  },
  `CREATE TABLE jobs (
     id TEXT PRIMARY KEY, owner_key_id TEXT NOT NULL, operation TEXT NOT NULL, route TEXT NOT NULL, status TEXT NOT NULL,
     params TEXT NOT NULL, inputs TEXT NOT NULL, input_seconds REAL, progress TEXT, result TEXT, error TEXT, webhook_url TEXT,
     attempts INTEGER NOT NULL, max_attempts INTEGER NOT NULL, worker_id TEXT, lease_expires_at TEXT,
     cancel_requested INTEGER NOT NULL, created_at TEXT NOT NULL, started_at TEXT, finished_at TEXT, expires_at TEXT NOT NULL);
   CREATE INDEX jobs_queue ON jobs (status, created_at);
   CREATE INDEX jobs_owner ON jobs (owner_key_id, created_at);
   CREATE INDEX jobs_expires_at ON jobs (expires_at);
   CREATE TABLE webhook_deliveries (
     id TEXT PRIMARY KEY, job_id TEXT NOT NULL, owner_key_id TEXT NOT NULL, url TEXT NOT NULL, event TEXT NOT NULL,
     payload TEXT NOT NULL, status TEXT NOT NULL, attempts TEXT NOT NULL, next_attempt_at TEXT NOT NULL, created_at TEXT NOT NULL);
   CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);
   CREATE INDEX webhook_deliveries_job ON webhook_deliveries (job_id);`,
  `ALTER TABLE voices ADD COLUMN purpose TEXT NOT NULL DEFAULT 'speech';`,
];

interface KeyRow {
  id: string;
  name: string;
  hash: string;
  prefix: string;
  scopes: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  webhook_secret: string;
}

interface FileRow {
  id: string;
  owner_key_id: string;
  name: string;
  content_type: string;
  bytes: number;
  blob_key: string;
  created_at: string;
  expires_at: string;
}

interface VoiceRow {
  id: string;
  owner_key_id: string;
  name: string;
  languages: string;
  gender_estimate: 'female' | 'male' | null;
  description: string;
  labels: string;
  reference_seconds: number;
  engine: string;
  created_at: string;
  blob_prefix: string;
  analysis: string;
  purpose: VoicePurpose;
}

const voiceFromRow = (row: VoiceRow): VoiceRecord => ({
  id: row.id,
  ownerKeyId: row.owner_key_id,
  name: row.name,
  languages: JSON.parse(row.languages) as string[],
  genderEstimate: row.gender_estimate,
  description: row.description,
  labels: JSON.parse(row.labels) as Record<string, string>,
  referenceSeconds: row.reference_seconds,
  engine: row.engine,
  createdAt: row.created_at,
  blobPrefix: row.blob_prefix,
  analysis: JSON.parse(row.analysis) as Record<string, unknown>,
  purpose: row.purpose,
});

const voiceToRow = (record: VoiceRecord): VoiceRow => ({
  id: record.id,
  owner_key_id: record.ownerKeyId,
  name: record.name,
  languages: JSON.stringify(record.languages),
  gender_estimate: record.genderEstimate,
  description: record.description,
  labels: JSON.stringify(record.labels),
  reference_seconds: record.referenceSeconds,
  engine: record.engine,
  created_at: record.createdAt,
  blob_prefix: record.blobPrefix,
  analysis: JSON.stringify(record.analysis),
  purpose: record.purpose,
});

const keyFromRow = (row: KeyRow): ApiKeyRecord => ({
  id: row.id,
  name: row.name,
  hash: row.hash,
  prefix: row.prefix,
  scopes: JSON.parse(row.scopes) as Scope[],
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
  revokedAt: row.revoked_at,
  webhookSecret: row.webhook_secret,
});

const fileFromRow = (row: FileRow): FileRecord => ({
  id: row.id,
  ownerKeyId: row.owner_key_id,
  name: row.name,
  contentType: row.content_type,
  bytes: row.bytes,
  blobKey: row.blob_key,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
});


interface JobRow {
  id: string;
  owner_key_id: string;
  operation: string;
  route: string;
  status: string;
  params: string;
  inputs: string;
  input_seconds: number | null;
  progress: string | null;
  result: string | null;
  error: string | null;
  webhook_url: string | null;
  attempts: number;
  max_attempts: number;
  worker_id: string | null;
  lease_expires_at: string | null;
  cancel_requested: number;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  expires_at: string;
}

const json = (text: string | null): unknown => (text === null ? null : JSON.parse(text));

const jobFromRow = (row: JobRow): JobRecord => ({
  id: row.id,
  ownerKeyId: row.owner_key_id,
  operation: row.operation as JobRecord['operation'],
  route: row.route,
  status: row.status as JobRecord['status'],
  params: JSON.parse(row.params) as Record<string, unknown>,
  inputs: JSON.parse(row.inputs) as JobRecord['inputs'],
  inputSeconds: row.input_seconds,
  progress: json(row.progress) as JobRecord['progress'],
  result: json(row.result),
  error: json(row.error) as JobRecord['error'],
  webhookUrl: row.webhook_url,
  attempts: row.attempts,
  maxAttempts: row.max_attempts,
  workerId: row.worker_id,
  leaseExpiresAt: row.lease_expires_at,
  cancelRequested: row.cancel_requested === 1,
  createdAt: row.created_at,
  startedAt: row.started_at,
  finishedAt: row.finished_at,
  expiresAt: row.expires_at,
});

const jobToRow = (job: JobRecord): JobRow => ({
  id: job.id,
  owner_key_id: job.ownerKeyId,
  operation: job.operation,
  route: job.route,
  status: job.status,
  params: JSON.stringify(job.params),
  inputs: JSON.stringify(job.inputs),
  input_seconds: job.inputSeconds,
  progress: job.progress === null ? null : JSON.stringify(job.progress),
  result: job.result === null || job.result === undefined ? null : JSON.stringify(job.result),
  error: job.error === null ? null : JSON.stringify(job.error),
  webhook_url: job.webhookUrl,
  attempts: job.attempts,
  max_attempts: job.maxAttempts,
  worker_id: job.workerId,
  lease_expires_at: job.leaseExpiresAt,
  cancel_requested: job.cancelRequested ? 1 : 0,
  created_at: job.createdAt,
  started_at: job.startedAt,
  finished_at: job.finishedAt,
  expires_at: job.expiresAt,
});

interface DeliveryRow {
  id: string;
  job_id: string;
  owner_key_id: string;
  url: string;
  event: string;
  payload: string;
  status: string;
  attempts: string;
  next_attempt_at: string;
  created_at: string;
}

const deliveryFromRow = (row: DeliveryRow): WebhookDeliveryRecord => ({
  id: row.id,
  jobId: row.job_id,
  ownerKeyId: row.owner_key_id,
  url: row.url,
  event: row.event,
  payload: row.payload,
  status: row.status as WebhookDeliveryRecord['status'],
  attempts: JSON.parse(row.attempts) as WebhookDeliveryRecord['attempts'],
  nextAttemptAt: row.next_attempt_at,
  createdAt: row.created_at,
});

function migrate(db: Database.Database): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  for (let version = current; version < migrations.length; version++) {
    db.transaction(() => {
      const step = migrations[version]!;
      if (typeof step === 'string') db.exec(step);
      else step(db);
      db.pragma(`user_version = ${version + 1}`);
    })();
  }
}

function sqliteJobs(db: Database.Database): JobRepository {
  const insert = db.prepare(
    `INSERT INTO jobs (id, owner_key_id, operation, route, status, params, inputs, input_seconds, progress, result, error, webhook_url,
       attempts, max_attempts, worker_id, lease_expires_at, cancel_requested, created_at, started_at, finished_at, expires_at)
     VALUES (@id, @owner_key_id, @operation, @route, @status, @params, @inputs, @input_seconds, @progress, @result, @error, @webhook_url,
       @attempts, @max_attempts, @worker_id, @lease_expires_at, @cancel_requested, @created_at, @started_at, @finished_at, @expires_at)`,
  );
  const byId = db.prepare<[string], JobRow>('SELECT * FROM jobs WHERE id = ?');
  const expiredLeases = db.prepare<[string], JobRow>(
    `SELECT * FROM jobs WHERE status = 'running' AND lease_expires_at <= ? AND (attempts >= max_attempts OR cancel_requested = 1)`,
  );
  const take = db.prepare<{ workerId: string; now: string; leaseExpiresAt: string; operations: string }, JobRow>(
    `UPDATE jobs SET status = 'running', worker_id = @workerId, lease_expires_at = @leaseExpiresAt, attempts = attempts + 1,
       started_at = COALESCE(started_at, @now)
     WHERE id = (SELECT id FROM jobs
                 WHERE operation IN (SELECT value FROM json_each(@operations)) AND cancel_requested = 0
                   AND (status = 'queued' OR (status = 'running' AND lease_expires_at <= @now AND attempts < max_attempts))
                 ORDER BY created_at, id LIMIT 1)
     RETURNING *`,
  );
  const claimable = db.prepare<[string], { found: number }>(
    `SELECT 1 AS found FROM jobs WHERE status = 'queued' OR (status = 'running' AND lease_expires_at <= ?) LIMIT 1`,
  );
  const heartbeat = db.prepare<{ id: string; workerId: string; leaseExpiresAt: string; progress: string | null }, { cancel_requested: number }>(
    `UPDATE jobs SET lease_expires_at = @leaseExpiresAt, progress = COALESCE(@progress, progress)
     WHERE id = @id AND status = 'running' AND worker_id = @workerId RETURNING cancel_requested`,
  );
  const finish = db.prepare<{ id: string; workerId: string | null; status: string; result: string | null; error: string | null; now: string; expiresAt: string }, JobRow>(
    `UPDATE jobs SET status = @status, result = @result, error = @error, finished_at = @now, expires_at = @expiresAt,
       worker_id = NULL, lease_expires_at = NULL
     WHERE id = @id AND ((status = 'running' AND worker_id = @workerId) OR (status = 'queued' AND @workerId IS NULL))
     RETURNING *`,
  );
  const insertDelivery = db.prepare(
    `INSERT OR IGNORE INTO webhook_deliveries (id, job_id, owner_key_id, url, event, payload, status, attempts, next_attempt_at, created_at)
     VALUES (@id, @jobId, @ownerKeyId, @url, @event, @payload, @status, @attempts, @nextAttemptAt, @createdAt)`,
  );
  const requestCancel = db.prepare<[string], JobRow>(`UPDATE jobs SET cancel_requested = 1 WHERE id = ? AND status IN ('queued', 'running') RETURNING *`);
  const release = db.prepare(
    `UPDATE jobs SET status = 'queued', worker_id = NULL, lease_expires_at = NULL, attempts = attempts - 1
     WHERE id = ? AND status = 'running' AND worker_id = ?`,
  );
  const expired = db.prepare<[string], JobRow>(`SELECT * FROM jobs WHERE expires_at <= ? AND status IN ('succeeded', 'failed', 'cancelled')`);
  const remove = db.prepare('DELETE FROM jobs WHERE id = ?');
  const removeDeliveries = db.prepare('DELETE FROM webhook_deliveries WHERE job_id = ?');

  return {
    insert: async (record) => void insert.run(jobToRow(record)),
    get: async (id) => {
      const row = byId.get(id);
      return row && jobFromRow(row);
    },
    list: async (query) => {
      const where: string[] = [];
      const params: Record<string, unknown> = { limit: query.limit };
      if (query.ownerKeyId !== undefined) (where.push('owner_key_id = @owner'), (params.owner = query.ownerKeyId));
      if (query.status) (where.push('status = @status'), (params.status = query.status));
      if (query.operation) (where.push('operation = @operation'), (params.operation = query.operation));
      if (query.before) {
        where.push('(created_at < @beforeAt OR (created_at = @beforeAt AND id < @beforeId))');
        Object.assign(params, { beforeAt: query.before.createdAt, beforeId: query.before.id });
      }
      const sql = `SELECT * FROM jobs ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT @limit`;
      return db.prepare<Record<string, unknown>, JobRow>(sql).all(params).map(jobFromRow);
    },
    claim: async (operations, workerId, now, leaseExpiresAt) => {
      // Workers poll often: a plain read first, so an idle poll takes no write lock.
      if (!claimable.get(now)) return { abandoned: [] };
      return db.transaction(() => {
        const abandoned = expiredLeases.all(now).filter((row) => operations.includes(row.operation as JobRecord['operation'])).map(jobFromRow);
        const row = take.get({ workerId, now, leaseExpiresAt, operations: JSON.stringify(operations) });
        return { ...(row ? { claimed: jobFromRow(row) } : {}), abandoned };
      }).immediate();
    },
    heartbeat: async (id, workerId, leaseExpiresAt, progress) => {
      const row = heartbeat.get({ id, workerId, leaseExpiresAt, progress: progress === null ? null : JSON.stringify(progress) });
      return { owned: row !== undefined, cancelRequested: row?.cancel_requested === 1 };
    },
    finish: async (id, workerId, outcome, now, expiresAt, delivery) =>
      db.transaction(() => {
        const row = finish.get({
          id,
          workerId,
          status: outcome.status,
          result: outcome.result === undefined ? null : JSON.stringify(outcome.result),
          error: outcome.error ? JSON.stringify(outcome.error) : null,
          now,
          expiresAt,
        });
        if (!row) return undefined;
        if (delivery) insertDelivery.run({ ...delivery, attempts: JSON.stringify(delivery.attempts) });
        return jobFromRow(row);
      }).immediate(),
    requestCancel: async (id) => {
      const row = requestCancel.get(id);
      return row && jobFromRow(row);
    },
    release: async (id, workerId) => release.run(id, workerId).changes > 0,
    expired: async (now) => expired.all(now).map(jobFromRow),
    delete: async (id) => {
      db.transaction(() => {
        removeDeliveries.run(id);
        remove.run(id);
      })();
    },
  };
}

function sqliteWebhooks(db: Database.Database): WebhookRepository {
  const claimDue = db.prepare<{ now: string; leaseUntil: string; limit: number }, DeliveryRow>(
    `UPDATE webhook_deliveries SET next_attempt_at = @leaseUntil
     WHERE id IN (SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= @now ORDER BY next_attempt_at LIMIT @limit)
     RETURNING *`,
  );
  const byId = db.prepare<[string], DeliveryRow>('SELECT * FROM webhook_deliveries WHERE id = ?');
  const update = db.prepare('UPDATE webhook_deliveries SET attempts = @attempts, status = @status, next_attempt_at = @nextAttemptAt WHERE id = @id');
  const forJob = db.prepare<[string], DeliveryRow>('SELECT * FROM webhook_deliveries WHERE job_id = ? ORDER BY created_at');
  const nextDue = db.prepare<[], { at: string | null }>(`SELECT MIN(next_attempt_at) AS at FROM webhook_deliveries WHERE status = 'pending'`);
  return {
    claimDue: async (now, leaseUntil, limit) => claimDue.all({ now, leaseUntil, limit }).map(deliveryFromRow),
    recordAttempt: async (id, attempt, status, nextAttemptAt) => {
      db.transaction(() => {
        const row = byId.get(id);
        if (!row) return;
        update.run({ id, attempts: JSON.stringify([...(JSON.parse(row.attempts) as unknown[]), attempt]), status, nextAttemptAt });
      }).immediate();
    },
    forJob: async (jobId) => forJob.all(jobId).map(deliveryFromRow),
    nextDue: async () => nextDue.get()?.at ?? undefined,
  };
}

export function openSqliteStore(dataDir: string, blobs: BlobStore = new DiskBlobStore(path.join(dataDir, 'blobs'))): Store {
  mkdirSync(dataDir, { recursive: true });
  // Key hashes, voices and uploads are the service user's alone; this also closes a data dir made before files were private.
  chmodSync(dataDir, 0o700);
  const db = new Database(path.join(dataDir, 'voxd.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  migrate(db);

  const insertKey = db.prepare(
    `INSERT INTO api_keys (id, name, hash, prefix, scopes, created_at, last_used_at, revoked_at, webhook_secret)
     VALUES (@id, @name, @hash, @prefix, @scopes, @createdAt, @lastUsedAt, @revokedAt, @webhookSecret)`,
  );
  const keyByHash = db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE hash = ?');
  const keyById = db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE id = ?');
  const allKeys = db.prepare<[], KeyRow>('SELECT * FROM api_keys ORDER BY created_at, id');
  const revokeKey = db.prepare('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?');
  const touchKey = db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?');
  const setSecret = db.prepare('UPDATE api_keys SET webhook_secret = ? WHERE id = ?');
  const insertFile = db.prepare(
    `INSERT INTO files (id, owner_key_id, name, content_type, bytes, blob_key, created_at, expires_at)
     VALUES (@id, @ownerKeyId, @name, @contentType, @bytes, @blobKey, @createdAt, @expiresAt)`,
  );
  const fileById = db.prepare<[string], FileRow>('SELECT * FROM files WHERE id = ?');
  const expiredFiles = db.prepare<[string], FileRow>('SELECT * FROM files WHERE expires_at <= ?');
  const deleteFile = db.prepare('DELETE FROM files WHERE id = ?');
  const insertVoice = db.prepare(
    `INSERT INTO voices (id, owner_key_id, name, languages, gender_estimate, description, labels, reference_seconds, engine, created_at, blob_prefix, analysis, purpose)
     VALUES (@id, @owner_key_id, @name, @languages, @gender_estimate, @description, @labels, @reference_seconds, @engine, @created_at, @blob_prefix, @analysis, @purpose)`,
  );
  const voiceById = db.prepare<[string], VoiceRow>('SELECT * FROM voices WHERE id = ?');
  const allVoices = db.prepare<[], VoiceRow>('SELECT * FROM voices ORDER BY created_at, id');
  const updateVoice = db.prepare('UPDATE voices SET name = @name, description = @description, labels = @labels, analysis = @analysis WHERE id = @id');
  const deleteVoice = db.prepare('DELETE FROM voices WHERE id = ?');

  return {
    keys: {
      insert: async (record) => void insertKey.run({ ...record, scopes: JSON.stringify(record.scopes) }),
      findByHash: async (hash) => {
        const row = keyByHash.get(hash);
        return row && keyFromRow(row);
      },
      get: async (id) => {
        const row = keyById.get(id);
        return row && keyFromRow(row);
      },
      list: async () => allKeys.all().map(keyFromRow),
      revoke: async (id, at) => revokeKey.run(at, id).changes > 0,
      touch: async (id, at) => void touchKey.run(at, id),
      setWebhookSecret: async (id, secret) => setSecret.run(secret, id).changes > 0,
    },
    files: {
      insert: async (record) => void insertFile.run(record),
      get: async (id) => {
        const row = fileById.get(id);
        return row && fileFromRow(row);
      },
      expired: async (now) => expiredFiles.all(now).map(fileFromRow),
      delete: async (id) => void deleteFile.run(id),
    },
    voices: {
      insert: async (record) => void insertVoice.run(voiceToRow(record)),
      get: async (id) => {
        const row = voiceById.get(id);
        return row && voiceFromRow(row);
      },
      list: async () => allVoices.all().map(voiceFromRow),
      update: async (id, changes) =>
        db.transaction(() => {
          const row = voiceById.get(id);
          if (!row) return undefined;
          const updated = { ...voiceFromRow(row), ...changes };
          updateVoice.run(voiceToRow(updated));
          return updated;
        })(),
      delete: async (id) => deleteVoice.run(id).changes > 0,
    },
    jobs: sqliteJobs(db),
    webhooks: sqliteWebhooks(db),
    blobs,
    close: async () => void db.close(),
  };
}
