/**
 * Databases made before the tables were declared once (storage/sql/tables.ts) keep working: the migrations of the two
 * hand-written stores, copied here as they shipped, make a SQLite file at each of its versions and a PostgreSQL schema at
 * each of its; opened by today's store, each reaches the same schema as a new database, and the rows in it read back
 * whole and take part in the job claim.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { openStore } from '../../src/storage/open.js';
import { openSqliteStore } from '../../src/storage/sql/sqlite.js';
import type { Store } from '../../src/storage/store.js';
import type {
  ApiKeyRecord,
  FileRecord,
  JobRecord,
  PronunciationDictionaryRecord,
  VoiceRecord,
  WebhookDeliveryRecord,
} from '../../src/core/records.js';
import { makeTempDir } from '../helpers/app.js';
import { startPostgres } from '../helpers/postgres.js';

/** The SQLite store's migrations as they shipped (user_version = how many ran); the third gave every key a secret. */
const sqliteHistory = [
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
  `ALTER TABLE api_keys ADD COLUMN webhook_secret TEXT NOT NULL DEFAULT '';
   UPDATE api_keys SET webhook_secret = 'whsec_' || id;`,
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
  `CREATE TABLE pronunciation_dictionaries (
     id TEXT PRIMARY KEY, owner_key_id TEXT NOT NULL, name TEXT NOT NULL, rules TEXT NOT NULL, created_at TEXT NOT NULL);`,
];

/** The PostgreSQL store's migrations as they shipped (voxd_schema.version = how many ran). */
const postgresHistory = [
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
  `CREATE TABLE pronunciation_dictionaries (
     id TEXT COLLATE "C" PRIMARY KEY, owner_key_id TEXT NOT NULL, name TEXT NOT NULL, rules JSON NOT NULL,
     created_at TIMESTAMPTZ NOT NULL);`,
];

const at = (seconds: number): string => new Date(Date.parse('2030-01-01T00:00:00.000Z') + seconds * 1000).toISOString();

/**
 * Rows as the old stores wrote them, each written once its table exists (the same SQL suits both backends). A key made
 * before webhooks existed has no secret column yet; PostgreSQL's keys always had one.
 */
const oldRows = (keySecret: boolean): Record<string, string> => ({
  api_keys: `INSERT INTO api_keys
      (id, name, hash, prefix, scopes, created_at, last_used_at, revoked_at${keySecret ? ', webhook_secret' : ''})
    VALUES ('key_old', 'ops', 'hash-old', 'vx_old', '["tts","admin"]', '${at(0)}', '${at(5)}', NULL${keySecret ? ", 'whsec_old'" : ''})`,
  files: `INSERT INTO files (id, owner_key_id, name, content_type, bytes, blob_key, created_at, expires_at)
    VALUES ('file_old', 'key_old', 'stem.wav', 'audio/wav', 5000000000, 'files/file_old', '${at(1)}', '${at(100)}')`,
  voices: `INSERT INTO voices
      (id, owner_key_id, name, languages, gender_estimate, description, labels, reference_seconds, engine, created_at, blob_prefix,
       analysis)
    VALUES ('voice_old', 'key_old', 'Old', '["en"]', 'female', '', '{"accent":"scottish"}', 12.5, 'clone', '${at(2)}', 'voices/voice_old',
      '{"speaker":{"embedding":[0.5,-0.25]}}')`,
  jobs: `INSERT INTO jobs (id, owner_key_id, operation, route, status, params, inputs, input_seconds, progress, result, error, webhook_url,
      attempts, max_attempts, worker_id, lease_expires_at, cancel_requested, created_at, started_at, finished_at, expires_at)
    VALUES ('job_old', 'key_old', 'transcribe', 'native', 'queued', '{"language":"en","diarize":true}',
      '[{"field":"audio","blobKey":"jobs/job_old/audio-0","filename":"talk.wav","bytes":1234}]', 12.5, NULL, NULL, NULL,
      'http://127.0.0.1:9/hook', 0, 3, NULL, NULL, FALSE, '${at(3)}', NULL, NULL, '${at(86_400)}')`,
  webhook_deliveries: `INSERT INTO webhook_deliveries
      (id, job_id, owner_key_id, url, event, payload, status, attempts, next_attempt_at, created_at)
    VALUES ('msg_old', 'job_gone', 'key_old', 'http://127.0.0.1:9/hook', 'job.succeeded', '{"type":"job.succeeded"}', 'pending',
      '[{"at":"${at(4)}","status":503,"error":null,"durationMs":12.5}]', '${at(20)}', '${at(4)}')`,
  pronunciation_dictionaries: `INSERT INTO pronunciation_dictionaries (id, owner_key_id, name, rules, created_at)
    VALUES ('pdict_old', 'key_old', 'Names', '[{"kind":"alias","graphemes":["W3C"],"alias":"World Wide Web Consortium","language":"en"}]',
      '${at(6)}')`,
});

