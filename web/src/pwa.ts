/**
 * The installable app: registers the service worker (web/public/sw.js, which keeps the shell and
 * the newest detections readable offline) and empties its data cache on sign-out, so nothing of
 * one person's teams is shown to the next one on this device.
 */

/** The cache sw.js keeps API answers in (its DATA). */
const DATA_CACHE = 'chorus-data-v1';

export function registerServiceWorker(): void {
  // Development (vite's dev server) serves modules the worker would cache stale; only the built app registers it.
  if (!import.meta.env.PROD || !('serviceWorker' in navigator)) return;
  window.addEventListener('load', () => {
    navigator.serviceWorker.register('/sw.js', { scope: '/' }).catch(() => {
      // No worker (private mode, an http hub on another machine): the dashboard works online as before.
    });
  });
}

/** Empties the offline copy of API answers (called on sign-out; the worker also does on its own). */
export async function clearOfflineData(): Promise<void> {
  if (!('caches' in window)) return;
  await caches.delete(DATA_CACHE).catch(() => false);
}
