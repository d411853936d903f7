/** Blobs as files under one directory (the data dir, or a directory every node mounts). Writes land by rename. */
import { randomUUID } from 'node:crypto';
import { createReadStream, mkdirSync } from 'node:fs';
import { access, copyFile, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BlobStore, LocalFile, Scratch } from './store.js';

/** Keys are relative paths of safe characters, the same in every blob store; no part may climb out of the root. */
export function checkBlobKey(key: string): void {
  if (!/^[A-Za-z0-9._/-]+$/.test(key) || key.split('/').some((part) => part === '..' || part === ''))
    throw new Error(`invalid blob key '${key}'`);
}

export class DiskBlobStore implements BlobStore {
  /** Staging for writes, inside the root so that the final rename never crosses file systems. */
  private readonly stagingDir: string;

  constructor(private readonly root: string) {
    this.stagingDir = path.join(root, '.staging');
    mkdirSync(this.stagingDir, { recursive: true });
  }

  private pathOf(key: string): string {
    checkBlobKey(key);
    if (key.split('/').includes('.staging')) throw new Error(`invalid blob key '${key}'`);
    return path.join(this.root, key);
  }

  async putFile(key: string, sourcePath: string): Promise<number> {
    const target = this.pathOf(key);
    mkdirSync(path.dirname(target), { recursive: true });
    try {
      await rename(sourcePath, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      const staged = path.join(this.stagingDir, randomUUID());
      await copyFile(sourcePath, staged);
      await rename(staged, target);
      await rm(sourcePath, { force: true });
    }
    return (await stat(target)).size;
  }

  async putBytes(key: string, bytes: Uint8Array): Promise<number> {
    const staged = path.join(this.stagingDir, randomUUID());
    await writeFile(staged, bytes);
    return this.putFile(key, staged);
  }

  async putDirectory(prefix: string, sourceDir: string): Promise<void> {
    const target = this.pathOf(prefix);
    mkdirSync(path.dirname(target), { recursive: true });
    try {
      await rename(sourceDir, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      for (const name of await readdir(sourceDir)) await this.putFile(`${prefix}/${name}`, path.join(sourceDir, name));
      await rm(sourceDir, { recursive: true, force: true });
    }
  }

  async list(prefix: string): Promise<string[]> {
    try {
      return await readdir(this.pathOf(prefix));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  }

  readBytes(key: string): Promise<Buffer> {
    return readFile(this.pathOf(key));
  }

  async readStream(key: string): Promise<NodeJS.ReadableStream> {
    const file = this.pathOf(key);
    // Fails here (ENOENT) rather than later on the stream.
    await access(file);
    return createReadStream(file);
  }

  async localFile(key: string, _scratch: Scratch): Promise<LocalFile> {
    const file = this.pathOf(key);
    await access(file);
    return { path: file, release: async () => undefined };
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