const expected = {
  key: {
    id: 'key_old',
    name: 'ops',
    hash: 'hash-old',
    prefix: 'vx_old',
    scopes: ['tts', 'admin'],
    createdAt: at(0),
    lastUsedAt: at(5),
    revokedAt: null,
  },
  file: {
    id: 'file_old',
    ownerKeyId: 'key_old',
    name: 'stem.wav',
    contentType: 'audio/wav',
    bytes: 5_000_000_000,
    blobKey: 'files/file_old',
    createdAt: at(1),
    expiresAt: at(100),
  },
  voice: {
    id: 'voice_old',
    ownerKeyId: 'key_old',
    name: 'Old',
    languages: ['en'],
    genderEstimate: 'female',
    description: '',
    labels: { accent: 'scottish' },
    referenceSeconds: 12.5,
    engine: 'clone',
    createdAt: at(2),
    blobPrefix: 'voices/voice_old',
    analysis: { speaker: { embedding: [0.5, -0.25] } },
    purpose: 'speech',
  },
  job: {
    id: 'job_old',
    ownerKeyId: 'key_old',
    operation: 'transcribe',
    route: 'native',
    status: 'queued',
    params: { language: 'en', diarize: true },
    inputs: [{ field: 'audio', blobKey: 'jobs/job_old/audio-0', filename: 'talk.wav', bytes: 1234 }],
    inputSeconds: 12.5,
    progress: null,
    result: null,
    error: null,
    webhookUrl: 'http://127.0.0.1:9/hook',
    attempts: 0,
    maxAttempts: 3,
    workerId: null,
    leaseExpiresAt: null,
    cancelRequested: false,
    createdAt: at(3),
    startedAt: null,
    finishedAt: null,
    expiresAt: at(86_400),
  },
  delivery: {
    id: 'msg_old',
    jobId: 'job_gone',
    ownerKeyId: 'key_old',
    url: 'http://127.0.0.1:9/hook',
    event: 'job.succeeded',
    payload: '{"type":"job.succeeded"}',
    status: 'pending',
    attempts: [{ at: at(4), status: 503, error: null, durationMs: 12.5 }],
    nextAttemptAt: at(20),
    createdAt: at(4),
  },
  dictionary: {
    id: 'pdict_old',
    ownerKeyId: 'key_old',
    name: 'Names',
    rules: [{ kind: 'alias', graphemes: ['W3C'], alias: 'World Wide Web Consortium', language: 'en' }],
    createdAt: at(6),
  },
} satisfies Record<
  string,
  Omit<ApiKeyRecord, 'webhookSecret'> | FileRecord | VoiceRecord | JobRecord | WebhookDeliveryRecord | PronunciationDictionaryRecord
>;

/** The rows of the tables that exist read back whole through today's store; the old job is claimed and settled. */
async function checkRecords(store: Store, tables: Set<string>): Promise<void> {
  const key = await store.keys.findByHash('hash-old');
  const { webhookSecret, ...rest } = key!;
  assert.deepEqual(rest, expected.key);
  assert.match(webhookSecret, /^whsec_/, 'a key made before webhooks got a secret');
  assert.deepEqual(await store.files.get('file_old'), expected.file);
  if (tables.has('voices')) assert.deepEqual(await store.voices.get('voice_old'), expected.voice);
  if (tables.has('jobs')) {
    assert.deepEqual(await store.jobs.get('job_old'), expected.job);
    assert.deepEqual(await store.webhooks.forJob('job_gone'), [expected.delivery]);
    const { claimed, abandoned } = await store.jobs.claim(['transcribe'], 'worker_a', at(10), at(40));
    const running = { ...expected.job, status: 'running', workerId: 'worker_a', leaseExpiresAt: at(40), attempts: 1, startedAt: at(10) };
    assert.deepEqual([claimed, abandoned], [running, []]);
    const outcome = { status: 'succeeded' as const, result: { text: 'hi' } };
    assert.equal((await store.jobs.finish('job_old', 'worker_a', outcome, at(11), at(500), undefined))?.status, 'succeeded');
  }
  if (tables.has('pronunciation_dictionaries'))
    assert.deepEqual(await store.pronunciationDictionaries.get('pdict_old'), expected.dictionary);
  // A record written now sits beside the old ones.
  await store.voices.insert({ ...expected.voice, id: 'voice_new', purpose: 'identify' });
  assert.equal((await store.voices.get('voice_new'))?.purpose, 'identify');
}

