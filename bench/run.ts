/** Runs benchmarks by name (default: every bench/*.ts script), one after another, each in its own process. */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const available = readdirSync(benchDir)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts')
  .map((f) => f.replace(/\.ts$/, ''));
const requested = process.argv.slice(2);
const unknown = requested.filter((name) => !available.includes(name));
if (unknown.length > 0) {
  process.stderr.write(`unknown benchmark(s): ${unknown.join(', ')}; available: ${available.join(', ')}\n`);
  process.exit(2);
}
let failed = false;
for (const name of requested.length > 0 ? requested : available) {
  process.stdout.write(`\n== bench ${name}\n`);
  const result = spawnSync(process.execPath, ['--import', 'tsx', path.join(benchDir, `${name}.ts`)], { stdio: 'inherit' });
  failed ||= result.status !== 0;
}
process.exit(failed ? 1 : 0);
