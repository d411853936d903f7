/**
 * What voice-conversion tests and the benchmark need, obtained once into the cache: the WORLD addon (built by
 * native/build-world.sh) and Resemblyzer's GE2E encoder converted to ONNX from the PyPI wheel.
 */
import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { convertGe2eToOnnx } from '../../src/models/convert/ge2e-to-onnx.js';
import { exists, pipDownload, hashFile, unpack } from '../../src/models/fetch.js';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const sharedDir = process.env.VOXD_SHARED_DIR ?? path.resolve(repoRoot, '../shared');
export const cacheDir = process.env.VOXD_CACHE_DIR ?? path.join(homedir(), '.cache', 'voxd');

const resemblyzerWheel = { requirement: 'resemblyzer==0.1.4', sha256: '8f12eb2f1a9982d32e8db7856de754709b59c93a77bcf0ff536584b619a9dd1f' };

/** Builds the addon if needed and returns its path. */
export async function worldAddon(): Promise<string> {
  const { stdout } = await promisify(execFile)('bash', [path.join(repoRoot, 'native', 'build-world.sh')], { maxBuffer: 1 << 20 });
  return stdout.trim().split('\n').pop()!;
}

/** Path of the GE2E encoder as ONNX (converted once from the resemblyzer wheel). */
export async function ge2eOnnx(): Promise<string> {
  const dir = path.join(cacheDir, 'build', 'ge2e');
  const onnxPath = path.join(dir, 'ge2e.onnx');
  if (await exists(onnxPath)) return onnxPath;
  await mkdir(dir, { recursive: true });
  const wheel = await pipDownload(resemblyzerWheel.requirement, path.join(cacheDir, 'downloads'), false);
  const digest = await hashFile(wheel);
  if (digest !== resemblyzerWheel.sha256) throw new Error(`${wheel}: sha256 ${digest}, expected ${resemblyzerWheel.sha256}`);
  const unpacked = path.join(dir, 'wheel');
  await unpack(wheel, unpacked);
  await convertGe2eToOnnx({ torchPath: path.join(unpacked, 'resemblyzer', 'pretrained.pt'), outputPath: onnxPath });
  return onnxPath;
}
