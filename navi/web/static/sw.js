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

// ---- Web Push (docs/notifications.md) -------------------------------------------------------------
// Navi sends a push (encrypted for this browser's subscription) when a turn, a schedule or a job
// ends while none of the user's pages is visible, or an approval waits. The payload is JSON:
// {kind, title, body, url, session_id, tag, approval_id?, actions?}. Every push shows a notification
// (browsers require it of a push subscription); a click opens the conversation in a Navi window
// (the one open, focused, or a new one); Allow / Deny answer the approval with this browser's
// sign-in, so with the user's own rights, without opening anything.

function pushed(event) {
  if (!event.data) return {};
  try {
    const data = event.data.json();
    return data && typeof data === "object" ? data : {};
  } catch {
    return { body: event.data.text() };
  }
}

self.addEventListener("push", (event) => {
  const data = pushed(event);
  const actions = Array.isArray(data.actions) ? data.actions.filter((a) => a && a.action && a.title) : [];
  const max = self.Notification?.maxActions ?? 2;
  const options = {
    body: String(data.body || ""),
    tag: String(data.tag || "navi"),
    icon: "/static/icons/navi-192.png",
    badge: "/static/icons/navi-192.png",
    data: {
      url: typeof data.url === "string" && data.url.startsWith("/") ? data.url : "/",
      kind: data.kind || "answer",
      session_id: data.session_id || null,
      approval_id: data.approval_id || null,
    },
    actions: actions.slice(0, max).map((a) => ({ action: String(a.action), title: String(a.title) })),
    requireInteraction: data.kind === "approval",
    renotify: data.kind === "approval",
  };
  event.waitUntil(self.registration.showNotification(String(data.title || "Navi"), options));
});

async function openConversation(path) {
  const url = new URL(path, self.location.origin);
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  const mine = windows.filter((client) => new URL(client.url).origin === self.location.origin);
  const client = mine.find((c) => c.focused) || mine[0];
  if (client) {
    client.postMessage({ type: "navi-open", url: url.pathname + url.search + url.hash });
    try {
      await client.focus();
    } catch { /* focusing is only allowed during the click; the page opened the conversation anyway */ }
    return;
  }
  await self.clients.openWindow(url.href);
}

async function answerApproval(data, decision) {
  if (!data.session_id || !data.approval_id) return openConversation(data.url || "/");
  const path = `/sessions/${encodeURIComponent(data.session_id)}/approvals/${encodeURIComponent(data.approval_id)}`;
  let response = null;
  try {
    response = await fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ decision }),
    });
  } catch { /* Navi unreachable: say so below */ }
  if (response && response.ok) return;
  // Not answered (signed out, already answered, Navi gone): the conversation shows what is left.
  const why = !response ? "Navi is not reachable." : response.status === 404 ? "It was answered already or has ended." : "Please open Navi to answer.";
  await self.registration.showNotification("Navi: not answered", { body: why, tag: `navi-answer-${data.approval_id}`, data: { url: data.url || "/" } });
}

self.addEventListener("notificationclick", (event) => {
  const note = event.notification;
  const data = note.data || {};
  note.close();
  if (event.action === "allow" || event.action === "deny") {
    event.waitUntil(answerApproval(data, event.action));
  } else {
    event.waitUntil(openConversation(data.url || "/"));
  }
});