/** Tables, columns (type, nullability, default, key) and indexes of a SQLite file, and its version. */
function sqliteSchema(file: string): unknown {
  const db = new Database(file, { readonly: true });
  try {
    const tables = db.prepare<[], { name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).all();
    return {
      version: db.pragma('user_version', { simple: true }),
      tables: tables.map(({ name }) => ({
        name,
        columns: db.pragma(`table_xinfo(${name})`),
        indexes: (db.pragma(`index_list(${name})`) as Array<{ name: string }>).map((index) => ({
          ...index,
          columns: db.pragma(`index_info(${index.name})`),
        })),
      })),
    };
  } finally {
    db.close();
  }
}

function sqliteFile(version: number): { dataDir: string; file: string } {
  const dataDir = makeTempDir('migrations');
  const file = path.join(dataDir, 'voxd.sqlite');
  const db = new Database(file);
  sqliteHistory.slice(0, version).forEach((sql, index) => {
    db.exec(sql);
    for (const table of sqlTables(sql)) db.exec(oldRows(false)[table]!);
    db.pragma(`user_version = ${index + 1}`);
  });
  db.close();
  return { dataDir, file };
}

const sqlTables = (sql: string): string[] => [...sql.matchAll(/CREATE TABLE (\w+)/g)].map((match) => match[1]!);

describe('SQLite files made by the stores before the tables were declared once', () => {
  const current = sqliteFile(sqliteHistory.length);
  const fresh = path.join(makeTempDir('migrations'), 'voxd.sqlite');
  before(() => openSqliteStore(path.dirname(fresh)).close());

  test('a new database has the schema the old migrations made', () => {
    assert.deepEqual(sqliteSchema(fresh), sqliteSchema(current.file));
  });

  for (let version = 1; version <= sqliteHistory.length; version++) {
    test(`a file at version ${version} opens, reaches the new schema and keeps its rows`, async () => {
      const { dataDir, file } = sqliteFile(version);
      const store = openSqliteStore(dataDir);
      try {
        assert.deepEqual(sqliteSchema(file), sqliteSchema(fresh));
        await checkRecords(store, new Set(sqliteHistory.slice(0, version).flatMap(sqlTables)));
      } finally {
        await store.close();
      }
    });
  }
});

describe('PostgreSQL schemas made by the stores before the tables were declared once', () => {
  let postgres: Awaited<ReturnType<typeof startPostgres>>;
  before(async () => {
    postgres = await startPostgres();
  });
  after(() => postgres?.stop());

  /** A new database at `version` of the old migrations, its rows written as the old store did. */
  async function database(version: number): Promise<string> {
    const name = `migrations_${randomUUID().replaceAll('-', '')}`;
    await query(postgres.url, `CREATE DATABASE ${name}`);
    const url = new URL(postgres.url);
    url.pathname = `/${name}`;
    if (version > 0) {
      const tables = postgresHistory.slice(0, version).flatMap(sqlTables);
      await query(
        url.toString(),
        [
          ...postgresHistory.slice(0, version),
          ...tables.map((table) => oldRows(true)[table]!),
          `CREATE TABLE voxd_schema (version INTEGER NOT NULL); INSERT INTO voxd_schema (version) VALUES (${version})`,
        ].join(';\n'),
      );
    }
    return url.toString();
  }

  async function query(url: string, sql: string): Promise<pg.QueryResult[]> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const result = await client.query(sql);
      return Array.isArray(result) ? result : [result];
    } finally {
      await client.end();
    }
  }

  const schema = async (url: string) =>
    (
      await query(
        url,
        `SELECT table_name, ordinal_position, column_name, data_type, is_nullable, column_default, collation_name
           FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position;
         SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname;
         SELECT version FROM voxd_schema`,
      )
    ).map((result) => result.rows);

  const open = (url: string) =>
    openStore({ dataDir: makeTempDir('migrations'), databaseUrl: url, blobs: { kind: 'disk', dir: makeTempDir('blobs') } });

  test('a new database has the schema the old migrations made', async () => {
    const [current, fresh] = await Promise.all([database(postgresHistory.length), database(0)]);
    await (await open(fresh)).close();
    assert.deepEqual(await schema(fresh), await schema(current));
  });

  for (let version = 1; version <= postgresHistory.length; version++) {
    test(`a schema at version ${version} opens, reaches the new schema and keeps its rows`, async () => {
      const [old, fresh] = await Promise.all([database(version), database(0)]);
      const store = await open(old);
      try {
        await (await open(fresh)).close();
        assert.deepEqual(await schema(old), await schema(fresh));
        await checkRecords(store, new Set(postgresHistory.slice(0, version).flatMap(sqlTables)));
      } finally {
        await store.close();
      }
    });
  }
});
