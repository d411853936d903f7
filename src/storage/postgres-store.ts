/**
 * Scale-out store: PostgreSQL for records, shared by every API and worker process; blobs elsewhere (S3 or a shared
 * directory). The SQL follows the SQLite store's semantics; row locks (FOR UPDATE SKIP LOCKED) make claims exclusive
 * across processes.
 *
 * JSON columns are `json`, not `jsonb`: `json` keeps the text as written, so a job's result body comes back with its
 * keys in the order the synchronous call renders them (jsonb reorders keys), as the SQLite store's text columns do;
 * nothing queries inside them. Times are `timestamptz` (ordered and compared as times), read back as the interface's
 * ISO-8601 strings; every time comes from the caller at millisecond precision, so the round trip is exact.
 */
import pg from 'pg';
import type { ApiKeyRecord, BlobStore, FileRecord, JobRecord, JobRepository, KeyRepository, Scope, Store, VoicePurpose, VoiceRecord, VoiceRepository, WebhookDeliveryRecord, WebhookRepository } from './store.js';

/** Ordered schema migrations; the index + 1 is the version stored in voxd_schema. Ids compare byte-wise (C), as in SQLite. */
const migrations: string[] = [
  `CREATE TABLE api_keys (
     id TEXT COLLATE "C" PRIMARY KEY, name TEXT NOT NULL, hash TEXT NOT NULL UNIQUE, prefix TEXT NOT NULL, scopes JSON NOT NULL,
     created_at TIMESTAMPTZ NOT NULL, last_used_at TIMESTAMPTZ, revoked_at TIMESTAMPTZ, webhook_secret TEXT NOT NULL);
   CREATE TABLE files (
     id TEXT COLLATE "C" PRIMARY KEY, owner_key_id TEXT NOT NULL, name TEXT NOT NULL, content_type TEXT NOT NULL, bytes BIGINT NOT NULL,
     blob_key TEXT NOT NULL, created_at TIMESTAMPTZ NOT NULL, expires_at TIMESTAMPTZ NOT NULL);
   CREATE INDEX files_expires_at ON files (expires_at);
   CREATE TABLE voices (
     id TEXT COLLATE "C" PRIMARY KEY, owner_key_id TEXT NOT NULL, name TEXT NOT NULL, languages JSON NOT NULL, gender_estimate TEXT,
     description TEXT NOT NULL, labels JSON NOT NULL, reference_seconds DOUBLE PRECISION NOT NULL, engine TEXT NOT NULL,
     created_at TIMESTAMPTZ NOT NULL, blob_prefix TEXT NOT NULL, analysis JSON NOT NULL);
   CREATE TABLE jobs (
     id TEXT COLLATE "C" PRIMARY KEY, owner_key_id TEXT NOT NULL, operation TEXT NOT NULL, route TEXT NOT NULL, status TEXT NOT NULL,
     params JSON NOT NULL, inputs JSON NOT NULL, input_seconds DOUBLE PRECISION, progress JSON, result JSON, error JSON, webhook_url TEXT,
     attempts INTEGER NOT NULL, max_attempts INTEGER NOT NULL, worker_id TEXT, lease_expires_at TIMESTAMPTZ,
     cancel_requested BOOLEAN NOT NULL, created_at TIMESTAMPTZ NOT NULL, started_at TIMESTAMPTZ, finished_at TIMESTAMPTZ,
     expires_at TIMESTAMPTZ NOT NULL);
   CREATE INDEX jobs_queue ON jobs (status, created_at);
   CREATE INDEX jobs_owner ON jobs (owner_key_id, created_at);
   CREATE INDEX jobs_expires_at ON jobs (expires_at);
   CREATE TABLE webhook_deliveries (
     id TEXT COLLATE "C" PRIMARY KEY, job_id TEXT NOT NULL, owner_key_id TEXT NOT NULL, url TEXT NOT NULL, event TEXT NOT NULL,
     payload TEXT NOT NULL, status TEXT NOT NULL, attempts JSON NOT NULL, next_attempt_at TIMESTAMPTZ NOT NULL,
     created_at TIMESTAMPTZ NOT NULL);
   CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);
   CREATE INDEX webhook_deliveries_job ON webhook_deliveries (job_id);`,
  `ALTER TABLE voices ADD COLUMN purpose TEXT NOT NULL DEFAULT 'speech';`,
];

