/** Picks the store the configuration names: SQLite or PostgreSQL for records, a directory or S3 for blobs. */
import type { Config } from '../config.js';
import { DiskBlobStore } from './disk-blobs.js';
import { openPostgresStore } from './postgres-store.js';
import { S3BlobStore } from './s3-blobs.js';
import { openSqliteStore } from './sqlite-store.js';
import type { BlobStore, Store } from './store.js';

export function openBlobStore(config: Pick<Config, 'blobs'>): BlobStore {
  const { blobs } = config;
  return blobs.kind === 'disk' ? new DiskBlobStore(blobs.dir) : new S3BlobStore(blobs);
}

export function openStore(config: Pick<Config, 'dataDir' | 'databaseUrl' | 'blobs'>): Promise<Store> {
  const blobs = openBlobStore(config);
  return config.databaseUrl === null ? Promise.resolve(openSqliteStore(config.dataDir, blobs)) : openPostgresStore(config.databaseUrl, blobs);
}
