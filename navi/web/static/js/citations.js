// Citations in answers become links. An answer that cites "(contract.pdf, p. 12)" or
// "[contract.pdf, p. 12]" — the name of a document in the conversation's collections
// (GET /sessions/{sid}/collections, then their documents) — gets that citation as a link: a PDF opens
// /documents/{id}/file#page=12 in a new tab (the browser's own viewer goes to the page); another kind
// opens the cited passage in a small overlay (GET /documents/search?document=ID with the sentence
// that cites it, the hit at the cited place preferred, then /documents/chunks/{id} for the passage).
// Everything is built with DOM calls on text already sanitised: document text is only ever text.

import { api } from "./api.js";
import { el, toast } from "./dom.js";
import { icon } from "./icons.js";

// "(…)" or "[…]" on one line, short, with no brackets inside.
const BRACKETED = /[([]([^()[\]\n]{3,240})[)\]]/g;
const SKIP = "a, code, pre, button, .citation";

export function isPdf(doc) {
  return doc.kind === "pdf" || /\.pdf$/i.test(doc.name || doc.document_name || "");
}

// Where a citation points: {page, slide, sheet} read from its words ("p. 12", "pp. 3-4", "page 3", "slide 2", "sheet Budget").
export function placeOf(words) {
  const page = words.match(/\bp{1,2}\.?\s*(\d+)|\bpages?\s+(\d+)/i);
  const slide = words.match(/\bslide\s+(\d+)/i);
  const sheet = words.match(/\bsheet\s+([^,;]+)/i);
  return {
    page: page ? Number(page[1] || page[2]) : null,
    slide: slide ? Number(slide[1]) : null,
    sheet: sheet ? sheet[1].trim() : null,
  };
}

export function fileHref(id, page = null) {
  return `/documents/${encodeURIComponent(id)}/file${page ? `#page=${page}` : ""}`;
}

// The overlay for a passage: its citation, its text, a link to the whole file. Escape closes it.
export function showPassage({ title, text, href }) {
  const opener = document.activeElement;
  const close = el("button", { type: "button", class: "icon-button", "aria-label": "Close the passage" }, icon("close"));
  const dialog = el("dialog", { class: "dialog passage", "aria-labelledby": "passage-title" },
    el("div", { class: "dialog-head" }, el("h2", { id: "passage-title", text: title }), close),
    el("blockquote", { class: "passage-text", text: text || "" }),
    href ? el("p", { class: "note" }, el("a", { href, target: "_blank", rel: "noopener noreferrer" }, "Open the whole file")) : null);
  close.addEventListener("click", () => dialog.close());
  dialog.addEventListener("click", (event) => { if (event.target === dialog) dialog.close(); });
  dialog.addEventListener("close", () => {
    dialog.remove();
    if (opener?.isConnected) opener.focus();
  });
  document.body.append(dialog);
  dialog.showModal();
  close.focus();
  return dialog;
}

function matches(hit, place) {
  const at = hit.place || {};
  if (place.page && at.page !== place.page) return false;
  if (place.slide && at.slide !== place.slide) return false;
  if (place.sheet && String(at.sheet || "").toLowerCase() !== place.sheet.toLowerCase()) return false;
  return true;
}

// The passage a citation of a document (not a PDF) points at, in the overlay.
export async function openCited(doc, place, query) {
  try {
    const hits = await api.searchDocuments({ q: query || doc.name, document: doc.id, limit: 10 });
    const hit = hits.find((h) => matches(h, place)) || hits[0];
    if (!hit) {
      showPassage({ title: doc.name, text: "No passage of this document matches that citation.", href: fileHref(doc.id) });
      return;
    }
    await openHit(hit);
  } catch (error) {
    toast(`Could not show the passage: ${error.message}`);
  }
}

// A search hit: a PDF's page in the browser's viewer; anything else, its passage in the overlay.
export async function openHit(hit) {
  const page = hit.place?.page;
  if (isPdf(hit) && page) {
    window.open(fileHref(hit.document_id, page), "_blank", "noopener");
    return;
  }
  let text = hit.text;
  try {
    const found = await api.chunk(hit.chunk_id);
    const passage = typeof found?.passage === "string" ? found.passage : found?.passage?.text;
    if (passage) text = passage;
  } catch { /* the hit's own text is shown */ }
  showPassage({ title: hit.citation || hit.document_name, text, href: fileHref(hit.document_id) });
}

