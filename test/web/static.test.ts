/** The web studio's files at `/`: served beside the API, within the size budget, and a clear error when not built. */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import Fastify from 'fastify';
import { sendError } from '../../src/http/errors.js';
import { builtWebDir, webRoutes } from '../../src/http/routes/web.js';
import { buildTestApp, makeTempDir, type TestApp } from '../helpers/app.js';

const maxBundleGzipBytes = 300 * 1024;

describe('web studio files', () => {
  let t: TestApp;
  before(async () => {
    assert.ok(existsSync(path.join(builtWebDir, 'index.html')), 'web/dist is missing: run `npm run build:web`');
    t = await buildTestApp();
  });
  after(async () => t.close());

  test('GET / is the page: no key in it, a policy that keeps it on this server, revalidated on each visit', async () => {
    const r = await t.app.inject({ url: '/' });
    assert.equal(r.statusCode, 200);
    assert.match(String(r.headers['content-type']), /^text\/html/);
    assert.match(r.body, /<div id="app"><\/div>/);
    assert.doesNotMatch(r.body, /vx_[A-Za-z0-9_-]{20,}/);
    assert.doesNotMatch(r.body, /https?:\/\//, 'nothing is loaded from another origin');
    assert.match(String(r.headers['content-security-policy']), /default-src 'self'/);
    assert.equal(r.headers['cache-control'], 'no-cache');
  });

  test('built assets are served for a year (their names change with their content) and stay under 300 kB gzipped', async () => {
    const assets = readdirSync(path.join(builtWebDir, 'assets')).filter((name) => /\.(js|css)$/.test(name));
    assert.ok(assets.some((name) => name.endsWith('.js')) && assets.some((name) => name.endsWith('.css')), assets.join(', '));
    let gzipBytes = 0;
    for (const name of assets) {
      const r = await t.app.inject({ url: `/assets/${name}` });
      assert.equal(r.statusCode, 200, name);
      assert.equal(r.headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.deepEqual(r.rawPayload, readFileSync(path.join(builtWebDir, 'assets', name)));
      gzipBytes += gzipSync(r.rawPayload, { level: 9 }).length;
    }
    assert.ok(gzipBytes < maxBundleGzipBytes, `${gzipBytes} bytes gzipped`);
  });

  test('the API and its docs are unaffected: /docs, /v1/health, the 404 envelope of unknown paths, no POST /', async () => {
    assert.equal((await t.app.inject({ url: '/docs/' })).statusCode, 200);
    assert.equal((await t.app.inject({ url: '/v1/health' })).statusCode, 200);
    for (const request of [{ url: '/studio.js' }, { url: '/assets/missing.js' }, { method: 'POST' as const, url: '/' }]) {
      const r = await t.app.inject(request);
      assert.equal(r.statusCode, 404, request.url);
      assert.equal((r.json() as { error: { code: string } }).error.code, 'not_found');
    }
    const spec = (await t.app.inject({ url: '/openapi.json' })).json() as { paths: Record<string, unknown> };
    assert.ok(!('/' in spec.paths), 'the page is not part of the API');
  });
});

test('without a build, GET / answers a JSON error naming the build command', async () => {
  const app = Fastify().setErrorHandler((error, request, reply) => sendError(error, request, reply));
  await app.register(webRoutes, { root: path.join(makeTempDir('web'), 'dist') });
  const r = await app.inject({ url: '/' });
  assert.equal(r.statusCode, 501);
  const { error } = r.json() as { error: { code: string; message: string } };
  assert.equal(error.code, 'not_implemented');
  assert.match(error.message, /npm run build:web/);
  await app.close();
});
