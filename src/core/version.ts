/** The package version, read from the nearest package.json (works from src/ under tsx and from dist/). */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findPackageJson(start: string): string {
  let dir = start;
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('package.json not found');
    dir = parent;
  }
  return path.join(dir, 'package.json');
}

export const packageRoot = path.dirname(findPackageJson(path.dirname(fileURLToPath(import.meta.url))));
export const version = (JSON.parse(readFileSync(path.join(packageRoot, 'package.json'), 'utf8')) as { version: string }).version;
