/** Multipart uploads stream to temp files under the data dir (never whole in memory), size-capped, removed after the response. */
import multipart, { type MultipartFile } from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { createWriteStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { VoxError } from '../core/errors.js';
import type { InputFile } from '../core/operation-context.js';
import type { Scratch } from '../storage/store.js';

/**
 * What the multipart parser throws on a malformed body (no boundary, a part cut short) is the client's fault: 400.
 * The plugin's own errors carry their status (limits: 413) and file system errors (disk full) stay server errors.
 */
function asRequestError(error: unknown): unknown {
  if (error instanceof VoxError || !(error instanceof Error) || 'statusCode' in error || 'syscall' in error) return error;
  return new VoxError('invalid_request', `The multipart body is malformed: ${error.message}.`, { cause: error });
}

export async function registerUploads(app: FastifyInstance, options: { scratch: Scratch; maxUploadBytes: number }): Promise<void> {
  const uploadsOf = new WeakMap<FastifyRequest, Map<string, InputFile[]>>();
  // A getter, not a value set by an onRequest hook that an earlier refusing hook (auth, rate limit) would skip.
  app.decorateRequest('uploads', {
    getter(this: FastifyRequest) {
      const uploads = uploadsOf.get(this) ?? new Map<string, InputFile[]>();
      uploadsOf.set(this, uploads);
      return uploads;
    },
  });

  await app.register(multipart, {
    limits: { fileSize: options.maxUploadBytes, files: 32, fields: 64, fieldSize: 1024 * 1024, parts: 100 },
  });

  /** Starts streaming a file part to a temp file; returns the body's marker for it, the write, and a way to fail it. */
  function save(
    request: FastifyRequest,
    part: MultipartFile,
  ): { marker: string; written: Promise<void>; abandon: (error: Error) => void; sinkIdle: () => boolean } {
    const path = options.scratch.path();
    const list = request.uploads.get(part.fieldname) ?? [];
    const upload = { field: part.fieldname, path, filename: part.filename || part.fieldname, mimetype: part.mimetype, bytes: 0 };
    // Registered before writing, so cleanup removes a half-written file too.
    list.push(upload);
    request.uploads.set(part.fieldname, list);
    const sink = createWriteStream(path);
    let abandon: (error: Error) => void = () => undefined;
    const abandoned = new Promise<never>((_resolve, reject) => (abandon = reject));
    const written = (async () => {
      try {
        await Promise.race([pipeline(part.file, sink), abandoned]);
      } finally {
        // Closed before cleanup, which must find the file: a failed write may settle before the file is even created.
        sink.destroy();
        await finished(sink, { error: false }).catch(() => undefined);
      }
      upload.bytes = (await stat(path)).size;
    })();
    written.catch(() => undefined);
    // The body carries a marker for schema validation; services read the file from request.uploads.
    return { marker: `upload:${list.length - 1}`, written, abandon, sinkIdle: () => sink.writableLength === 0 && !sink.writableNeedDrain };
  }

  const removeUploads = async (request: FastifyRequest): Promise<void> => {
    await Promise.all([...request.uploads.values()].flat().map((f) => rm(f.path, { force: true })));
  };

  // Parsed here rather than with the plugin's attachFieldsToBody, so that a malformed body is a 400 and its files go at once.
  app.addHook('preValidation', async (request, reply) => {
    if (!request.isMultipart()) return;
    // The response closing covers every end: sent, failed, or the client gone mid-upload or mid-operation (then neither
    // onResponse nor onRequestAbort runs).
    reply.raw.once('close', () => void removeUploads(request));
    const fields = new Map<string, unknown[]>();
    const writes: Array<{ file: Readable; written: Promise<void>; abandon: (error: Error) => void; sinkIdle: () => boolean }> = [];
    try {
      // Files are written while the next parts are read (the parser waits for each file to be consumed anyway).
      for await (const part of request.parts()) {
        let value = part.type === 'file' ? undefined : part.value;
        if (part.type === 'file') {
          const write = save(request, part);
          writes.push({ file: part.file, ...write });
          value = write.marker;
        }
        fields.set(part.fieldname, [...(fields.get(part.fieldname) ?? []), value]);
      }
      // The parser is done. A file part the body ended inside of never ends, and the plugin drops its error when it came
      // before the part reached this loop (the whole body in one read): such a write is failed here instead of waited for
      // forever. A part is stuck when nothing of it is buffered and the file it goes to has taken everything, yet it has not
      // ended; a complete part still being written (its file behind, so it is paused) is not.
      for (const { file, written, abandon, sinkIdle } of writes) {
        for (let settled = false; !settled; ) {
          settled = await Promise.race([
            written.then(
              () => true,
              () => true,
            ),
            new Promise<boolean>((resolve) => setTimeout(resolve, 20, false)),
          ]);
          if (!settled && !file.readableEnded && (file.destroyed || (file.readableLength === 0 && sinkIdle()))) {
            abandon(new Error('Part terminated early due to unexpected end of multipart data'));
            settled = true;
          }
        }
      }
      await Promise.all(writes.map((w) => w.written));
    } catch (error) {
      // The parser stopped (a limit, a malformed part): a file part it was reading will never end, so no write is waited for.
      for (const write of writes) write.abandon(error instanceof Error ? error : new Error(String(error)));
      await Promise.allSettled(writes.map((w) => w.written));
      await removeUploads(request);
      throw asRequestError(error);
    }
    request.body = Object.fromEntries([...fields].map(([name, values]) => [name, values.length === 1 ? values[0] : values]));
  });
}