// The sentence around a citation, without it: the words a search for the cited passage uses.
function claimAround(node, cited) {
  const block = node.parentElement?.closest("p, li, td, blockquote") || node.parentElement;
  const text = (block?.textContent || "").replace(cited, " ").replace(/\s+/g, " ").trim();
  return text.slice(0, 300);
}

// Something that may be a citation — "(name.ext" or "[name.ext" — in an answer: only then are the
// conversation's documents read (a conversation without citations costs no request).
const CANDIDATE = /[([][^()[\]\n]{0,200}?\.[a-z0-9]{1,8}\b/i;

export class Citations {
  constructor(root) {
    this.root = root; // the conversation: its answers' .markdown blocks are linked
    this.session = null;
    this.byName = new Map(); // lower-case name → ready document (one still being read stays text)
    this.stale = false; // the documents known may be out of date: read them when a citation shows
    this.ticket = 0;
  }

  setSession(id) {
    this.session = id;
    this.byName = new Map();
    this.refresh();
  }

  // The conversation's documents changed (an upload became ready, a collection was attached):
  // read again now if an answer may cite one, else once one does.
  refresh(force = false) {
    this.stale = true;
    if (this.session && (force || CANDIDATE.test(this.root.textContent))) this.load();
  }

  async load() {
    const id = this.session;
    const ticket = ++this.ticket;
    this.stale = false;
    let docs = [];
    try {
      const collections = await api.sessionCollections(id);
      docs = (await Promise.all(collections.map((c) => api.documents(c.id).catch(() => [])))).flat();
    } catch {
      if (ticket === this.ticket) this.stale = true; // tried again at the next citation
      return;
    }
    if (ticket !== this.ticket) return;
    const byName = new Map();
    for (const doc of docs) {
      const key = String(doc.name || "").toLowerCase();
      if (key && doc.state === "ready" && !byName.has(key)) byName.set(key, doc);
    }
    this.byName = byName;
    for (const node of this.root.querySelectorAll(".markdown")) this.link(node);
  }

  // The document a citation's words name ("contract.pdf, p. 12" → contract.pdf), with its place.
  find(words) {
    const lower = words.toLowerCase();
    let best = null;
    for (const [name, doc] of this.byName) {
      if (!lower.startsWith(name)) continue;
      const next = lower.charAt(name.length);
      if (next && next !== "," && next !== ";" && next !== " ") continue;
      if (!best || name.length > best.name.length) best = { name, doc };
    }
    return best ? { doc: best.doc, place: placeOf(words.slice(best.name.length)) } : null;
  }

  link(element) {
    if (this.stale && CANDIDATE.test(element.textContent)) this.refresh(true);
    if (!this.byName.size) return;
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    const texts = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.parentElement?.closest(SKIP) && /[([]/.test(node.nodeValue)) texts.push(node);
    }
    for (const node of texts) this.linkText(node);
  }

  linkText(node) {
    const text = node.nodeValue;
    const parts = [];
    let last = 0;
    for (const match of text.matchAll(BRACKETED)) {
      const found = this.find(match[1].trim());
      if (!found) continue;
      const start = match.index + 1; // the bracket stays text; the words inside become the link
      parts.push(text.slice(last, start), this.anchor(match[1], found, node));
      last = start + match[1].length;
    }
    if (!parts.length) return;
    parts.push(text.slice(last));
    node.replaceWith(...parts);
  }

  anchor(words, { doc, place }, node) {
    const pdf = isPdf(doc);
    const href = fileHref(doc.id, pdf ? place.page : null);
    const link = el("a", { class: "citation", href, title: pdf ? `Open ${doc.name}${place.page ? ` at page ${place.page}` : ""}` : `Show the passage of ${doc.name}`,
      dataset: { documentId: doc.id } }, words);
    if (pdf) {
      link.target = "_blank";
      link.rel = "noopener noreferrer";
    } else {
      const claim = claimAround(node, words);
      link.addEventListener("click", (event) => {
        event.preventDefault();
        openCited(doc, place, claim);
      });
    }
    return link;
  }
}
