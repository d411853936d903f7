/** Starts the HTTP service on a container and stops it gracefully on SIGINT/SIGTERM. */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { scopes } from './storage/store.js';
import type { Config } from './config.js';
import { createContainer } from './container.js';
import { buildApp } from './http/app.js';

export async function serve(config: Readonly<Config>, logger: Logger): Promise<void> {
  const container = createContainer(config);
  // Before any request can start a voice creation: the files a crash left without a record go.
  const orphans = await container.voices.removeOrphans();
  if (orphans.length > 0) logger.warn({ orphans }, 'removed voice files that no voice record points at (left by a crash)');
  if (container.apiKeys.list().length === 0) {
    // First start without keys: one admin key, written to a private file rather than the log.
    const keyFile = path.join(config.dataDir, 'initial-api-key');
    writeFileSync(keyFile, `${container.apiKeys.create('initial', scopes).key}\n`, { mode: 0o600 });
    logger.warn({ keyFile }, 'no API keys existed: created an admin key; read it from keyFile (create more with voxd keys create)');
  }
  const app = await buildApp(container, { logger });
  container.files.startSweeping();
  if (config.preloadModels) void container.preload();
  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: draining in-flight requests');
    // close() stops accepting connections and waits for in-flight requests; then jobs drain and storage closes.
    await app.close();
    await container.close();
    logger.info('stopped');
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
  await app.listen({ host: config.host, port: config.port });
}
