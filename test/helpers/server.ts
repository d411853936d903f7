/** The real server process with test defaults: a fresh data dir and the shared verified models. */
import { startServerProcess, type ServerProcess } from '../../bench/lib/server-process.js';
import { makeTempDir, sharedModelsDir } from './app.js';

export { fixedKey as testKey, waitUntilReady, type ServerProcess } from '../../bench/lib/server-process.js';

export function startServer(env: Record<string, string>, options: { dataDir?: string } = {}): Promise<ServerProcess> {
  return startServerProcess(options.dataDir ?? makeTempDir('server'), { VOXD_LOCAL_MODEL_DIRS: sharedModelsDir, ...env });
}
