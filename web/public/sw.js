/* global self, caches */
/**
 * The dashboard's service worker: the app shell and the newest detections stay readable in the
 * field without a connection.
 *
 * - Shell: index.html and the files it loads are cached at install (read from index.html itself,
 *   so no build step writes this file). Pages are network-first and fall back to the cached
 *   index.html; /assets/ files are named by content hash, so they are served from the cache once
 *   there (pages opened online are cached as they load).
 * - Data: a few GET answers (who is signed in, the detections list, the satellites) are
 *   network-first; offline, the last answer for the same URL is shown. Nothing else under /api/
 *   is stored.
 * - Privacy: the data cache is emptied when anyone signs in or out (the page also asks for it on
 *   sign-out), so one person's or team's data never reaches the next person on this device.
 */
const SHELL = 'chorus-shell-v1';
const DATA = 'chorus-data-v1';
const SHELL_FILES = ['/', '/manifest.webmanifest', '/icon.svg', '/icon-192.png', '/icon-512.png'];
/** GET answers kept for offline reading: exact API paths (any query). */
const DATA_PATHS = ['/api/auth/me', '/api/detections', '/api/stats/day', '/api/satellites', '/api/alerts'];
/** Requests after which the data of the previous person must go: sign-in (every step) and sign-out. */
const SESSION_CHANGE = /^\/api\/auth\/(login|logout)(\/|$)/;

/** The /assets/ files index.html loads (entry script, preloads, styles). */
function assetsOf(html) {
  return [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]);
}

async function cacheShell() {
  const cache = await caches.open(SHELL);
  const res = await fetch('/', { cache: 'no-store' });
  if (!res.ok) return;
  const html = await res.clone().text();
  const before = await cache.match('/');
  const changed = !before || (await before.text()) !== html;
  await cache.put('/', res);
  if (changed) await pruneAssets(cache, html);
  await Promise.all(
    [...SHELL_FILES.slice(1), ...assetsOf(html)].map((url) =>
      fetch(url)
        .then((r) => (r.ok ? cache.put(url, r) : undefined))
        .catch(() => undefined),
    ),
  );
}

/** Drops hashed files of earlier builds: those the new index.html does not load (lazy pages re-cache as visited). */
async function pruneAssets(cache, html) {
  const wanted = new Set(assetsOf(html));
  for (const req of await cache.keys()) {
    const path = new URL(req.url).pathname;
    if (path.startsWith('/assets/') && !wanted.has(path)) await cache.delete(req);
  }
}

self.addEventListener('install', (event) => {
  event.waitUntil(cacheShell().then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) => Promise.all(names.filter((n) => n !== SHELL && n !== DATA).map((n) => caches.delete(n))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener('message', (event) => {
  if (event.data === 'clear-data') event.waitUntil(caches.delete(DATA));
});

async function page(request) {
  const cache = await caches.open(SHELL);
  try {
    const res = await fetch(request);
    if (res.ok && (res.headers.get('content-type') ?? '').startsWith('text/html')) {
      const html = await res.clone().text();
      const before = await cache.match('/');
      if (!before || (await before.text()) !== html) {
        await cache.put('/', res.clone());
        await pruneAssets(cache, html);
      }
    }
    return res;
  } catch (err) {
    const cached = await cache.match('/');
    if (cached) return cached;
    throw err;
  }
}

async function asset(request) {
  const cache = await caches.open(SHELL);
  const cached = await cache.match(request);
  if (cached) return cached;
  const res = await fetch(request);
  if (res.ok) await cache.put(request, res.clone());
  return res;
}

async function data(request) {
  const cache = await caches.open(DATA);
  try {
    const res = await fetch(request);
    if (res.ok) await cache.put(request, res.clone());
    // Signed out elsewhere (or the session expired): nothing of it may be shown offline later.
    else if (res.status === 401) await caches.delete(DATA);
    return res;
  } catch (err) {
    const cached = await cache.match(request);
    if (cached) return cached;
    throw err;
  }
}

self.addEventListener('fetch', (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.method !== 'GET') {
    if (SESSION_CHANGE.test(url.pathname)) event.waitUntil(caches.delete(DATA));
    return;
  }
  if (request.mode === 'navigate') event.respondWith(page(request));
  else if (url.pathname.startsWith('/assets/')) event.respondWith(asset(request));
  else if (DATA_PATHS.includes(url.pathname)) event.respondWith(data(request));
  else if (SHELL_FILES.includes(url.pathname)) event.respondWith(caches.match(request).then((r) => r ?? fetch(request)));
});