/** Held while migrating, so that processes starting together apply each migration once. */
const migrationLockId = 0x766f7864;

type Queryable = Pick<pg.PoolClient, 'query'>;

const iso = (value: Date | null): string | null => (value === null ? null : value.toISOString());
const isoRequired = (value: Date): string => value.toISOString();
/** JSON parameters go as text: pg would turn a JS array into a Postgres array. */
const jsonParam = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value));

async function transaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    // A connection that cannot even roll back is dropped from the pool instead of being reused mid-transaction.
    await client.query('ROLLBACK').catch(() => (broken = true));
    throw error;
  } finally {
    client.release(broken);
  }
}

async function migrate(pool: pg.Pool): Promise<void> {
  await transaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [migrationLockId]);
    await client.query('CREATE TABLE IF NOT EXISTS voxd_schema (version INTEGER NOT NULL)');
    await client.query('INSERT INTO voxd_schema (version) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM voxd_schema)');
    const current = (await client.query<{ version: number }>('SELECT version FROM voxd_schema')).rows[0]!.version;
    for (let version = current; version < migrations.length; version++) {
      await client.query(migrations[version]!);
      await client.query('UPDATE voxd_schema SET version = $1', [version + 1]);
    }
  });
}

interface KeyRow {
  id: string;
  name: string;
  hash: string;
  prefix: string;
  scopes: Scope[];
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
  webhook_secret: string;
}

const keyFromRow = (row: KeyRow): ApiKeyRecord => ({
  id: row.id,
  name: row.name,
  hash: row.hash,
  prefix: row.prefix,
  scopes: row.scopes,
  createdAt: isoRequired(row.created_at),
  lastUsedAt: iso(row.last_used_at),
  revokedAt: iso(row.revoked_at),
  webhookSecret: row.webhook_secret,
});

function postgresKeys(pool: pg.Pool): KeyRepository {
  const one = async (sql: string, params: unknown[]) => {
    const row = (await pool.query<KeyRow>(sql, params)).rows[0];
    return row && keyFromRow(row);
  };
  return {
    insert: async (record) => {
      await pool.query(
        `INSERT INTO api_keys (id, name, hash, prefix, scopes, created_at, last_used_at, revoked_at, webhook_secret)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [record.id, record.name, record.hash, record.prefix, jsonParam(record.scopes), record.createdAt, record.lastUsedAt, record.revokedAt, record.webhookSecret],
      );
    },
    findByHash: (hash) => one('SELECT * FROM api_keys WHERE hash = $1', [hash]),
    get: (id) => one('SELECT * FROM api_keys WHERE id = $1', [id]),
    list: async () => (await pool.query<KeyRow>('SELECT * FROM api_keys ORDER BY created_at, id')).rows.map(keyFromRow),
    revoke: async (id, at) => ((await pool.query('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2', [at, id])).rowCount ?? 0) > 0,
    touch: async (id, at) => void (await pool.query('UPDATE api_keys SET last_used_at = $1 WHERE id = $2', [at, id])),
    setWebhookSecret: async (id, secret) => ((await pool.query('UPDATE api_keys SET webhook_secret = $1 WHERE id = $2', [secret, id])).rowCount ?? 0) > 0,
  };
}

interface FileRow {
  id: string;
  owner_key_id: string;
  name: string;
  content_type: string;
  /** BIGINT arrives as a string (it may exceed 2^53); file sizes never do. */
  bytes: string;
  blob_key: string;
  created_at: Date;
  expires_at: Date;
}

const fileFromRow = (row: FileRow): FileRecord => ({
  id: row.id,
  ownerKeyId: row.owner_key_id,
  name: row.name,
  contentType: row.content_type,
  bytes: Number(row.bytes),
  blobKey: row.blob_key,
  createdAt: isoRequired(row.created_at),
  expiresAt: isoRequired(row.expires_at),
});

interface VoiceRow {
  id: string;
  owner_key_id: string;
  name: string;
  languages: string[];
  gender_estimate: 'female' | 'male' | null;
  description: string;
  labels: Record<string, string>;
  reference_seconds: number;
  engine: string;
  created_at: Date;
  blob_prefix: string;
  analysis: Record<string, unknown>;
  purpose: VoicePurpose;
}

const voiceFromRow = (row: VoiceRow): VoiceRecord => ({
  id: row.id,
  ownerKeyId: row.owner_key_id,
  name: row.name,
  languages: row.languages,
  genderEstimate: row.gender_estimate,
  description: row.description,
  labels: row.labels,
  referenceSeconds: row.reference_seconds,
  engine: row.engine,
  createdAt: isoRequired(row.created_at),
  blobPrefix: row.blob_prefix,
  analysis: row.analysis,
  purpose: row.purpose,
});

function postgresVoices(pool: pg.Pool): VoiceRepository {
  return {
    insert: async (record) => {
      await pool.query(
        `INSERT INTO voices (id, owner_key_id, name, languages, gender_estimate, description, labels, reference_seconds, engine, created_at, blob_prefix, analysis, purpose)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
        [
          record.id,
          record.ownerKeyId,
          record.name,
          jsonParam(record.languages),
          record.genderEstimate,
          record.description,
          jsonParam(record.labels),
          record.referenceSeconds,
          record.engine,
          record.createdAt,
          record.blobPrefix,
          jsonParam(record.analysis),
          record.purpose,
        ],
      );
    },
    get: async (id) => {
      const row = (await pool.query<VoiceRow>('SELECT * FROM voices WHERE id = $1', [id])).rows[0];
      return row && voiceFromRow(row);
    },
    list: async () => (await pool.query<VoiceRow>('SELECT * FROM voices ORDER BY created_at, id')).rows.map(voiceFromRow),
    update: (id, changes) =>
      transaction(pool, async (client) => {
        const row = (await client.query<VoiceRow>('SELECT * FROM voices WHERE id = $1 FOR UPDATE', [id])).rows[0];
        if (!row) return undefined;
        const updated = { ...voiceFromRow(row), ...changes };
        await client.query('UPDATE voices SET name = $2, description = $3, labels = $4, analysis = $5 WHERE id = $1', [
          id,
          updated.name,
          updated.description,
          jsonParam(updated.labels),
          jsonParam(updated.analysis),
        ]);
        return updated;
      }),
    delete: async (id) => ((await pool.query('DELETE FROM voices WHERE id = $1', [id])).rowCount ?? 0) > 0,
  };
}

