/** Starts the HTTP service on a container and stops it gracefully on SIGINT/SIGTERM. */
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { createContainer } from './container.js';
import { buildApp } from './http/app.js';

export async function serve(config: Readonly<Config>, logger: Logger): Promise<void> {
  const container = createContainer(config);
  const app = await buildApp(container, { logger });
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
