/**
 * The records' queries, written once for both backends: named parameters (`@name`), the tables of tables.ts, and the
 * dialect's fragments where SQLite and PostgreSQL differ. sqlite.ts and postgres.ts supply the connection.
 */
import type { BlobStore, Store } from '../store.js';
import { cast, fromRow, toRow, type Dialect, type Row } from './dialect.js';
import { apiKeys, files, jobs, pronunciationDictionaries, voices, webhookDeliveries, type Table, type TableSpec } from './tables.js';

export type Params = Record<string, unknown>;

export interface Queries {
  /** The rows a statement returns (a SELECT, or a change with RETURNING). */
  rows(sql: string, params?: Params): Promise<Row[]>;
  /** How many rows a statement changed. */
  changes(sql: string, params?: Params): Promise<number>;
}

export interface SqlClient extends Queries {
  /** Runs `work` in one transaction that writes (SQLite: BEGIN IMMEDIATE), committed when it resolves. */
  transaction<T>(work: (client: Queries) => Promise<T>): Promise<T>;
}

const insert = (table: TableSpec): string => {
  const names = Object.values(table.columns).map((column) => column.name);
  return `INSERT INTO ${table.name} (${names.join(', ')}) VALUES (${names.map((name) => `@${name}`).join(', ')})`;
};

