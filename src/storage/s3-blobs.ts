/** Blobs in an S3-compatible object store (AWS S3, SeaweedFS, MinIO), shared by every node; keys live under one prefix. */
import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  NotFound,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
  paginateListObjectsV2,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { createReadStream, createWriteStream } from 'node:fs';
import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { checkBlobKey } from './disk-blobs.js';
import type { BlobStore, LocalFile, Scratch } from './store.js';

export interface S3BlobOptions {
  bucket: string;
  /** Key prefix inside the bucket, without surrounding slashes; empty for the bucket's root. */
  prefix: string;
  endpoint: string | null;
  region: string;
  forcePathStyle: boolean;
}

/** DeleteObjects takes at most this many keys per request. */
const deleteBatch = 1000;

/** A missing blob fails like a missing file on disk (ENOENT), naming the key. */
function notFound(key: string, cause: unknown): Error {
  return Object.assign(new Error(`blob '${key}' does not exist`, { cause }), { code: 'ENOENT' });
}

const isNotFound = (error: unknown) => error instanceof NoSuchKey || error instanceof NotFound;

/** `prefix/` objects: folders as some servers and consoles show them, never a blob (blob keys never end with '/'). */
const isFolderMarker = (key: string) => key.endsWith('/');

/** Credentials come from the SDK's default chain: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, profiles, instance roles. */
export class S3BlobStore implements BlobStore {
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly root: string;

  constructor(options: S3BlobOptions) {
    this.client = new S3Client({
      region: options.region,
      forcePathStyle: options.forcePathStyle,
      ...(options.endpoint === null ? {} : { endpoint: options.endpoint }),
    });
    this.bucket = options.bucket;
    this.root = options.prefix === '' ? '' : `${options.prefix}/`;
  }

  private objectKey(key: string): string {
    checkBlobKey(key);
    return `${this.root}${key}`;
  }

  private async get(key: string) {
    try {
      return await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
    } catch (error) {
      throw isNotFound(error) ? notFound(key, error) : error;
    }
  }

  async putFile(key: string, sourcePath: string): Promise<number> {
    const { size } = await stat(sourcePath);
    const body = createReadStream(sourcePath);
    try {
      // Streamed in parts: a large file is never held in memory whole; the object appears only once complete.
      await new Upload({ client: this.client, params: { Bucket: this.bucket, Key: this.objectKey(key), Body: body } }).done();
    } finally {
      body.destroy();
    }
    await rm(sourcePath, { force: true });
    return size;
  }

  async putBytes(key: string, bytes: Uint8Array): Promise<number> {
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key), Body: bytes }));
    return bytes.byteLength;
  }

  async putDirectory(prefix: string, sourceDir: string): Promise<void> {
    for (const entry of await readdir(sourceDir, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const relative = path.relative(sourceDir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/');
      await this.putFile(`${prefix}/${relative}`, path.join(entry.parentPath, entry.name));
    }
    await rm(sourceDir, { recursive: true, force: true });
  }

  async list(prefix: string): Promise<string[]> {
    const base = `${this.objectKey(prefix)}/`;
    const names: string[] = [];
    for await (const page of paginateListObjectsV2({ client: this.client }, { Bucket: this.bucket, Prefix: base, Delimiter: '/' })) {
      const prefixes = (page.CommonPrefixes ?? []).flatMap(({ Prefix }) => (Prefix ? [Prefix] : []));
      const present = await Promise.all(prefixes.map((prefix) => this.holdsObjects(prefix)));
      names.push(...prefixes.filter((_, index) => present[index]).map((prefix) => prefix.slice(base.length, -1)));
      for (const { Key } of page.Contents ?? []) if (Key && !isFolderMarker(Key)) names.push(Key.slice(base.length));
    }
    return names.sort();
  }

  /** Some servers (SeaweedFS) go on listing a prefix as a folder for a while after everything under it was deleted. */
  private async holdsObjects(prefix: string): Promise<boolean> {
    for await (const page of paginateListObjectsV2({ client: this.client }, { Bucket: this.bucket, Prefix: prefix })) {
      if ((page.Contents ?? []).some(({ Key }) => Key && !isFolderMarker(Key))) return true;
    }
    return false;
  }

  async readBytes(key: string): Promise<Buffer> {
    const object = await this.get(key);
    return Buffer.from(await object.Body!.transformToByteArray());
  }

  async readStream(key: string): Promise<NodeJS.ReadableStream> {
    return (await this.get(key)).Body as Readable;
  }

  async localFile(key: string, scratch: Scratch): Promise<LocalFile> {
    const object = await this.get(key);
    const file = scratch.path(path.extname(key));
    try {
      await pipeline(object.Body as Readable, createWriteStream(file));
    } catch (error) {
      await rm(file, { force: true });
      throw error;
    }
    return { path: file, release: () => rm(file, { force: true }) };
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    const objectKey = this.objectKey(key);
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: objectKey }));
    // Listed in full first: deleting while paginating could shift the listing under its continuation token.
    const keys: string[] = [];
    for await (const page of paginateListObjectsV2({ client: this.client }, { Bucket: this.bucket, Prefix: `${objectKey}/` })) {
      for (const { Key } of page.Contents ?? []) if (Key) keys.push(Key);
    }
    for (let start = 0; start < keys.length; start += deleteBatch) {
      const Objects = keys.slice(start, start + deleteBatch).map((Key) => ({ Key }));
      await this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects, Quiet: true } }));
    }
  }
}
