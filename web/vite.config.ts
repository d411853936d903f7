/** The web studio's build: `npm run build:web` writes web/dist, which voxd serves at `/`. */
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

export default defineConfig({
  plugins: [preact()],
  build: { outDir: 'dist', emptyOutDir: true },
});