interface JobRow {
  id: string;
  owner_key_id: string;
  operation: JobRecord['operation'];
  route: string;
  status: JobRecord['status'];
  params: Record<string, unknown>;
  inputs: JobRecord['inputs'];
  input_seconds: number | null;
  progress: JobRecord['progress'];
  result: unknown;
  error: JobRecord['error'];
  webhook_url: string | null;
  attempts: number;
  max_attempts: number;
  worker_id: string | null;
  lease_expires_at: Date | null;
  cancel_requested: boolean;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  expires_at: Date;
}

const jobFromRow = (row: JobRow): JobRecord => ({
  id: row.id,
  ownerKeyId: row.owner_key_id,
  operation: row.operation,
  route: row.route,
  status: row.status,
  params: row.params,
  inputs: row.inputs,
  inputSeconds: row.input_seconds,
  progress: row.progress,
  result: row.result,
  error: row.error,
  webhookUrl: row.webhook_url,
  attempts: row.attempts,
  maxAttempts: row.max_attempts,
  workerId: row.worker_id,
  leaseExpiresAt: iso(row.lease_expires_at),
  cancelRequested: row.cancel_requested,
  createdAt: isoRequired(row.created_at),
  startedAt: iso(row.started_at),
  finishedAt: iso(row.finished_at),
  expiresAt: isoRequired(row.expires_at),
});

async function insertDelivery(client: Queryable, delivery: WebhookDeliveryRecord): Promise<void> {
  await client.query(
    `INSERT INTO webhook_deliveries (id, job_id, owner_key_id, url, event, payload, status, attempts, next_attempt_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (id) DO NOTHING`,
    [delivery.id, delivery.jobId, delivery.ownerKeyId, delivery.url, delivery.event, delivery.payload, delivery.status, jsonParam(delivery.attempts), delivery.nextAttemptAt, delivery.createdAt],
  );
}

