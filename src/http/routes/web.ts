/** The web studio (web/, built by `npm run build:web`): its static files at `/`, outside the API and its docs. */
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync } from 'fastify';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { VoxError } from '../../core/errors.js';
import { packageRoot } from '../../core/version.js';

export const builtWebDir = path.join(packageRoot, 'web', 'dist');

/**
 * The page talks to this server only: nothing is loaded or sent elsewhere (its audio plays, and is decoded, from blob: URLs).
 * Inline styles are allowed because the waveform view (wavesurfer.js) puts a <style> element in its shadow root.
 */
const contentSecurityPolicy =
  "default-src 'self'; style-src 'self' 'unsafe-inline'; media-src 'self' blob:; connect-src 'self' blob:; img-src 'self' data: blob:; " +
  "object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

export const webRoutes: FastifyPluginAsync<{ root: string }> = async (app, { root }) => {
  if (!existsSync(path.join(root, 'index.html'))) {
    app.get('/', { schema: { hide: true } }, async () => {
      throw new VoxError(
        'not_implemented',
        'The web studio is not built: run `npm run build:web` (scripts/setup.sh does), then restart voxd. The API and its docs (/docs) ' +
          'work without it.',
      );
    });
    return;
  }
  await app.register(fastifyStatic, {
    root,
    // Routes for the files built at setup, not a catch-all: unknown paths keep the API's 404 envelope.
    wildcard: false,
    decorateReply: false,
    cacheControl: false,
    setHeaders: (reply, file) => {
      reply.header('content-security-policy', contentSecurityPolicy);
      // Vite puts a content hash in every asset's name; index.html must be checked again to pick up a new build.
      reply.header('cache-control', file.includes(`${path.sep}assets${path.sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
};