export function sqlStore(client: SqlClient, dialect: Dialect, blobs: BlobStore, close: () => Promise<void>): Store {
  const all = async <R>(table: Table<R>, sql: string, params?: Params, queries: Queries = client): Promise<R[]> =>
    (await queries.rows(sql, params)).map((row) => fromRow(dialect, table, row));
  const one = async <R>(table: Table<R>, sql: string, params?: Params, queries: Queries = client): Promise<R | undefined> =>
    (await all(table, sql, params, queries))[0];
  const changed = async (sql: string, params: Params): Promise<boolean> => (await client.changes(sql, params)) > 0;
  const json = (value: unknown) => dialect.codecs.json.write(value);

  const keys: Store['keys'] = {
    insert: async (record) => void (await client.changes(insert(apiKeys), toRow(dialect, apiKeys, record))),
    findByHash: (hash) => one(apiKeys, 'SELECT * FROM api_keys WHERE hash = @hash', { hash }),
    get: (id) => one(apiKeys, 'SELECT * FROM api_keys WHERE id = @id', { id }),
    list: () => all(apiKeys, 'SELECT * FROM api_keys ORDER BY created_at, id'),
    revoke: (id, at) => changed('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, @at) WHERE id = @id', { id, at }),
    touch: async (id, at) => void (await client.changes('UPDATE api_keys SET last_used_at = @at WHERE id = @id', { id, at })),
    setWebhookSecret: (id, secret) => changed('UPDATE api_keys SET webhook_secret = @secret WHERE id = @id', { id, secret }),
  };

  const fileRepository: Store['files'] = {
    insert: async (record) => void (await client.changes(insert(files), toRow(dialect, files, record))),
    get: (id) => one(files, 'SELECT * FROM files WHERE id = @id', { id }),
    expired: (now) => all(files, 'SELECT * FROM files WHERE expires_at <= @now', { now }),
    delete: async (id) => void (await client.changes('DELETE FROM files WHERE id = @id', { id })),
  };

  const voiceRepository: Store['voices'] = {
    insert: async (record) => void (await client.changes(insert(voices), toRow(dialect, voices, record))),
    get: (id) => one(voices, 'SELECT * FROM voices WHERE id = @id', { id }),
    list: () => all(voices, 'SELECT * FROM voices ORDER BY created_at, id'),
    update: (id, changes) =>
      client.transaction(async (tx) => {
        const current = await one(voices, `SELECT * FROM voices WHERE id = @id${dialect.lock}`, { id }, tx);
        if (!current) return undefined;
        const updated = { ...current, ...changes };
        const sql = 'UPDATE voices SET name = @name, description = @description, labels = @labels, analysis = @analysis WHERE id = @id';
        await tx.changes(sql, toRow(dialect, voices, updated));
        return updated;
      }),
    delete: (id) => changed('DELETE FROM voices WHERE id = @id', { id }),
  };

  const dictionaries = pronunciationDictionaries;
  const dictionaryRepository: Store['pronunciationDictionaries'] = {
    insert: async (record) => void (await client.changes(insert(dictionaries), toRow(dialect, dictionaries, record))),
    get: (id) => one(dictionaries, 'SELECT * FROM pronunciation_dictionaries WHERE id = @id', { id }),
    list: () => all(dictionaries, 'SELECT * FROM pronunciation_dictionaries ORDER BY created_at, id'),
    // Read and written in one transaction: two PATCHes adding rules at once both keep theirs.
    update: (id, changes) =>
      client.transaction(async (tx) => {
        const current = await one(dictionaries, `SELECT * FROM pronunciation_dictionaries WHERE id = @id${dialect.lock}`, { id }, tx);
        if (!current) return undefined;
        const updated = { ...current, ...changes };
        await tx.changes(
          'UPDATE pronunciation_dictionaries SET name = @name, rules = @rules WHERE id = @id',
          toRow(dialect, dictionaries, updated),
        );
        return updated;
      }),
    delete: (id) => changed('DELETE FROM pronunciation_dictionaries WHERE id = @id', { id }),
  };

  const jobRepository: Store['jobs'] = {
    insert: async (record) => void (await client.changes(insert(jobs), toRow(dialect, jobs, record))),
    get: (id) => one(jobs, 'SELECT * FROM jobs WHERE id = @id', { id }),
    list: (query) => {
      const where = [
        query.ownerKeyId !== undefined ? 'owner_key_id = @ownerKeyId' : '',
        query.status ? 'status = @status' : '',
        query.operation ? 'operation = @operation' : '',
        query.before ? `(created_at, id) < (${cast(dialect, '@beforeAt', 'time')}, @beforeId)` : '',
      ].filter(Boolean);
      const { ownerKeyId, status, operation, limit } = query;
      const params = { ownerKeyId, status, operation, limit, beforeAt: query.before?.createdAt, beforeId: query.before?.id };
      const filter = where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '';
      return all(jobs, `SELECT * FROM jobs${filter} ORDER BY created_at DESC, id DESC LIMIT @limit`, params);
    },
    claim: async (operations, workerId, now, leaseExpiresAt) => {
      // Workers poll often: a plain read first, so an idle poll opens no transaction (on SQLite: takes no write lock).
      const claimable = `SELECT 1 AS found FROM jobs WHERE status = 'queued' OR (status = 'running' AND lease_expires_at <= @now) LIMIT 1`;
      if ((await client.rows(claimable, { now })).length === 0) return { abandoned: [] };
      const params = { operations: dialect.list(operations), workerId, now, leaseExpiresAt };
      return client.transaction(async (tx) => {
        const abandoned = await all(
          jobs,
          `SELECT * FROM jobs WHERE status = 'running' AND lease_expires_at <= @now AND (attempts >= max_attempts OR cancel_requested)
             AND operation ${dialect.inList('@operations')}${dialect.skipLocked}`,
          params,
          tx,
        );
        const claimed = await one(
          jobs,
          `UPDATE jobs SET status = 'running', worker_id = @workerId, lease_expires_at = @leaseExpiresAt, attempts = attempts + 1,
             started_at = COALESCE(started_at, @now)
           WHERE id = (SELECT id FROM jobs
                       WHERE operation ${dialect.inList('@operations')} AND NOT cancel_requested
                         AND (status = 'queued' OR (status = 'running' AND lease_expires_at <= @now AND attempts < max_attempts))
                       ORDER BY created_at, id LIMIT 1${dialect.skipLocked})
           RETURNING *`,
          params,
          tx,
        );
        return { ...(claimed ? { claimed } : {}), abandoned };
      });
    },
    heartbeat: async (id, workerId, leaseExpiresAt, progress) => {
      const [row] = await client.rows(
        `UPDATE jobs SET lease_expires_at = @leaseExpiresAt, progress = COALESCE(${cast(dialect, '@progress', 'json')}, progress)
         WHERE id = @id AND status = 'running' AND worker_id = @workerId RETURNING cancel_requested`,
        { id, workerId, leaseExpiresAt, progress: json(progress) },
      );
      return { owned: row !== undefined, cancelRequested: row !== undefined && dialect.codecs.boolean.read(row.cancel_requested) === true };
    },
    finish: (id, workerId, outcome, now, expiresAt, delivery) =>
      client.transaction(async (tx) => {
        const job = await one(
          jobs,
          `UPDATE jobs SET status = @status, result = @result, error = @error, finished_at = @now, expires_at = @expiresAt,
             worker_id = NULL, lease_expires_at = NULL
           WHERE id = @id
             AND ((status = 'running' AND worker_id = @workerId) OR (status = 'queued' AND ${cast(dialect, '@workerId', 'text')} IS NULL))
           RETURNING *`,
          { id, workerId, status: outcome.status, result: json(outcome.result), error: json(outcome.error), now, expiresAt },
          tx,
        );
        // A retried settle brings the same delivery id: it is kept once.
        if (job && delivery) {
          await tx.changes(`${insert(webhookDeliveries)} ON CONFLICT (id) DO NOTHING`, toRow(dialect, webhookDeliveries, delivery));
        }
        return job;
      }),
    requestCancel: (id) =>
      one(jobs, `UPDATE jobs SET cancel_requested = TRUE WHERE id = @id AND status IN ('queued', 'running') RETURNING *`, { id }),
    release: (id, workerId) =>
      changed(
        `UPDATE jobs SET status = 'queued', worker_id = NULL, lease_expires_at = NULL, attempts = attempts - 1
         WHERE id = @id AND status = 'running' AND worker_id = @workerId`,
        { id, workerId },
      ),
    expired: (now) => all(jobs, `SELECT * FROM jobs WHERE expires_at <= @now AND status IN ('succeeded', 'failed', 'cancelled')`, { now }),
    delete: (id) =>
      client.transaction(async (tx) => {
        await tx.changes('DELETE FROM webhook_deliveries WHERE job_id = @id', { id });
        await tx.changes('DELETE FROM jobs WHERE id = @id', { id });
      }),
  };

  const webhooks: Store['webhooks'] = {
    claimDue: (now, leaseUntil, limit) =>
      all(
        webhookDeliveries,
        `UPDATE webhook_deliveries SET next_attempt_at = @leaseUntil
         WHERE id IN (SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= @now
                      ORDER BY next_attempt_at LIMIT @limit${dialect.skipLocked})
         RETURNING *`,
        { now, leaseUntil, limit },
      ),
    recordAttempt: (id, attempt, status, nextAttemptAt) =>
      client.transaction(async (tx) => {
        const [row] = await tx.rows(`SELECT attempts FROM webhook_deliveries WHERE id = @id${dialect.lock}`, { id });
        if (!row) return;
        const attempts = [...(dialect.codecs.json.read(row.attempts) as unknown[]), attempt];
        const sql = 'UPDATE webhook_deliveries SET attempts = @attempts, status = @status, next_attempt_at = @nextAttemptAt WHERE id = @id';
        await tx.changes(sql, { id, attempts: json(attempts), status, nextAttemptAt });
      }),
    forJob: (jobId) => all(webhookDeliveries, 'SELECT * FROM webhook_deliveries WHERE job_id = @jobId ORDER BY created_at', { jobId }),
    nextDue: async () => {
      const [row] = await client.rows(`SELECT MIN(next_attempt_at) AS at FROM webhook_deliveries WHERE status = 'pending'`);
      return (dialect.codecs.time.read(row?.at ?? null) as string | null) ?? undefined;
    },
  };

  return {
    keys,
    files: fileRepository,
    voices: voiceRepository,
    pronunciationDictionaries: dictionaryRepository,
    jobs: jobRepository,
    webhooks,
    blobs,
    close,
  };
}