function postgresJobs(pool: pg.Pool): JobRepository {
  const oneJob = async (client: Queryable, sql: string, params: unknown[]) => {
    const row = (await client.query<JobRow>(sql, params)).rows[0];
    return row && jobFromRow(row);
  };
  return {
    insert: async (job) => {
      await pool.query(
        `INSERT INTO jobs (id, owner_key_id, operation, route, status, params, inputs, input_seconds, progress, result, error, webhook_url,
           attempts, max_attempts, worker_id, lease_expires_at, cancel_requested, created_at, started_at, finished_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)`,
        [
          job.id,
          job.ownerKeyId,
          job.operation,
          job.route,
          job.status,
          jsonParam(job.params),
          jsonParam(job.inputs),
          job.inputSeconds,
          jsonParam(job.progress),
          jsonParam(job.result),
          jsonParam(job.error),
          job.webhookUrl,
          job.attempts,
          job.maxAttempts,
          job.workerId,
          job.leaseExpiresAt,
          job.cancelRequested,
          job.createdAt,
          job.startedAt,
          job.finishedAt,
          job.expiresAt,
        ],
      );
    },
    get: (id) => oneJob(pool, 'SELECT * FROM jobs WHERE id = $1', [id]),
    list: async (query) => {
      const where: string[] = [];
      const params: unknown[] = [];
      const param = (value: unknown) => `$${params.push(value)}`;
      if (query.ownerKeyId !== undefined) where.push(`owner_key_id = ${param(query.ownerKeyId)}`);
      if (query.status) where.push(`status = ${param(query.status)}`);
      if (query.operation) where.push(`operation = ${param(query.operation)}`);
      if (query.before) where.push(`(created_at, id) < (${param(query.before.createdAt)}::timestamptz, ${param(query.before.id)})`);
      const sql = `SELECT * FROM jobs ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT ${param(query.limit)}`;
      return (await pool.query<JobRow>(sql, params)).rows.map(jobFromRow);
    },
    claim: (operations, workerId, now, leaseExpiresAt) =>
      transaction(pool, async (client) => {
        const abandoned = await client.query<JobRow>(
          `SELECT * FROM jobs WHERE status = 'running' AND lease_expires_at <= $1 AND (attempts >= max_attempts OR cancel_requested)
             AND operation = ANY($2::text[])
           FOR UPDATE SKIP LOCKED`,
          [now, operations],
        );
        // SKIP LOCKED: a job another claimer is taking right now is passed over, so two claimers never get the same one.
        const claimed = await oneJob(
          client,
          `UPDATE jobs SET status = 'running', worker_id = $1, lease_expires_at = $3, attempts = attempts + 1, started_at = COALESCE(started_at, $2)
           WHERE id = (SELECT id FROM jobs
                       WHERE operation = ANY($4::text[]) AND NOT cancel_requested
                         AND (status = 'queued' OR (status = 'running' AND lease_expires_at <= $2 AND attempts < max_attempts))
                       ORDER BY created_at, id LIMIT 1
                       FOR UPDATE SKIP LOCKED)
           RETURNING *`,
          [workerId, now, leaseExpiresAt, operations],
        );
        return { ...(claimed ? { claimed } : {}), abandoned: abandoned.rows.map(jobFromRow) };
      }),
    heartbeat: async (id, workerId, leaseExpiresAt, progress) => {
      const row = (
        await pool.query<{ cancel_requested: boolean }>(
          `UPDATE jobs SET lease_expires_at = $3, progress = COALESCE($4::json, progress)
           WHERE id = $1 AND status = 'running' AND worker_id = $2 RETURNING cancel_requested`,
          [id, workerId, leaseExpiresAt, jsonParam(progress)],
        )
      ).rows[0];
      return { owned: row !== undefined, cancelRequested: row?.cancel_requested === true };
    },
    finish: (id, workerId, outcome, now, expiresAt, delivery) =>
      transaction(pool, async (client) => {
        const job = await oneJob(
          client,
          `UPDATE jobs SET status = $3, result = $4, error = $5, finished_at = $6, expires_at = $7, worker_id = NULL, lease_expires_at = NULL
           WHERE id = $1 AND ((status = 'running' AND worker_id = $2) OR (status = 'queued' AND $2::text IS NULL))
           RETURNING *`,
          [id, workerId, outcome.status, jsonParam(outcome.result), jsonParam(outcome.error), now, expiresAt],
        );
        if (job && delivery) await insertDelivery(client, delivery);
        return job;
      }),
    requestCancel: (id) => oneJob(pool, `UPDATE jobs SET cancel_requested = TRUE WHERE id = $1 AND status IN ('queued', 'running') RETURNING *`, [id]),
    release: async (id, workerId) =>
      (
        (
          await pool.query(
            `UPDATE jobs SET status = 'queued', worker_id = NULL, lease_expires_at = NULL, attempts = attempts - 1
             WHERE id = $1 AND status = 'running' AND worker_id = $2`,
            [id, workerId],
          )
        ).rowCount ?? 0
      ) > 0,
    expired: async (now) => (await pool.query<JobRow>(`SELECT * FROM jobs WHERE expires_at <= $1 AND status IN ('succeeded', 'failed', 'cancelled')`, [now])).rows.map(jobFromRow),
    delete: (id) =>
      transaction(pool, async (client) => {
        await client.query('DELETE FROM webhook_deliveries WHERE job_id = $1', [id]);
        await client.query('DELETE FROM jobs WHERE id = $1', [id]);
      }),
  };
}

