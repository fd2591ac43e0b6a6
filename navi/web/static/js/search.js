// The search box's second half: as the user types (two characters or more, after a short pause) the
// page asks GET /search and shows the messages that match under the list's title matches — the
// session's name, the message's date, the snippet with the matched words in <mark>. The snippet is
// the user's text: it is only ever set as text nodes, never parsed as markup.

import { api } from "./api.js";
import { el } from "./dom.js";

export const MIN_CHARS = 2;
const PAUSE_MS = 250;

// The snippet as nodes: text, with <mark> around each [start, end) of `highlights`. The offsets count
// characters (code points), as the server counts them, not JavaScript's UTF-16 units.
export function markedSnippet(snippet, highlights) {
  const chars = Array.from(String(snippet ?? ""));
  const nodes = [];
  let at = 0;
  const spans = (Array.isArray(highlights) ? highlights : [])
    .filter((h) => Array.isArray(h) && Number.isInteger(h[0]) && Number.isInteger(h[1]))
    .map(([start, end]) => [Math.max(0, start), Math.min(chars.length, end)])
    .filter(([start, end]) => start < end)
    .sort((a, b) => a[0] - b[0]);
  for (const [start, end] of spans) {
    if (start < at) continue; // overlapping: the first one wins
    if (start > at) nodes.push(document.createTextNode(chars.slice(at, start).join("")));
    nodes.push(el("mark", { text: chars.slice(start, end).join("") }));
    at = end;
  }
  if (at < chars.length) nodes.push(document.createTextNode(chars.slice(at).join("")));
  return nodes;
}

function day(iso) {
  const time = Date.parse(iso);
  if (!Number.isFinite(time)) return "";
  return new Intl.DateTimeFormat(undefined, { dateStyle: "medium" }).format(new Date(time));
}

export class MessageSearch {
  // `onChange`: the hits (or the state of the search) changed, the list redraws.
  constructor({ onChange, onOpen }) {
    this.onChange = onChange;
    this.onOpen = onOpen; // (hit) → open its session at that message
    this.query = "";
    this.hits = [];
    this.pending = false; // a search is waiting or under way for `query`
    this.error = null;
    this.timer = 0;
    this.ticket = 0;
  }

  // The box's text changed: search it after a pause (or forget the hits when it is too short).
  update(text) {
    const query = text.trim();
    if (query === this.query) return;
    clearTimeout(this.timer);
    this.ticket += 1;
    this.query = query;
    this.hits = [];
    this.error = null;
    this.pending = query.length >= MIN_CHARS;
    if (this.pending) this.timer = setTimeout(() => this.run(query, this.ticket), PAUSE_MS);
  }

  async run(query, ticket) {
    let hits = [];
    let error = null;
    try {
      hits = await api.search(query);
      if (!Array.isArray(hits)) hits = [];
    } catch (failure) {
      error = failure?.message || "no answer";
    }
    if (ticket !== this.ticket) return; // the box changed meanwhile
    Object.assign(this, { hits, error, pending: false });
    this.onChange();
  }

  get active() {
    return this.query.length >= MIN_CHARS;
  }

  // The "Messages" group, or nothing (too short a query, still waiting, or no hit).
  section() {
    if (!this.active) return null;
    const heading = el("h2", { class: "group-label", id: "group-messages", text: "Messages" });
    if (this.error) {
      return el("section", { class: "session-group message-hits", "aria-labelledby": "group-messages" }, heading,
        el("p", { class: "search-error", role: "status", text: `Could not search the messages: ${this.error}` }));
    }
    if (!this.hits.length) return null;
    return el("section", { class: "session-group message-hits", "aria-labelledby": "group-messages" }, heading,
      el("ul", { class: "session-rows" }, this.hits.map((hit) => this.item(hit))));
  }

  item(hit) {
    const name = hit.session_name || "New conversation";
    const meta = [day(hit.created_at), hit.role === "user" ? "you" : "Navi"].filter(Boolean).join(" · ");
    return el("li", { class: "search-hit", dataset: { session: hit.session_id, message: hit.message_id } },
      el("button", { class: "hit-open", type: "button", onclick: () => this.onOpen(hit) },
        el("span", { class: "hit-name", text: name }),
        el("span", { class: "hit-meta", text: meta }),
        el("span", { class: "hit-snippet" }, markedSnippet(hit.snippet, hit.highlights))));
  }
}
