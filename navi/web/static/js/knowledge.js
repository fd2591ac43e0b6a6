// The Knowledge panel: a modal dialog with the user's document collections (GET /collections; create,
// delete after a confirm), the chosen collection's documents with their state (GET /documents?collection=ID,
// read again about once a second while any is queued or indexing; upload, re-index, delete), a search
// across every document (GET /documents/search: hits with their citation, opened at their page or as
// the passage), and which collections the open conversation reads (PUT/DELETE /sessions/{sid}/collections/{cid};
// its own collection, of the files uploaded into it, always). Files or a folder dropped on the panel
// go into the chosen collection. Names, reasons and passages are the server's text: set as text only.

import { api } from "./api.js";
import { fileHref, isPdf, openHit } from "./citations.js";
import { confirmDialog } from "./confirm.js";
import { BUSY, POLL_MS, droppedFiles, stateView } from "./docstate.js";
import { el } from "./dom.js";
import { icon } from "./icons.js";

const PAUSE_MS = 300;
const SNIPPET = 280;

const plural = (n, one) => `${n} ${one}${n === 1 ? "" : "s"}`;

export class KnowledgePanel {
  constructor({ dialog, openButton, closeButton, currentSession, ensureSession, onChanged }) {
    this.dialog = dialog;
    this.opener = openButton;
    this.currentSession = currentSession; // () → the open conversation, or null for a draft
    this.ensureSession = ensureSession; // () → its id, creating it (attaching in a draft)
    this.onChanged = onChanged; // the conversation's documents changed (citations read them again)
    const $ = (id) => dialog.querySelector(`#${id}`);
    this.status = $("knowledge-status");
    this.search = $("knowledge-search");
    this.hits = $("knowledge-hits");
    this.list = $("collection-list");
    this.empty = $("collection-empty");
    this.form = $("collection-form");
    this.nameInput = $("collection-name");
    this.formError = $("collection-error");
    this.docsSection = $("collection-documents");
    this.profileBox = $("collection-profiles");
    this.profileToggles = $("profile-toggles");
    this.profiles = null; // the server's profiles, read once
    this.docsHeading = $("documents-heading");
    this.docList = $("document-list");
    this.docEmpty = $("document-empty");
    this.fileInput = $("documents-input");
    this.collections = [];
    this.attached = new Set();
    this.selected = null; // the id of the collection whose documents are shown
    this.documents = [];
    this.documentsOf = null; // the collection `documents` were read from
    this.pollTimer = 0;
    this.docTicket = 0;
    this.searchTimer = 0;
    this.searchTicket = 0;
    openButton.addEventListener("click", () => this.open());
    closeButton.addEventListener("click", () => dialog.close());
    dialog.addEventListener("close", () => {
      clearTimeout(this.pollTimer);
      this.pollTimer = 0;
      if (this.opener.isConnected) this.opener.focus();
    });
    this.form.addEventListener("submit", (event) => { event.preventDefault(); this.create(); });
    $("knowledge-search-form").addEventListener("submit", (event) => { event.preventDefault(); this.find(this.search.value); });
    this.search.addEventListener("input", () => {
      clearTimeout(this.searchTimer);
      this.searchTimer = setTimeout(() => this.find(this.search.value), PAUSE_MS);
    });
    this.fileInput.addEventListener("change", () => {
      const files = [...this.fileInput.files];
      this.fileInput.value = "";
      this.upload(files);
    });
    // A drop on the panel is for the panel (not the conversation's attachments under it).
    dialog.addEventListener("dragover", (event) => {
      if (![...event.dataTransfer.types].includes("Files")) return;
      event.preventDefault();
      event.stopPropagation();
      dialog.classList.add("dragging");
    });
    dialog.addEventListener("dragleave", (event) => {
      if (!dialog.contains(event.relatedTarget)) dialog.classList.remove("dragging");
    });
    dialog.addEventListener("drop", (event) => {
      dialog.classList.remove("dragging");
      if (!event.dataTransfer?.types.includes("Files")) return;
      event.preventDefault();
      event.stopPropagation();
      const reading = droppedFiles(event.dataTransfer);
      reading.then((files) => this.upload(files));
    });
  }

  async open() {
    this.say("");
    if (!this.dialog.open) this.dialog.showModal();
    // On a touch screen a focused box brings up the keyboard over the list: focus the close button.
    const touch = window.matchMedia("(hover: none) and (pointer: coarse)").matches;
    (touch ? this.dialog.querySelector("#close-knowledge") : this.search).focus();
    await this.load();
  }

