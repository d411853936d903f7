/**
 * Picks the store the configuration names: SQLite or PostgreSQL for records, a directory or S3 for blobs. The network
 * clients are loaded only when named, so a node on the embedded store does not carry them.
 */
import { DiskBlobStore } from './disk-blobs.js';
import { openSqliteStore } from './sql/sqlite.js';
import type { BlobStore, Store } from './store.js';

/** Where blobs (uploads, results, voice clips) live: a directory (the data dir's, or one every node mounts) or S3. */
export type BlobConfig =
  | { kind: 'disk'; dir: string }
  | { kind: 's3'; bucket: string; prefix: string; endpoint: string | null; region: string; forcePathStyle: boolean };

/** What the store is opened from (the configuration's fields of the same names). */
export interface StoreOptions {
  dataDir: string;
  /** PostgreSQL's URL; null: SQLite in the data dir. */
  databaseUrl: string | null;
  blobs: BlobConfig;
}

export async function openBlobStore(config: Pick<StoreOptions, 'blobs'>): Promise<BlobStore> {
  const { blobs } = config;
  if (blobs.kind === 'disk') return new DiskBlobStore(blobs.dir);
  const { S3BlobStore } = await import('./s3-blobs.js');
  return new S3BlobStore(blobs);
}

export async function openStore(config: StoreOptions): Promise<Store> {
  const blobs = await openBlobStore(config);
  if (config.databaseUrl === null) return openSqliteStore(config.dataDir, blobs);
  const { openPostgresStore } = await import('./sql/postgres.js');
  return openPostgresStore(config.databaseUrl, blobs);
}
