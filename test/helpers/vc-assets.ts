/** The WORLD vocoder addon for voice-conversion tests and the benchmark: built (once) by native/build-world.sh. */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export { sharedDir } from './app.js';
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Builds the addon if needed and returns its path. */
export async function worldAddon(): Promise<string> {
  const { stdout } = await promisify(execFile)('bash', [path.join(repoRoot, 'native', 'build-world.sh')], { maxBuffer: 1 << 20 });
  return stdout.trim().split('\n').pop()!;
}
