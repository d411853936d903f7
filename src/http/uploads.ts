/** Multipart uploads stream to temp files under the data dir (never whole in memory), size-capped, removed after the response. */
import multipart, { type MultipartFile } from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { createWriteStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import type { BlobStore } from '../storage/store.js';

export async function registerUploads(app: FastifyInstance, options: { blobs: BlobStore; maxUploadBytes: number }): Promise<void> {
  app.decorateRequest('uploads', null as unknown as Map<string, never>);
  app.addHook('onRequest', async (request) => {
    request.uploads = new Map();
  });

  async function onFile(this: FastifyRequest, part: MultipartFile): Promise<void> {
    const path = options.blobs.tempPath();
    const list = this.uploads.get(part.fieldname) ?? [];
    const upload = { field: part.fieldname, path, filename: part.filename || part.fieldname, mimetype: part.mimetype, bytes: 0 };
    // Registered before writing, so the cleanup hook removes a half-written file too.
    list.push(upload);
    this.uploads.set(part.fieldname, list);
    await pipeline(part.file, createWriteStream(path));
    upload.bytes = (await stat(path)).size;
    // The body only carries a marker for schema validation; services read the file from request.uploads.
    (part as unknown as { value: string }).value = `upload:${list.length - 1}`;
  }

  await app.register(multipart, {
    attachFieldsToBody: 'keyValues',
    onFile,
    limits: { fileSize: options.maxUploadBytes, files: 32, fields: 64, fieldSize: 1024 * 1024, parts: 100 },
  });

  const removeUploads = async (request: FastifyRequest): Promise<void> => {
    const files = [...request.uploads.values()].flat();
    request.uploads.clear();
    await Promise.all(files.map((f) => rm(f.path, { force: true })));
  };
  app.addHook('onResponse', removeUploads);
  app.addHook('onRequestAbort', removeUploads);
}
