import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// In development the hub runs separately (npm start, port 8080 by default); the dev server
// forwards the API and the live-events WebSocket to it so cookies stay same-origin.
const hub = process.env.CHORUS_HUB_URL ?? 'http://localhost:8080';

export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 400 },
  server: {
    proxy: {
      '/api': { target: hub, changeOrigin: false },
      '/ws': { target: hub.replace(/^http/, 'ws'), ws: true },
    },
  },
});