  say(message, kind = "info") {
    this.status.textContent = message;
    this.status.className = `panel-status ${kind}`;
    this.status.hidden = !message;
  }

  get sessionId() {
    return this.currentSession()?.id || null;
  }

  isOwn(c) {
    return c.kind === "session" && c.session_id === this.sessionId;
  }

  async load() {
    const sid = this.sessionId;
    try {
      const [all, attached] = await Promise.all([api.collections(), sid ? api.sessionCollections(sid) : []]);
      const byId = new Map(all.map((c) => [c.id, c]));
      for (const c of attached) if (!byId.has(c.id)) byId.set(c.id, c); // its own, before it has any
      this.collections = [...byId.values()].filter((c) => c.kind !== "session" || c.session_id === sid);
      this.collections.sort((a, b) => Number(this.isOwn(b)) - Number(this.isOwn(a)));
      this.attached = new Set(attached.map((c) => c.id));
    } catch (error) {
      this.say(`Could not read your collections: ${error.message}`, "error");
      return;
    }
    if (this.selected && !this.collections.some((c) => c.id === this.selected)) this.selected = null;
    if (!this.selected && this.collections.length) this.selected = this.collections[0].id;
    this.renderCollections();
    await this.loadDocuments();
  }

  // Read in the open conversation because it is attached to the conversation's profile.
  viaProfile(c) {
    const profile = this.currentSession()?.profile_id;
    return Boolean(profile && c.profiles?.includes(profile));
  }

  // The profiles a collection is attached to, as toggles (not for a conversation's own files).
  async renderProfiles(collection) {
    this.profileBox.hidden = collection.kind === "session";
    if (this.profileBox.hidden) return;
    if (!this.profiles) {
      try {
        this.profiles = await api.profiles();
      } catch (error) {
        this.profileBox.hidden = true;
        return;
      }
    }
    const focused = document.activeElement?.closest?.(".profile-toggle")?.dataset.id;
    this.profileToggles.replaceChildren(...this.profiles.map((p) => {
      const box = el("input", { type: "checkbox", checked: (collection.profiles || []).includes(p.id),
        onchange: (event) => this.setProfile(collection, p, event.target.checked) });
      box.setAttribute("aria-label", `Read ${collection.name} in every conversation with ${p.name}`);
      return el("label", { class: "profile-toggle", dataset: { id: p.id } }, box, ` ${p.name}`);
    }));
    if (focused) this.profileToggles.querySelector(`.profile-toggle[data-id="${focused}"] input`)?.focus();
  }

  async setProfile(collection, profile, on) {
    try {
      if (on) await api.attachToProfile(collection.id, profile.id);
      else await api.detachFromProfile(collection.id, profile.id);
      this.say(on ? `Every conversation with ${profile.name} reads ${collection.name} now.`
        : `Conversations with ${profile.name} no longer read ${collection.name}.`);
    } catch (error) {
      this.say(`Could not change it: ${error.message}`, "error");
    }
    await this.load();
    this.onChanged();
  }

  collectionName(c) {
    return this.isOwn(c) ? "This conversation's files" : c.name;
  }

  renderCollections() {
    const sid = this.sessionId;
    this.empty.hidden = this.collections.length > 0;
    this.list.replaceChildren(...this.collections.map((c) => {
      const name = this.collectionName(c);
      const chosen = c.id === this.selected;
      const count = c.id === this.documentsOf ? this.documents.length : c.documents ?? 0;
      const open = el("button", { type: "button", class: "collection-open", "aria-pressed": chosen ? "true" : "false",
        onclick: () => this.choose(c.id) },
        el("span", { class: "collection-name", text: name }),
        el("span", { class: "collection-meta", text: plural(count, "document") }));
      const viaProfile = this.viaProfile(c);
      const toggle = el("input", { type: "checkbox", checked: this.attached.has(c.id) || this.isOwn(c),
        disabled: this.isOwn(c) || viaProfile, onchange: (event) => this.setAttached(c, event.target.checked) });
      const use = el("label", { class: "collection-use", title: this.isOwn(c) ? "Files uploaded into this conversation are always read in it"
        : viaProfile ? "Read here through this conversation's profile (change it under the documents)"
        : sid ? "Navi reads this collection in the open conversation" : "Starts a conversation that reads this collection" },
        toggle, this.isOwn(c) ? " Used here" : viaProfile ? " Used here (profile)" : " Use in this conversation");
      toggle.setAttribute("aria-label", `Use ${name} in this conversation`);
      const remove = c.kind === "user"
        ? el("button", { type: "button", class: "icon-button", "aria-label": `Delete collection ${name}`, title: "Delete",
          onclick: () => this.removeCollection(c) }, icon("trash"))
        : null;
      return el("li", { class: `collection${chosen ? " chosen" : ""}${this.attached.has(c.id) ? " attached" : ""}`, dataset: { id: c.id } },
        open, use, remove);
    }));
  }

