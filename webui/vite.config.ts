/// <reference types="vitest/config" />
import { fileURLToPath, URL } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// In development the API runs elsewhere (manage.py runserver); Vite forwards /api to it so
// the console stays same-origin, as it is when Django serves the built files.
const apiTarget = process.env.FULCRUM_API_URL ?? 'http://127.0.0.1:8000';

export default defineConfig({
  plugins: [react()],
  resolve: { alias: { '@': fileURLToPath(new URL('./src', import.meta.url)) } },
  server: { proxy: { '/api': { target: apiTarget } } },
  build: {
    outDir: 'dist',
    sourcemap: true,
    // Libraries change less often than the console: a separate file stays cached across releases.
    // uPlot stays out of it: the graphs import it when first drawn.
    rolldownOptions: { output: { codeSplitting: { groups: [{ name: 'vendor', test: /node_modules\/(?!uplot\/)/ }] } } },
  },
  test: {
    environment: 'jsdom',
    globals: true,
    setupFiles: ['./src/test/setup.ts'],
    include: ['src/**/*.test.{ts,tsx}'],
    css: false,
  },
});
