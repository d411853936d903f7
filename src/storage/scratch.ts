/** Local scratch space: uploads while they stream in, and intermediate results before they are stored. */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Scratch } from './store.js';

export function localScratch(dir: string): Scratch {
  mkdirSync(dir, { recursive: true });
  return {
    path: (suffix = '') => path.join(dir, `${randomUUID()}${suffix}`),
    clear: async () => {
      await Promise.all((await readdir(dir)).map((name) => rm(path.join(dir, name), { recursive: true, force: true })));
    },
  };
}
