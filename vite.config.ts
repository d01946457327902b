import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The page: built into dist/renderer, which the control plane serves at `/` (and the desktop window
// loads). Relative asset paths, no inline scripts (the CSP allows scripts from 'self' only).
export default defineConfig({
  root: new URL('./renderer', import.meta.url).pathname,
  base: './',
  plugins: [react()],
  build: {
    outDir: new URL('./dist/renderer', import.meta.url).pathname,
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
  },
});
