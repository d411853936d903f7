/**
 * Picks the store the configuration names: SQLite or PostgreSQL for records, a directory or S3 for blobs. The network
 * clients are loaded only when named, so a node on the embedded store does not carry them.
 */
import type { Config } from '../config.js';
import { DiskBlobStore } from './disk-blobs.js';
import { openSqliteStore } from './sql/sqlite.js';
import type { BlobStore, Store } from './store.js';

export async function openBlobStore(config: Pick<Config, 'blobs'>): Promise<BlobStore> {
  const { blobs } = config;
  if (blobs.kind === 'disk') return new DiskBlobStore(blobs.dir);
  const { S3BlobStore } = await import('./s3-blobs.js');
  return new S3BlobStore(blobs);
}

export async function openStore(config: Pick<Config, 'dataDir' | 'databaseUrl' | 'blobs'>): Promise<Store> {
  const blobs = await openBlobStore(config);
  if (config.databaseUrl === null) return openSqliteStore(config.dataDir, blobs);
  const { openPostgresStore } = await import('./sql/postgres.js');
  return openPostgresStore(config.databaseUrl, blobs);
}
