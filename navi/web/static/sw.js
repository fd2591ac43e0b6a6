// Navi's service worker: the page's shell (HTML, styles, scripts, icons) is kept in a cache, so the
// page opens without Navi and says it is not reachable, and the page can be installed as an app.
// Nothing a user said is ever cached: only the shell's own files are answered from the cache, and
// every other request (the API, sessions, uploads, the socket) goes to Navi untouched.
//
// `VERSION` and `SHELL` are written in front of this file by Navi when it serves /sw.js: the version
// is a digest of the shell's files, so a new Navi replaces the cached shell on the next visit.

const CACHE = `navi-shell-${VERSION}`;
const SHELL_PATHS = new Set(SHELL);

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(SHELL)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches.keys()
      .then((names) => Promise.all(names.filter((n) => n.startsWith("navi-shell-") && n !== CACHE).map((n) => caches.delete(n))))
      .then(() => self.clients.claim()),
  );
});

// Network first, so a running Navi always serves its newest page; the cache only when Navi is gone.
async function shell(request, key) {
  try {
    const response = await fetch(request);
    if (response.ok && !response.redirected && response.type === "basic") {
      const copy = response.clone();
      caches.open(CACHE).then((cache) => cache.put(key, copy));
    }
    return response;
  } catch (error) {
    const cached = await caches.match(key, { cacheName: CACHE });
    if (cached) return cached;
    throw error;
  }
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.mode === "navigate" && url.pathname === "/") {
    event.respondWith(shell(request, "/"));
  } else if (SHELL_PATHS.has(url.pathname) && !url.search) {
    event.respondWith(shell(request, url.pathname));
  }
});
