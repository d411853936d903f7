/** loadConfig -> serve. */
import { ConfigError, loadConfig } from './config.js';
import { createLogger } from './core/logger.js';
import { serve } from './server.js';

try {
  const config = loadConfig();
  await serve(config, createLogger(config.logLevel));
} catch (error) {
  if (error instanceof ConfigError) {
    process.stderr.write(`voxd: invalid configuration: ${error.message}\n`);
    process.exit(78);
  }
  throw error;
}
