/** What voice-conversion tests and the benchmark need: the WORLD addon (built by native/build-world.sh) and the GE2E encoder. */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { packageRoot } from '../../src/version.js';
import { ge2eModelPath } from './models.js';

export { sharedDir } from './app.js';
export const repoRoot = packageRoot;

/** Builds the addon if needed and returns its path. */
export async function worldAddon(): Promise<string> {
  const { stdout } = await promisify(execFile)('bash', [path.join(packageRoot, 'native', 'build-world.sh')], { maxBuffer: 1 << 20 });
  return stdout.trim().split('\n').pop()!;
}

export const ge2eOnnx = ge2eModelPath;
