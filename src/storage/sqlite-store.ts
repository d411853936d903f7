/** Embedded default store: SQLite (WAL) for records, files under the data dir for blobs. */
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdirSync } from 'node:fs';
import { copyFile, readdir, rename, rm, stat, writeFile, access } from 'node:fs/promises';
import path from 'node:path';
import type { ApiKeyRecord, BlobStore, FileRecord, Scope, Store, VoiceRecord } from './store.js';

/** Ordered schema migrations; the index + 1 is the schema version stored in user_version. */
const migrations: string[] = [
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

function migrate(db: Database.Database): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  for (let version = current; version < migrations.length; version++) {
    db.transaction(() => {
      db.exec(migrations[version]!);
      db.pragma(`user_version = ${version + 1}`);
    })();
  }
}

class DiskBlobStore implements BlobStore {
  constructor(
    private readonly root: string,
    private readonly tempDir: string,
  ) {
    mkdirSync(root, { recursive: true });
    mkdirSync(tempDir, { recursive: true });
  }

  async clearScratch(): Promise<void> {
    await Promise.all((await readdir(this.tempDir)).map((name) => rm(path.join(this.tempDir, name), { recursive: true, force: true })));
  }

  pathOf(key: string): string {
    if (!/^[A-Za-z0-9._/-]+$/.test(key) || key.split('/').includes('..')) throw new Error(`invalid blob key '${key}'`);
    return path.join(this.root, key);
  }

  tempPath(suffix = ''): string {
    return path.join(this.tempDir, `${randomUUID()}${suffix}`);
  }

  async putFile(key: string, sourcePath: string): Promise<number> {
    const target = this.pathOf(key);
    mkdirSync(path.dirname(target), { recursive: true });
    try {
      await rename(sourcePath, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      const staged = this.tempPath();
      await copyFile(sourcePath, staged);
      await rename(staged, target);
      await rm(sourcePath, { force: true });
    }
    return (await stat(target)).size;
  }

  async putBytes(key: string, bytes: Uint8Array): Promise<number> {
    const staged = this.tempPath();
    await writeFile(staged, bytes);
    return this.putFile(key, staged);
  }

  async putDirectory(prefix: string, sourceDir: string): Promise<void> {
    const target = this.pathOf(prefix);
    mkdirSync(path.dirname(target), { recursive: true });
    await rename(sourceDir, target);
  }

  async list(prefix: string): Promise<string[]> {
    try {
      return await readdir(this.pathOf(prefix));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  }

  async exists(key: string): Promise<boolean> {
    try {
      await access(this.pathOf(key));
      return true;
    } catch {
      return false;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { recursive: true, force: true });
  }
}

export function openSqliteStore(dataDir: string): Store {
  mkdirSync(dataDir, { recursive: true });
  // Key hashes, voices and uploads are the service user's alone; this also closes a data dir made before files were private.
  chmodSync(dataDir, 0o700);
  const db = new Database(path.join(dataDir, 'voxd.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  migrate(db);

  const insertKey = db.prepare(
    `INSERT INTO api_keys (id, name, hash, prefix, scopes, created_at, last_used_at, revoked_at)
     VALUES (@id, @name, @hash, @prefix, @scopes, @createdAt, @lastUsedAt, @revokedAt)`,
  );
  const keyByHash = db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE hash = ?');
  const allKeys = db.prepare<[], KeyRow>('SELECT * FROM api_keys ORDER BY created_at, id');
  const revokeKey = db.prepare('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?');
  const touchKey = db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?');
  const insertFile = db.prepare(
    `INSERT INTO files (id, owner_key_id, name, content_type, bytes, blob_key, created_at, expires_at)
     VALUES (@id, @ownerKeyId, @name, @contentType, @bytes, @blobKey, @createdAt, @expiresAt)`,
  );
  const fileById = db.prepare<[string], FileRow>('SELECT * FROM files WHERE id = ?');
  const expiredFiles = db.prepare<[string], FileRow>('SELECT * FROM files WHERE expires_at <= ?');
  const deleteFile = db.prepare('DELETE FROM files WHERE id = ?');
  const insertVoice = db.prepare(
    `INSERT INTO voices (id, owner_key_id, name, languages, gender_estimate, description, labels, reference_seconds, engine, created_at, blob_prefix, analysis)
     VALUES (@id, @owner_key_id, @name, @languages, @gender_estimate, @description, @labels, @reference_seconds, @engine, @created_at, @blob_prefix, @analysis)`,
  );
  const voiceById = db.prepare<[string], VoiceRow>('SELECT * FROM voices WHERE id = ?');
  const allVoices = db.prepare<[], VoiceRow>('SELECT * FROM voices ORDER BY created_at, id');
  const updateVoice = db.prepare('UPDATE voices SET name = @name, description = @description, labels = @labels, analysis = @analysis WHERE id = @id');
  const deleteVoice = db.prepare('DELETE FROM voices WHERE id = ?');

  return {
    keys: {
      insert: (record) => void insertKey.run({ ...record, scopes: JSON.stringify(record.scopes) }),
      findByHash: (hash) => {
        const row = keyByHash.get(hash);
        return row && keyFromRow(row);
      },
      list: () => allKeys.all().map(keyFromRow),
      revoke: (id, at) => revokeKey.run(at, id).changes > 0,
      touch: (id, at) => void touchKey.run(at, id),
    },
    files: {
      insert: (record) => void insertFile.run(record),
      get: (id) => {
        const row = fileById.get(id);
        return row && fileFromRow(row);
      },
      expired: (now) => expiredFiles.all(now).map(fileFromRow),
      delete: (id) => void deleteFile.run(id),
    },
    voices: {
      insert: (record) => void insertVoice.run(voiceToRow(record)),
      get: (id) => {
        const row = voiceById.get(id);
        return row && voiceFromRow(row);
      },
      list: () => allVoices.all().map(voiceFromRow),
      update: (id, changes) =>
        db.transaction(() => {
          const row = voiceById.get(id);
          if (!row) return undefined;
          const updated = { ...voiceFromRow(row), ...changes };
          updateVoice.run(voiceToRow(updated));
          return updated;
        })(),
      delete: (id) => deleteVoice.run(id).changes > 0,
    },
    blobs: new DiskBlobStore(path.join(dataDir, 'blobs'), path.join(dataDir, 'tmp')),
    close: () => db.close(),
  };
}
