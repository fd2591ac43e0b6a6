// The memory panel: a modal dialog listing what Navi remembers about the user (GET /memory/facts),
// grouped by category, with a search box (?q=), and for each fact: where it came from (its
// conversation, linked to the message that said it: GET /memory/facts/{id}/source), its former
// values with their dates and source (…/history), edit (PATCH: the old value goes to the history),
// delete (DELETE, after a confirm) — and a form that adds one (POST). Values are the user's text:
// only ever set as text nodes.

import { api } from "./api.js";
import { confirmDialog } from "./confirm.js";
import { el } from "./dom.js";

const PAUSE_MS = 250;
const SOURCES = {
  extracted: "read from a conversation",
  remembered: "remembered when you asked",
  added: "added by you",
  edited: "corrected by you",
};

function day(iso) {
  const time = Date.parse(iso);
  if (!Number.isFinite(time)) return "";
  return new Intl.DateTimeFormat(undefined, { dateStyle: "medium" }).format(new Date(time));
}

const words = (label) => String(label || "").replaceAll("_", " ");

export class MemoryPanel {
  constructor({ dialog, openButton, closeButton, onOpenHit, onOpenSession, sessionName }) {
    this.dialog = dialog;
    this.opener = openButton;
    this.list = dialog.querySelector("#memory-list");
    this.empty = dialog.querySelector("#memory-empty");
    this.status = dialog.querySelector("#memory-status");
    this.search = dialog.querySelector("#memory-search");
    this.form = dialog.querySelector("#memory-form");
    this.error = dialog.querySelector("#memory-error");
    this.onOpenHit = onOpenHit; // ({session_id, message_id}) → open that conversation at that message
    this.onOpenSession = onOpenSession;
    this.sessionName = sessionName; // (id) → the session's name, if the page knows it
    this.facts = [];
    this.query = "";
    this.ticket = 0;
    this.timer = 0;
    this.editing = null; // the id of the fact whose value is being edited
    this.expanded = new Set(); // facts whose source and history are shown
    this.details = new Map(); // fact id → {source, history} once read
    openButton.addEventListener("click", () => this.open());
    closeButton.addEventListener("click", () => this.dialog.close());
    this.search.addEventListener("input", () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.setQuery(this.search.value), PAUSE_MS);
    });
    this.form.addEventListener("submit", (event) => { event.preventDefault(); this.add(); });
  }

  open() {
    this.say("");
    this.details.clear(); // memory may have changed meanwhile (a conversation remembered something)
    this.expanded.clear();
    this.editing = null;
    if (!this.dialog.open) this.dialog.showModal();
    // On a touch screen a focused box brings up the keyboard over the list: focus the close button.
    const touch = window.matchMedia("(hover: none) and (pointer: coarse)").matches;
    (touch ? this.dialog.querySelector("#close-memory") : this.search).focus();
    this.load();
  }

  say(message, kind = "info") {
    this.status.textContent = message;
    this.status.className = `panel-status ${kind}`;
    this.status.hidden = !message;
  }

  setQuery(text) {
    const query = text.trim();
    if (query === this.query) return;
    this.query = query;
    this.load();
  }

  async load() {
    const ticket = ++this.ticket;
    let facts;
    try {
      facts = await api.memoryFacts(this.query);
    } catch (error) {
      if (ticket === this.ticket) this.say(`Could not load the memory: ${error.message}`, "error");
      return;
    }
    if (ticket !== this.ticket) return; // the search changed meanwhile
    this.facts = Array.isArray(facts) ? facts : [];
    this.render();
  }

  render() {
    const focused = this.list.contains(document.activeElement)
      ? [document.activeElement.closest("li.fact")?.dataset.id, document.activeElement.dataset.action] : null;
    const groups = new Map();
    for (const fact of this.facts) {
      if (!groups.has(fact.category)) groups.set(fact.category, []);
      groups.get(fact.category).push(fact);
    }
    this.empty.textContent = this.query ? `Nothing remembered matches “${this.query}”.` : "Nothing remembered yet.";
    this.empty.hidden = this.facts.length > 0;
    this.list.replaceChildren(...[...groups].map(([category, facts]) => {
      const id = `memory-cat-${category}`;
      return el("section", { class: "memory-category", "aria-labelledby": id, dataset: { category } },
        el("h3", { id, text: words(category) }),
        el("ul", { class: "facts" }, facts.map((f) => this.item(f))));
    }));
    if (focused?.[0]) { // a redraw keeps the keyboard's place
      const row = this.list.querySelector(`li.fact[data-id="${CSS.escape(focused[0])}"]`);
      row?.querySelector(`[data-action="${focused[1]}"]`)?.focus();
    }
  }

  item(f) {
    const name = words(f.key);
    const shown = this.expanded.has(f.id);
    const action = (what, label, handler, extra = {}) =>
      el("button", { type: "button", class: "fact-action", dataset: { action: what }, "aria-label": `${label}: ${name}`,
        onclick: () => handler(f), ...extra }, label);
    const meta = [SOURCES[f.source] || f.source, `since ${day(f.updated_at)}`].filter(Boolean).join(" · ");
    return el("li", { class: "fact", dataset: { id: String(f.id) } },
      el("div", { class: "fact-main" },
        el("span", { class: "fact-key", text: name }),
        this.editing === f.id ? this.editForm(f, name) : el("span", { class: "fact-value", text: f.value })),
      el("div", { class: "fact-meta", text: meta }),
      el("div", { class: "fact-actions" },
        action("details", shown ? "Hide" : "Where from", (x) => this.toggle(x), { "aria-expanded": shown ? "true" : "false" }),
        this.editing === f.id ? null : action("edit", "Edit", (x) => this.startEdit(x)),
        action("delete", "Delete", (x) => this.remove(x, name))),
      shown ? this.detailsOf(f) : null);
  }

  editForm(f, name) {
    const input = el("input", { class: "fact-input", value: f.value, maxlength: "1000", "aria-label": `New value for ${name}` });
    const form = el("form", { class: "fact-edit", onsubmit: (event) => { event.preventDefault(); this.save(f, input.value); } },
      input,
      el("button", { type: "submit", class: "primary small", dataset: { action: "save" } }, "Save"),
      el("button", { type: "button", class: "outline small", dataset: { action: "cancel" },
        onclick: () => { this.editing = null; this.render(); } }, "Cancel"));
    input.addEventListener("keydown", (event) => {
      if (event.key !== "Escape") return;
      event.preventDefault(); // Escape cancels the edit, not the whole panel
      event.stopPropagation();
      this.editing = null;
      this.render();
    });
    return form;
  }

  startEdit(f) {
    this.editing = f.id;
    this.render();
    const input = this.list.querySelector(`li.fact[data-id="${f.id}"] .fact-input`);
    input?.focus();
    input?.select();
  }

  async save(f, text) {
    const value = text.trim();
    if (!value) {
      this.say("A fact needs a value; delete it to forget it.", "error");
      return;
    }
    try {
      const changed = await api.editFact(f.id, value);
      this.say(changed.outcome === "confirmed" ? `Unchanged: ${words(f.key)} is ${value}.`
        : `Changed ${words(f.key)}: ${f.value} → ${changed.fact.value}.`);
      this.editing = null;
      this.details.delete(f.id);
    } catch (error) {
      this.say(`Could not change it: ${error.message}`, "error");
      return;
    }
    await this.load();
    if (this.expanded.has(f.id)) this.loadDetails(f.id);
    this.list.querySelector(`li.fact[data-id="${f.id}"] [data-action="edit"]`)?.focus();
  }

  async remove(f, name) {
    const ok = await confirmDialog({
      title: "Delete this fact?",
      message: `Navi forgets “${name}: ${f.value}” and its former values for good.`,
      confirm: "Delete",
    });
    if (!ok) return;
    try {
      await api.deleteFact(f.id);
      this.say(`Deleted: ${name}.`);
    } catch (error) {
      this.say(`Could not delete it: ${error.message}`, "error");
    }
    this.expanded.delete(f.id);
    this.details.delete(f.id);
    await this.load();
    this.search.focus(); // its row is gone
  }

  toggle(f) {
    if (this.expanded.has(f.id)) this.expanded.delete(f.id);
    else {
      this.expanded.add(f.id);
      if (!this.details.has(f.id)) this.loadDetails(f.id);
    }
    this.render();
  }

  async loadDetails(id) {
    let source = null;
    let history = [];
    let error = null;
    try {
      [source, history] = await Promise.all([api.factSource(id), api.factHistory(id)]);
    } catch (failure) {
      error = failure?.message || "no answer";
    }
    this.details.set(id, { source, history: Array.isArray(history) ? history : [], error });
    this.render();
  }

  detailsOf(f) {
    const found = this.details.get(f.id);
    if (!found) return el("div", { class: "fact-details muted", text: "Loading…" });
    if (found.error) return el("div", { class: "fact-details error", text: `Could not read where it came from: ${found.error}` });
    return el("div", { class: "fact-details" }, this.sourceLine(f, found.source), this.historyList(f, found.history));
  }

  sourceLine(f, source) {
    if (!source) {
      const why = f.session_id ? "Its conversation has been deleted." : `${SOURCES[f.source] || "Added"}, not from a conversation.`;
      return el("p", { class: "fact-source", text: why.charAt(0).toUpperCase() + why.slice(1) });
    }
    const name = source.session_name || "New conversation";
    const when = day(source.created_at);
    const link = el("a", { class: "fact-link", href: `#/s/${source.session_id}`, onclick: (event) => {
      event.preventDefault();
      this.dialog.close();
      if (source.message_id) this.onOpenHit({ session_id: source.session_id, message_id: source.message_id });
      else this.onOpenSession(source.session_id);
    } }, `“${name}”`);
    return el("p", { class: "fact-source" }, source.message_id ? "You said it in " : "From ", link,
      when ? ` on ${when}` : "", source.text ? el("q", { class: "fact-quote", text: source.text }) : null);
  }

  historyList(f, history) {
    if (!history.length) return el("p", { class: "fact-history-empty muted", text: "No former values." });
    return el("div", {},
      el("h4", { class: "fact-history-title", text: "Former values" }),
      el("ol", { class: "fact-history", "aria-label": `Former values of ${words(f.key)}` },
        history.map((h) => el("li", {},
          el("span", { class: "fact-value", text: h.value }),
          el("span", { class: "fact-meta fact-when",
            text: ` · ${day(h.created_at)} – ${day(h.retired_at)} · ${SOURCES[h.source] || h.source}` }),
          h.session_id ? this.sessionLink(h.session_id) : null))));
  }

  // A former value's conversation (its name as the sidebar knows it), opened at its start.
  sessionLink(id) {
    const name = this.sessionName(id);
    return el("span", { class: "fact-meta" }, " · in ", el("a", { class: "fact-link", href: `#/s/${id}`, onclick: (event) => {
      event.preventDefault();
      this.dialog.close();
      this.onOpenSession(id);
    } }, name ? `“${name}”` : "a conversation"));
  }

  async add() {
    const value = (id) => this.form.querySelector(`#${id}`).value.trim();
    const body = { category: value("memory-category"), key: value("memory-key"), value: value("memory-value") };
    const missing = Object.entries(body).find(([, v]) => !v)?.[0];
    if (missing) {
      this.showError(`Fill in the ${missing === "key" ? "“What”" : missing}.`, `memory-${missing}`);
      return;
    }
    const button = this.form.querySelector("#memory-add");
    button.disabled = true;
    try {
      const made = await api.addFact(body);
      this.showError("");
      for (const id of ["memory-key", "memory-value"]) this.form.querySelector(`#${id}`).value = "";
      const said = { created: "Added", updated: "Updated (the old value is in its history)", confirmed: "Already remembered" };
      this.say(`${said[made.outcome] || "Saved"}: ${words(made.fact.key)} = ${made.fact.value}.`);
      await this.load();
    } catch (error) {
      this.showError(error.message, null); // everything typed stays
    } finally {
      button.disabled = false;
    }
  }

  showError(message, field) {
    this.error.textContent = message;
    this.error.hidden = !message;
    for (const input of this.form.querySelectorAll("[aria-invalid]")) input.removeAttribute("aria-invalid");
    if (message && field) {
      const input = this.form.querySelector(`#${field}`);
      input.setAttribute("aria-invalid", "true");
      input.setAttribute("aria-describedby", "memory-error");
      input.focus();
    }
  }
}
