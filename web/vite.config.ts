// The portal's build: Preact, hashed files under web/dist, a dev server forwarding /api.
import { fileURLToPath } from 'node:url';
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  plugins: [preact({ devToolsEnabled: false })],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // One entry chunk, nothing to preload: the polyfill would only add bytes.
    modulePreload: { polyfill: false },
  },
  server: {
    // `npm run dev:web` while `npm start` runs. The Host header is kept, so the API's Origin check
    // sees the page's own origin.
    proxy: { '/api': { target: 'http://127.0.0.1:3000', changeOrigin: false } },
  },
});
