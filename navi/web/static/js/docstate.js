// A document's indexing state as the page shows it (queued, indexing with a progress bar, ready with
// its pages and chunks, failed with the reason), the files of a drop (folders read through
// webkitGetAsEntry, hidden files skipped), and DocumentTracker: documents watched until they are
// ready (GET /documents/{id} about once a second), for the chips of files uploaded into a conversation.
// Names and reasons are the server's text: only ever set as text.

import { api } from "./api.js";
import { el } from "./dom.js";

export const POLL_MS = 1000;
export const BUSY = new Set(["queued", "indexing"]);

const plural = (n, one) => `${n} ${one}${n === 1 ? "" : "s"}`;

export function stateText(doc) {
  switch (doc.state) {
    case "queued": return "queued";
    case "indexing": return `indexing ${Math.round((doc.progress || 0) * 100)}%`;
    case "ready": {
      const parts = ["ready"];
      if (doc.pages) parts.push(plural(doc.pages, doc.kind === "pptx" || doc.kind === "odp" ? "slide" : "page"));
      parts.push(plural(doc.chunks || 0, "chunk"));
      return parts.join(" · ");
    }
    case "failed": return `failed: ${doc.error || "it could not be read"}`;
    default: return doc.state || "";
  }
}

// The state as a small element: a label and, while it is waiting or being read, a progress bar.
export function stateView(doc) {
  const label = el("span", { class: "doc-state-text", text: stateText(doc) });
  const node = el("span", { class: `doc-state ${doc.state || ""}`, dataset: { state: doc.state || "" } }, label);
  if (BUSY.has(doc.state)) {
    const bar = el("progress", { class: "doc-progress", max: "1", "aria-label": `Indexing ${doc.name}` });
    if (doc.state === "indexing") bar.value = Math.max(0, Math.min(1, doc.progress || 0));
    node.prepend(bar);
  }
  // Read, with something missing (pages without a text layer, text cut at the limit): said, in full on hover.
  if (doc.state === "ready" && doc.warnings?.length) {
    node.append(el("span", { class: "doc-warning", title: doc.warnings.join("\n"),
      text: ` · ⚠ ${doc.warnings[0]}${doc.warnings.length > 1 ? ` (+${doc.warnings.length - 1} more)` : ""}` }));
  }
  return node;
}

const hidden = (name) => name.startsWith(".");

function readEntries(reader) {
  return new Promise((resolve, reject) => reader.readEntries(resolve, reject));
}

async function entryFiles(entry, out) {
  if (hidden(entry.name)) return;
  if (entry.isFile) {
    out.push(await new Promise((resolve, reject) => entry.file(resolve, reject)));
    return;
  }
  if (!entry.isDirectory) return;
  const reader = entry.createReader();
  for (;;) { // a directory's entries come in batches (Chromium: 100 at a time) until one is empty
    const batch = await readEntries(reader);
    if (!batch.length) return;
    for (const child of batch) await entryFiles(child, out);
  }
}

// The files a drop carries, a dropped folder's included (its hidden files and folders left out).
// Must be called during the drop event: the browser gives the files and entries only then.
export function droppedFiles(transfer) {
  const files = [...(transfer?.files || [])];
  const entries = [...(transfer?.items || [])]
    .filter((item) => item.kind === "file")
    .map((item) => item.webkitGetAsEntry?.() || null);
  if (!entries.some((entry) => entry?.isDirectory)) return Promise.resolve(files.filter((f) => !hidden(f.name)));
  return (async () => {
    const out = [];
    for (const [i, entry] of entries.entries()) {
      try {
        if (entry) await entryFiles(entry, out);
        else if (files[i] && !hidden(files[i].name)) out.push(files[i]);
      } catch { /* an entry the browser would not read: left out */ }
    }
    return out;
  })();
}

// Documents watched until ready or failed; each change is handed to its listeners.
export class DocumentTracker {
  constructor({ onChange = () => {}, onSettled = () => {} } = {}) {
    this.onChange = onChange; // (doc) on every state read
    this.onSettled = onSettled; // (doc) once it is ready or failed
    this.watched = new Map(); // id → the latest document read
    this.listeners = new Map(); // id → Set of (doc) => void
    this.timer = 0;
  }

  watch(id, listener) {
    if (!id) return;
    if (listener) {
      if (!this.listeners.has(id)) this.listeners.set(id, new Set());
      this.listeners.get(id).add(listener);
      const known = this.watched.get(id);
      if (known) listener(known);
    }
    if (!this.watched.has(id)) this.watched.set(id, null);
    this.schedule(0);
  }

  schedule(ms = POLL_MS) {
    if (!this.timer) this.timer = setTimeout(() => this.poll(), ms);
  }

  async poll() {
    this.timer = 0;
    const open = [...this.watched].filter(([, doc]) => !doc || BUSY.has(doc.state)).map(([id]) => id);
    if (!open.length) return;
    await Promise.all(open.map(async (id) => {
      let doc;
      try {
        doc = await api.document(id);
      } catch (error) {
        if (error.status === 404) doc = { id, name: "", state: "failed", error: "deleted" };
        else return; // asked again at the next poll
      }
      this.watched.set(id, doc);
      for (const listener of this.listeners.get(id) || []) listener(doc);
      this.onChange(doc);
      if (!BUSY.has(doc.state)) {
        this.listeners.delete(id);
        this.onSettled(doc);
      }
    }));
    if ([...this.watched.values()].some((doc) => !doc || BUSY.has(doc.state))) this.schedule();
  }
}