  async choose(id) {
    this.selected = id;
    this.documents = [];
    this.documentsOf = null;
    this.renderCollections();
    await this.loadDocuments();
    this.list.querySelector(`li[data-id="${id}"] .collection-open`)?.focus();
  }

  // One reading at a time counts (a poll, an upload's, a choice's): only the latest schedules the next.
  async loadDocuments() {
    clearTimeout(this.pollTimer);
    this.pollTimer = 0;
    const ticket = ++this.docTicket;
    const id = this.selected;
    const collection = this.collections.find((c) => c.id === id);
    this.docsSection.hidden = !collection;
    if (!collection) return;
    this.docsHeading.textContent = `Documents in ${this.collectionName(collection)}`;
    this.renderProfiles(collection);
    let docs;
    try {
      docs = await api.documents(id);
    } catch (error) {
      if (id === this.selected) this.say(`Could not read its documents: ${error.message}`, "error");
      return;
    }
    if (ticket !== this.docTicket || id !== this.selected || !this.dialog.open) return;
    const settled = this.documents.filter((d) => BUSY.has(d.state)).some((d) => !BUSY.has(docs.find((n) => n.id === d.id)?.state));
    this.documents = docs;
    this.documentsOf = id;
    this.renderDocuments();
    const count = this.list.querySelector(`li[data-id="${id}"] .collection-meta`);
    if (count) count.textContent = plural(docs.length, "document");
    if (settled && this.attached.has(id)) this.onChanged();
    if (docs.some((d) => BUSY.has(d.state))) this.pollTimer = setTimeout(() => this.loadDocuments(), POLL_MS);
  }

  renderDocuments() {
    this.docEmpty.hidden = this.documents.length > 0;
    // The row with focus is kept (its buttons), so a poll does not take the keyboard away.
    const focused = document.activeElement?.closest?.("li.document");
    const focusAction = focused ? document.activeElement.dataset.action : null;
    this.docList.replaceChildren(...this.documents.map((d) => {
      const name = isPdf(d) && d.state === "ready" // a PDF opens in the browser's viewer
        ? el("a", { class: "document-name", href: fileHref(d.id), target: "_blank", rel: "noopener noreferrer", text: d.name })
        : el("span", { class: "document-name", text: d.name });
      const actions = el("span", { class: "document-actions" },
        d.state === "queued" ? null : el("button", { type: "button", class: "fact-action", dataset: { action: "reindex" },
          "aria-label": `Re-index ${d.name}`, onclick: () => this.reindex(d) }, "Re-index"),
        el("button", { type: "button", class: "fact-action", dataset: { action: "delete" },
          "aria-label": `Delete ${d.name}`, onclick: () => this.removeDocument(d) }, "Delete"));
      return el("li", { class: `document ${d.state}`, dataset: { id: d.id, state: d.state } },
        el("div", { class: "document-main" }, name, stateView(d)), actions);
    }));
    if (focused?.dataset.id) {
      this.docList.querySelector(`li[data-id="${focused.dataset.id}"] [data-action="${focusAction}"]`)?.focus();
    }
  }

  async create() {
    const name = this.nameInput.value.trim();
    this.showError("");
    if (!name) {
      this.showError("Give the collection a name.");
      return;
    }
    try {
      const made = await api.createCollection(name);
      this.nameInput.value = "";
      this.selected = made.id;
      this.say(`Created ${made.name}.`);
    } catch (error) {
      this.showError(error.message);
      return;
    }
    await this.load();
  }

  showError(message) {
    this.formError.textContent = message;
    this.formError.hidden = !message;
    if (message) {
      this.nameInput.setAttribute("aria-invalid", "true");
      this.nameInput.setAttribute("aria-describedby", "collection-error");
      this.nameInput.focus();
    } else {
      this.nameInput.removeAttribute("aria-invalid");
    }
  }

