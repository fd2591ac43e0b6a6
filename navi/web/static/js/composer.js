// The message box: Enter sends, Shift+Enter starts a line, Escape stops a run. Files are uploaded as
// soon as they are chosen or dropped (a dropped folder's files too); images (chosen, dropped or pasted)
// travel inline with the message. A file Navi reads as a document (the upload's answer names its
// `document_id`) shows its indexing state on its chip until it is ready (docstate.js).

import { api } from "./api.js";
import { droppedFiles, stateView } from "./docstate.js";
import { el, refusal, toast } from "./dom.js";
import { icon } from "./icons.js";

const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

function readDataUrl(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error || new Error("could not read the file"));
    reader.readAsDataURL(file);
  });
}

export class Composer {
  constructor({ form, input, send, stop, fileInput, attachments, dropZone, ensureSession, onSend, onStop, onQueue, tracker }) {
    Object.assign(this, { form, input, send, stop, fileInput, attachments, ensureSession, onSend, onStop, onQueue, tracker });
    this.images = []; // {name, dataUrl}
    this.files = []; // {name, path} once uploaded (+ documentId, doc: its indexing state)
    this.uploads = 0;
    this.running = false;

    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.submit(event.altKey ? "steer" : "queue"); // while a turn runs: wait, or steer it
      }
    });
    input.addEventListener("input", () => {
      this.grow();
      this.updateSend();
    });
    input.addEventListener("paste", (event) => {
      const files = [...(event.clipboardData?.files || [])];
      if (files.length) {
        event.preventDefault();
        this.add(files);
      }
    });
    stop.addEventListener("click", () => this.onStop());
    // Steering without a keyboard (a phone has no Alt+Enter): the button beside Stop while a turn runs.
    this.steer = form.querySelector("#steer");
    this.steer.addEventListener("click", () => this.submit("steer"));
    document.addEventListener("keydown", (event) => {
      // Shift+Esc focuses the box. An Escape that closes something (the phone's list, a dialog)
      // only closes it: it never also stops the run.
      if (event.key === "Escape" && !event.shiftKey && this.running && !event.defaultPrevented
          && !document.querySelector("dialog[open]")) {
        event.preventDefault();
        this.onStop();
      }
    });
    fileInput.addEventListener("change", () => {
      this.add([...fileInput.files]);
      fileInput.value = "";
    });
    dropZone.addEventListener("dragover", (event) => {
      if (![...event.dataTransfer.types].includes("Files")) return;
      event.preventDefault();
      form.classList.add("dragging");
    });
    dropZone.addEventListener("dragleave", (event) => {
      if (!dropZone.contains(event.relatedTarget)) form.classList.remove("dragging");
    });
    dropZone.addEventListener("drop", (event) => {
      form.classList.remove("dragging");
      if (!event.dataTransfer?.types.includes("Files")) return;
      event.preventDefault();
      droppedFiles(event.dataTransfer).then((files) => this.add(files)); // a folder: the files in it
    });
  }

  grow() {
    this.input.style.height = "auto";
    this.input.style.height = `${Math.min(this.input.scrollHeight, window.innerHeight * 0.4)}px`;
  }

  setRunning(running) {
    this.running = running;
    // While a turn runs the box stays open: what is typed waits in the queue (Enter) or steers the
    // turn (Alt+Enter).
    const touch = window.matchMedia("(pointer: coarse)").matches;
    this.input.placeholder = !running ? "Message Navi…"
      : touch ? "Queue a message, or Steer this answer…" : "Queue a message (Enter) · steer this answer (Alt+Enter)…";
    this.send.hidden = running;
    this.steer.hidden = !running;
    this.stop.hidden = !running;
    this.fileInput.disabled = running;
    this.updateSend();
    if (!running) this.input.focus();
  }

  updateSend() {
    const empty = !this.input.value.trim() && !this.images.length && !this.files.length;
    this.send.disabled = this.running || this.uploads > 0 || empty;
    this.steer.disabled = !this.running || this.uploads > 0 || empty;
  }

  async add(files) {
    for (const file of files) {
      if (IMAGE_TYPES.has(file.type)) await this.addImage(file);
      else await this.upload(file);
    }
  }

  async addImage(file) {
    if (file.size > MAX_IMAGE_BYTES) {
      toast(`${file.name} is larger than 10 MB; images are sent with the message, so keep them smaller.`);
      return;
    }
    try {
      this.images.push({ name: file.name || "pasted image", dataUrl: await readDataUrl(file) });
    } catch (error) {
      toast(`Could not read ${file.name}: ${error.message}`);
    }
    this.renderChips();
  }

  async upload(file) {
    let sessionId;
    try {
      sessionId = await this.ensureSession();
    } catch (error) {
      toast(`Could not start a conversation: ${error.message}`);
      return;
    }
    const pending = { name: file.name, uploading: true };
    this.files.push(pending);
    this.uploads += 1;
    this.renderChips();
    try {
      const stored = await api.upload(sessionId, file);
      Object.assign(pending, { name: stored.name, path: stored.path, uploading: false });
      if (stored.document_id && this.tracker) {
        pending.documentId = stored.document_id;
        pending.doc = { id: stored.document_id, name: stored.name, state: "queued", progress: 0 };
        this.tracker.watch(stored.document_id, (doc) => {
          pending.doc = doc;
          if (this.files.includes(pending)) this.renderChips();
        });
      }
    } catch (error) {
      const at = this.files.indexOf(pending); // it may have been removed meanwhile
      if (at >= 0) this.files.splice(at, 1);
      toast([`${file.name} was not uploaded: `, refusal(error.message)].flat()); // the accepted kinds behind a link
    } finally {
      this.uploads -= 1;
      this.renderChips();
    }
  }

  renderChips() {
    const chip = (label, onRemove, thumb) =>
      el("span", { class: "chip" }, thumb, label,
        el("button", { class: "icon-button", type: "button", "aria-label": `Remove ${label}`, onclick: onRemove }, icon("close")));
    this.attachments.replaceChildren(
      ...this.images.map((img, i) => chip(img.name, () => { this.images.splice(i, 1); this.renderChips(); },
        el("img", { src: img.dataUrl, alt: "" }))),
      ...this.files.map((f, i) => {
        const node = chip(f.uploading ? `${f.name} (uploading…)` : f.name,
          () => { this.files.splice(i, 1); this.renderChips(); }, icon("file"));
        if (f.doc) node.insertBefore(stateView(f.doc), node.lastChild);
        return node;
      }),
    );
    this.updateSend();
  }

  message() {
    const files = this.files.filter((f) => f.path).map((f) => ({ name: f.name, path: f.path }));
    const images = this.images.map((img) => img.dataUrl);
    let content = this.input.value.trim();
    if (!content && (files.length || images.length)) content = "Please look at what I attached.";
    return { content, images, files };
  }

  async submit(mode = "queue") {
    if (this.uploads > 0) return;
    const message = this.message();
    if (!message.content) return;
    if (this.running) {
      if (this.onQueue(message, mode)) this.clear();
      return;
    }
    await this.onSend(message);
  }

  // The documents among the files about to be sent: their chips in the sent message keep showing
  // their state.
  documents() {
    return this.files.filter((f) => f.path && f.documentId).map((f) => ({ name: f.name, id: f.documentId }));
  }

  dropUploads() {
    if (!this.files.length) return;
    this.files = [];
    this.renderChips();
  }

  clear() {
    this.input.value = "";
    this.images = [];
    this.files = [];
    this.renderChips();
    this.grow();
  }
}
