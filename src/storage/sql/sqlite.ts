/** Embedded default store: SQLite (WAL) for records, files under the data dir for blobs. */
import Database from 'better-sqlite3';
import { chmodSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import PQueue from 'p-queue';
import { DiskBlobStore } from '../disk-blobs.js';
import type { BlobStore, Store } from '../store.js';
import { migrations, sqlite, type Row } from './dialect.js';
import { sqlStore, type Queries, type SqlClient } from './queries.js';

/**
 * better-sqlite3 runs each statement synchronously, but a transaction of the shared queries spans awaits. Every statement
 * of every handle in this process takes its turn here: none runs inside another's open transaction, and none blocks the
 * thread waiting for a write lock that another handle of this process holds (and could never release meanwhile).
 */
const turns = new PQueue({ concurrency: 1 });

function sqliteClient(db: Database.Database): SqlClient {
  const statements = new Map<string, Database.Statement>();
  const prepare = (sql: string): Database.Statement => {
    const statement = statements.get(sql) ?? db.prepare(sql);
    statements.set(sql, statement);
    return statement;
  };
  const direct: Queries = {
    rows: async (sql, params = {}) => prepare(sql).all(params) as Row[],
    changes: async (sql, params = {}) => prepare(sql).run(params).changes,
  };
  const [begin, commit, rollback] = [db.prepare('BEGIN IMMEDIATE'), db.prepare('COMMIT'), db.prepare('ROLLBACK')];
  const inTurn = <T>(work: () => Promise<T>): Promise<T> => turns.add(work, { throwOnTimeout: true });
  return {
    rows: (sql, params) => inTurn(() => direct.rows(sql, params)),
    changes: (sql, params) => inTurn(() => direct.changes(sql, params)),
    transaction: (work) =>
      inTurn(async () => {
        begin.run();
        try {
          const result = await work(direct);
          commit.run();
          return result;
        } catch (error) {
          if (db.inTransaction) rollback.run();
          throw error;
        }
      }),
  };
}

/**
 * Brings the schema to the latest version; user_version counts the versions applied. A file already there is only read,
 * and processes starting together take turns (the write lock), each applying what is still missing.
 */
function migrate(db: Database.Database): void {
  const versions = migrations(sqlite);
  const current = () => db.pragma('user_version', { simple: true }) as number;
  if (current() === versions.length) return;
  db.transaction(() => {
    for (let version = current(); version < versions.length; version++) {
      const { statements, backfills } = versions[version]!;
      for (const statement of statements) db.exec(statement);
      for (const { table, column, value } of backfills) {
        const set = db.prepare(`UPDATE ${table} SET ${column} = ? WHERE id = ?`);
        for (const { id } of db.prepare<[], { id: string }>(`SELECT id FROM ${table}`).all()) set.run(value(), id);
      }
      db.pragma(`user_version = ${version + 1}`);
    }
  }).immediate();
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
  // Closed in its turn: statements already queued run first.
  return sqlStore(sqliteClient(db), sqlite, blobs, () => turns.add(() => void db.close(), { throwOnTimeout: true }));
}