interface DeliveryRow {
  id: string;
  job_id: string;
  owner_key_id: string;
  url: string;
  event: string;
  payload: string;
  status: WebhookDeliveryRecord['status'];
  attempts: WebhookDeliveryRecord['attempts'];
  next_attempt_at: Date;
  created_at: Date;
}

const deliveryFromRow = (row: DeliveryRow): WebhookDeliveryRecord => ({
  id: row.id,
  jobId: row.job_id,
  ownerKeyId: row.owner_key_id,
  url: row.url,
  event: row.event,
  payload: row.payload,
  status: row.status,
  attempts: row.attempts,
  nextAttemptAt: isoRequired(row.next_attempt_at),
  createdAt: isoRequired(row.created_at),
});

function postgresWebhooks(pool: pg.Pool): WebhookRepository {
  return {
    claimDue: async (now, leaseUntil, limit) =>
      (
        await pool.query<DeliveryRow>(
          `UPDATE webhook_deliveries SET next_attempt_at = $2
           WHERE id IN (SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= $1
                        ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED)
           RETURNING *`,
          [now, leaseUntil, limit],
        )
      ).rows.map(deliveryFromRow),
    recordAttempt: (id, attempt, status, nextAttemptAt) =>
      transaction(pool, async (client) => {
        const row = (await client.query<Pick<DeliveryRow, 'attempts'>>('SELECT attempts FROM webhook_deliveries WHERE id = $1 FOR UPDATE', [id])).rows[0];
        if (!row) return;
        await client.query('UPDATE webhook_deliveries SET attempts = $2, status = $3, next_attempt_at = $4 WHERE id = $1', [
          id,
          jsonParam([...row.attempts, attempt]),
          status,
          nextAttemptAt,
        ]);
      }),
    forJob: async (jobId) => (await pool.query<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE job_id = $1 ORDER BY created_at', [jobId])).rows.map(deliveryFromRow),
    nextDue: async () => {
      const at = (await pool.query<{ at: Date | null }>(`SELECT MIN(next_attempt_at) AS at FROM webhook_deliveries WHERE status = 'pending'`)).rows[0]?.at ?? null;
      return iso(at) ?? undefined;
    },
  };
}

export async function openPostgresStore(databaseUrl: string, blobs: BlobStore): Promise<Store> {
  const pool = new pg.Pool({ connectionString: databaseUrl });
  // An idle connection the server dropped (restart, failover) is discarded by the pool; the next query opens a new one.
  pool.on('error', () => undefined);
  try {
    await migrate(pool);
  } catch (error) {
    await pool.end();
    throw error;
  }
  return {
    keys: postgresKeys(pool),
    files: {
      insert: async (record) => {
        await pool.query(
          `INSERT INTO files (id, owner_key_id, name, content_type, bytes, blob_key, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
          [record.id, record.ownerKeyId, record.name, record.contentType, record.bytes, record.blobKey, record.createdAt, record.expiresAt],
        );
      },
      get: async (id) => {
        const row = (await pool.query<FileRow>('SELECT * FROM files WHERE id = $1', [id])).rows[0];
        return row && fileFromRow(row);
      },
      expired: async (now) => (await pool.query<FileRow>('SELECT * FROM files WHERE expires_at <= $1', [now])).rows.map(fileFromRow),
      delete: async (id) => void (await pool.query('DELETE FROM files WHERE id = $1', [id])),
    },
    voices: postgresVoices(pool),
    jobs: postgresJobs(pool),
    webhooks: postgresWebhooks(pool),
    blobs,
    close: () => pool.end(),
  };
}