  async removeCollection(c) {
    const ok = await confirmDialog({
      title: `Delete ${c.name}?`,
      message: `Its ${plural(c.documents ?? 0, "document")} and their index go for good; conversations stop reading it.`,
      confirm: "Delete",
    });
    if (!ok) return;
    try {
      await api.deleteCollection(c.id);
      this.say(`Deleted ${c.name}.`);
      if (this.selected === c.id) this.selected = null;
    } catch (error) {
      this.say(`Could not delete it: ${error.message}`, "error");
    }
    await this.load();
    if (this.attached.has(c.id)) this.onChanged();
    this.nameInput.focus(); // its row is gone
  }

  async setAttached(c, on) {
    let sid;
    try {
      sid = await this.ensureSession();
      if (on) await api.attachCollection(sid, c.id);
      else await api.detachCollection(sid, c.id);
      this.say(on ? `This conversation reads ${c.name} now.` : `This conversation no longer reads ${c.name}.`);
    } catch (error) {
      this.say(`Could not change it: ${error.message}`, "error");
    }
    await this.load();
    this.onChanged();
    this.list.querySelector(`li[data-id="${c.id}"] input[type="checkbox"]`)?.focus();
  }

  // Files chosen or dropped: into the chosen collection, one request each (so one refused file says
  // why and the others still go).
  async upload(files) {
    if (!files.length) return;
    const id = this.selected;
    const collection = this.collections.find((c) => c.id === id);
    if (!collection) {
      this.say("Create or choose a collection first, then add files to it.", "error");
      return;
    }
    const refused = [];
    let added = 0;
    for (const [i, file] of files.entries()) {
      this.say(`Uploading ${file.name} (${i + 1} of ${files.length})…`);
      try {
        await api.addDocuments(id, [file]);
        added += 1;
      } catch (error) {
        refused.push(`${file.name}: ${error.message}`);
      }
      if (i === 0 || i === files.length - 1) await this.loadDocuments();
    }
    await this.load();
    const said = `Added ${plural(added, "file")} to ${this.collectionName(collection)}.`;
    this.say(refused.length ? `${said} Not added: ${refused.join("; ")}` : said, refused.length ? "error" : "info");
  }

  async reindex(d) {
    let said;
    try {
      await api.reindexDocument(d.id);
      said = [`${d.name} is read again.`];
    } catch (error) {
      said = [`Could not re-index it: ${error.message}`, "error"];
    }
    await this.loadDocuments();
    this.say(...said); // after the reading: the row shows its new state
  }

  async removeDocument(d) {
    const ok = await confirmDialog({
      title: `Delete ${d.name}?`,
      message: "The document and its index go for good; answers can no longer cite it.",
      confirm: "Delete",
    });
    if (!ok) return;
    try {
      await api.deleteDocument(d.id);
      this.say(`Deleted ${d.name}.`);
    } catch (error) {
      this.say(`Could not delete it: ${error.message}`, "error");
    }
    await this.load();
    this.onChanged();
    this.fileInput.focus();
  }

  async find(query) {
    const q = query.trim();
    const ticket = ++this.searchTicket;
    if (!q) {
      this.hits.replaceChildren();
      this.hits.hidden = true;
      return;
    }
    let hits;
    try {
      hits = await api.searchDocuments({ q, limit: 10 });
    } catch (error) {
      if (ticket === this.searchTicket) this.say(`Could not search: ${error.message}`, "error");
      return;
    }
    if (ticket !== this.searchTicket) return;
    this.hits.hidden = false;
    if (!hits.length) {
      this.hits.replaceChildren(el("li", { class: "doc-hit none", text: "Nothing found in your documents." }));
      return;
    }
    this.hits.replaceChildren(...hits.map((hit) => {
      const title = hit.citation || hit.document_name;
      const pdfPage = isPdf(hit) && hit.place?.page;
      const open = pdfPage
        ? el("a", { class: "hit-citation", href: fileHref(hit.document_id, hit.place.page), target: "_blank", rel: "noopener noreferrer" }, title)
        : el("button", { type: "button", class: "hit-citation", onclick: () => openHit(hit) }, title);
      const text = (hit.text || "").replace(/\s+/g, " ").trim();
      return el("li", { class: "doc-hit", dataset: { documentId: hit.document_id } }, open,
        el("p", { class: "hit-text", text: text.length > SNIPPET ? `${text.slice(0, SNIPPET)}…` : text }));
    }));
  }
}
