/** Result files (e.g. separated stems): stored as blobs, downloadable by their owner until they expire. */
import { randomUUID } from 'node:crypto';
import { mayAccess } from '../auth/api-keys.js';
import { VoxError } from '../core/errors.js';
import type { OperationResult } from '../core/operation-context.js';
import type { Store } from '../storage/store.js';
import type { ApiKeyRecord, FileRecord } from '../core/records.js';

export class FileService {
  constructor(
    private readonly store: Store,
    private readonly ttlSeconds: number,
  ) {}

  /** Moves a finished file into the store and records it; returns its record. */
  async keep(
    owner: ApiKeyRecord,
    sourcePath: string,
    name: string,
    contentType: string,
    ttlSeconds = this.ttlSeconds,
  ): Promise<FileRecord> {
    const id = `file_${randomUUID().replaceAll('-', '')}`;
    const blobKey = `files/${id}`;
    const bytes = await this.store.blobs.putFile(blobKey, sourcePath);
    const now = Date.now();
    const record: FileRecord = {
      id,
      ownerKeyId: owner.id,
      name,
      contentType,
      bytes,
      blobKey,
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(now + ttlSeconds * 1000).toISOString(),
    };
    await this.store.files.insert(record);
    return record;
  }

  async download(id: string, requester: ApiKeyRecord): Promise<OperationResult> {
    const record = await this.store.files.get(id);
    const visible = record && mayAccess(requester, record.ownerKeyId) && record.expiresAt > new Date().toISOString();
    if (!record || !visible)
      throw new VoxError('not_found', `No file '${id}' (files expire ${this.ttlSeconds} s after they are made).`, { param: 'file_id' });
    return {
      kind: 'stream',
      stream: await this.store.blobs.readStream(record.blobKey),
      contentType: record.contentType,
      headers: { 'content-disposition': `attachment; filename="${record.name}"`, 'content-length': String(record.bytes) },
    };
  }

  /** Deletes expired files: blob first, then the record, so a crash never leaves a record without its blob. */
  async sweep(now = new Date()): Promise<number> {
    const expired = await this.store.files.expired(now.toISOString());
    for (const record of expired) {
      await this.store.blobs.delete(record.blobKey);
      await this.store.files.delete(record.id);
    }
    return expired.length;
  }
}
