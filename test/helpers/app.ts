/** Builds the real app on a fresh data dir for a test file. */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig, type Config } from '../../src/config.js';
import { createContainer, type Container } from '../../src/container.js';
import { buildApp } from '../../src/http/app.js';
import type { Scope } from '../../src/core/records.js';
import { packageRoot } from '../../src/core/version.js';

export const sharedDir = path.resolve(process.env.VOXD_SHARED_DIR ?? path.join(packageRoot, '..', 'shared'));
export const evalDir = path.join(sharedDir, 'eval');
export const sharedModelsDir = path.join(sharedDir, 'models');

/** A diarization file of ../shared/eval (manifest.json `diar`). */
export interface DiarizationEntry {
  id: string;
  audio: string;
  rttm: string;
  uem?: string;
  num_speakers: number;
}

export function diarizationEntries(): DiarizationEntry[] {
  return (JSON.parse(readFileSync(path.join(evalDir, 'manifest.json'), 'utf8')) as { diar: DiarizationEntry[] }).diar;
}

export interface TestApp {
  app: FastifyInstance;
  container: Container;
  config: Readonly<Config>;
  /** A key with every scope. */
  key: string;
  keyWith(scopes: Scope[]): Promise<string>;
  close(): Promise<void>;
}

export function makeTempDir(prefix: string): string {
  return mkdtempSync(path.join(tmpdir(), `voxd-${prefix}-`));
}

/** `logger`: a pino logger to capture the app's log (default: none). */
export async function buildTestApp(env: Record<string, string> = {}, options: { logger?: FastifyBaseLogger } = {}): Promise<TestApp> {
  const dataDir = makeTempDir('data');
  const config = loadConfig({
    VOXD_DATA_DIR: dataDir,
    // The service's own model cache: models are pulled once, outside the checkout.
    VOXD_MODELS_DIR: loadConfig({ ...process.env, VOXD_LOG_LEVEL: 'silent' }).modelsDir,
    VOXD_LOCAL_MODEL_DIRS: sharedModelsDir,
    VOXD_LOG_LEVEL: 'silent',
    ...env,
  });
  const container = await createContainer(config);
  const app = await buildApp(container, { logger: options.logger ?? false });
  await app.ready();
  const keyWith = async (scopes: Scope[]): Promise<string> => (await container.apiKeys.create(`test-${scopes.join('-')}`, scopes)).key;
  return {
    app,
    container,
    config,
    key: await keyWith(['tts', 'vc', 'separate', 'transcribe', 'dub', 'voices', 'admin']),
    keyWith,
    close: async () => {
      await app.close();
      await container.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Listens on a free loopback port (for clients that need a real socket, e.g. WebSockets); returns `host:port`. */
export async function listen(t: TestApp): Promise<string> {
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const address = t.app.server.address();
  if (!address || typeof address === 'string') throw new Error('not listening on a TCP port');
  return `127.0.0.1:${address.port}`;
}

interface MultipartFile {
  filename: string;
  content: Buffer;
  contentType?: string;
}

/** A multipart body for inject()/fetch from fields and files (an array sends the field once per value or file). */
export function multipartBody(
  fields: Record<string, string | string[]>,
  files: Record<string, MultipartFile | MultipartFile[]>,
): { body: Buffer; contentType: string } {
  const boundary = `----voxdtest${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const [name, values] of Object.entries(fields)) {
    for (const value of [values].flat())
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  for (const [name, value] of Object.entries(files)) {
    for (const file of [value].flat()) {
      chunks.push(
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${file.filename}"\r\nContent-Type: ${file.contentType ?? 'application/octet-stream'}\r\n\r\n`,
        ),
      );
      chunks.push(file.content, Buffer.from('\r\n'));
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

export interface EvalEntry {
  id: string;
  audio: string;
  language?: string;
  transcript?: string;
  duration_s: number;
}

export async function evalManifest(): Promise<Record<string, unknown>> {
  const { readFile } = await import('node:fs/promises');
  return JSON.parse(await readFile(path.join(evalDir, 'manifest.json'), 'utf8')) as Record<string, unknown>;
}
