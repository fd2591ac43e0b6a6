// Messages typed while a turn runs: they wait in the session's queue (drawn here, greyed, above the
// box, with Edit and Cancel) and run when the turn ends; a steering one (Alt+Enter) joins the running
// turn at its next step and is drawn there, in the turn. The server keeps the queue (every window
// and worker sees the same one): this view draws its `queued` / `queue_cancelled` frames and the list
// a reloaded page reads, and drops a message once its `stream_start` or `steered` frame says it left.

import { el } from "./dom.js";

export class QueueView {
  constructor(container, { onEdit, onCancel }) {
    Object.assign(this, { container, onEdit, onCancel });
    this.items = new Map(); // message_id → {message_id, content, mode, position}
    this.since = null; // while a list is being read: the changes frames made meanwhile, in order
  }

  set(list) {
    this.since = null;
    this.items = new Map(list.map((m) => [m.message_id, m]));
    this.render();
  }

  clear() {
    this.set([]);
  }

  // The list read from the server is as it was at some moment of the request, and a frame that came
  // meanwhile may be newer: `reading()` starts noting changes, `read(list)` takes the list and then
  // the changes again, in order (each one only sets or deletes a row, so once more is harmless).
  reading() {
    this.since = [];
  }

  read(list) { // null: it could not be read; the frames' changes stand
    const changes = this.since || [];
    if (!list) {
      this.since = null;
      return;
    }
    this.set(list);
    for (const [id, frame] of changes) frame ? this.items.set(id, frame) : this.items.delete(id);
    this.render();
  }

  has(id) {
    return this.items.has(id);
  }

  upsert(frame) {
    this.since?.push([frame.message_id, frame]);
    this.items.set(frame.message_id, frame);
    this.render();
  }

  remove(id) {
    this.since?.push([id, null]);
    if (!this.items.delete(id)) return false;
    this.render();
    return true;
  }

  render() {
    const items = [...this.items.values()].sort((a, b) => a.position - b.position);
    this.container.hidden = !items.length;
    this.container.replaceChildren(...items.map((m) => this.row(m)));
  }

  row(m) {
    const text = el("div", { class: "bubble" }, m.content);
    const label = m.mode === "steer" ? "steering · waits for the next step" : "queued · runs after this answer";
    const edit = el("button", { type: "button", class: "link queue-edit" }, "Edit");
    const cancel = el("button", { type: "button", class: "link queue-cancel" }, "Cancel");
    const node = el("li", { class: "queued-msg", "data-message-id": m.message_id },
      el("span", { class: "queue-label" }, label), text, el("div", { class: "queue-actions" }, edit, cancel));
    edit.addEventListener("click", () => {
      const box = el("textarea", { class: "queue-text", rows: "2", "aria-label": "Queued message" });
      box.value = m.content;
      const save = el("button", { type: "button", class: "link queue-save" }, "Save");
      save.addEventListener("click", () => {
        if (box.value.trim()) this.onEdit(m.message_id, box.value.trim());
      });
      // Escape cancels the edit, and only that: the running answer goes on (the composer's stop
      // skips an Escape already handled), the message keeps the text it had.
      const restore = () => {
        box.replaceWith(text);
        save.replaceWith(edit);
      };
      box.addEventListener("keydown", (event) => {
        if (event.key === "Enter" && !event.shiftKey) {
          event.preventDefault();
          save.click();
        } else if (event.key === "Escape") {
          event.preventDefault();
          restore();
          edit.focus();
        }
      });
      text.replaceWith(box);
      edit.replaceWith(save);
      box.focus();
    });
    cancel.addEventListener("click", () => this.onCancel(m.message_id));
    return node;
  }
}

// A steering message, drawn inside the running turn where it reached the model.
export function steeredMessage(message) {
  return el("div", { class: "msg user steered", "data-message-id": message.id },
    el("span", { class: "queue-label" }, "you, while it worked"), el("div", { class: "bubble" }, message.content));
}
