/** Starts the HTTP service on a container and stops it on SIGINT/SIGTERM: drain for a grace period, then abort, then exit. */
import { writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { scopes } from './core/records.js';
import type { Config } from './config.js';
import { createContainer } from './container.js';
import { buildApp, shuttingDown } from './http/app.js';
import { onnxWorkersIdle } from './models/onnx-worker.js';

/** Exit codes: drained within the grace period; work still running when it ended was aborted. A second signal exits 128 + its number. */
export const exitCodes = { drained: 0, aborted: 1 } as const;
/** After the abort, how long aborted requests get to send their 503 before the process exits regardless. */
const abortSettleMilliseconds = 3000;

export async function serve(config: Readonly<Config>, logger: Logger): Promise<void> {
  const container = await createContainer(config, logger);
  // Before any request can start a voice creation or an upload: what a previous run left behind goes.
  await container.scratch.clear();
  // Only a lone server may take voice files without a record for leftovers: where other processes share the store, one of
  // them may be creating a voice right now (its files are in place a moment before its record).
  const alone =
    config.role === 'all' &&
    config.databaseUrl === null &&
    config.blobs.kind === 'disk' &&
    config.blobs.dir === path.join(config.dataDir, 'blobs');
  if (alone) {
    const orphans = await container.voices.removeOrphans();
    if (orphans.length > 0) logger.warn({ orphans }, 'removed voice files that no voice record points at (left by a crash)');
  }
  if ((await container.apiKeys.list()).length === 0) {
    // First start without keys: one admin key, written to a private file rather than the log.
    const keyFile = path.join(config.dataDir, 'initial-api-key');
    writeFileSync(keyFile, `${(await container.apiKeys.create('initial', scopes)).key}\n`, { mode: 0o600 });
    logger.warn({ keyFile }, 'no API keys existed: created an admin key; read it from keyFile (create more with voxd keys create)');
  }
  const shutdown = new AbortController();
  // A worker takes jobs only: no HTTP API (it is reached through the shared database and blob store).
  const app = config.role === 'worker' ? undefined : await buildApp(container, { logger, shutdown: shutdown.signal });
  container.startBackground();
  if (config.preloadModels) void container.preload();
  let stopping = false;
  const stop = async (signal: NodeJS.Signals): Promise<void> => {
    if (stopping) {
      logger.warn({ signal }, 'second signal while draining: exiting now');
      process.exit(128 + constants.signals[signal]);
    }
    stopping = true;
    logger.info({ signal, grace_seconds: config.shutdownGraceSeconds }, 'shutting down: draining in-flight work');
    const grace = setTimeout(() => {
      const loading = container
        .readiness()
        .models.filter((m) => !m.loaded && !m.error)
        .map((m) => m.id);
      logger.warn({ models_not_loaded: loading }, 'shutdown grace period over: aborting in-flight work');
      shutdown.abort(shuttingDown());
      // Aborted work stops within moments; what cannot be stopped (a model conversion, a client still uploading) is cut.
      setTimeout(() => {
        logger.error('in-flight work did not stop after the abort: exiting anyway');
        // Not under a model run in a worker thread (that aborts the process): a run ends within seconds.
        void onnxWorkersIdle().then(() => process.exit(exitCodes.aborted));
      }, abortSettleMilliseconds).unref();
    }, config.shutdownGraceSeconds * 1000);
    // No new jobs from now on; running ones finish (or go back to the queue when the grace period ends).
    const jobsStopped = container.jobWorker.stop(shutdown.signal);
    // close() stops accepting connections and waits for in-flight requests; then jobs drain, models and storage close.
    await app?.close();
    await jobsStopped;
    await container.close(shutdown.signal);
    clearTimeout(grace);
    const aborted = shutdown.signal.aborted;
    logger.info({ aborted }, 'stopped');
    // Whatever is still open (a native thread, a child process) must not keep a stopped server alive.
    process.exit(aborted ? exitCodes.aborted : exitCodes.drained);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  if (app) await app.listen({ host: config.host, port: config.port });
  logger.info({ role: config.role, operations: config.role === 'api' ? [] : config.workerOperations }, 'voxd started');
}
