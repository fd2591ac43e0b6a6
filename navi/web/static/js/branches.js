// A conversation is a tree (docs/api.md#branches): the page shows one path of it. Under each user
// message: Edit (an inline box; Save runs the edited message as a new branch) and Fork; under each
// answer: Regenerate and Fork; and on a message that has siblings, a ‹ 2/3 › switcher. The caller
// (main.js) does the work: edit and regenerate go on the socket, switch and fork over REST.

import { el } from "./dom.js";
import { icon } from "./icons.js";

// ‹ i/n ›: the message's place among its siblings; the arrows show the previous or next one.
function switcher(siblings, index, onSwitch) {
  const go = (to) => () => onSwitch(siblings[to]);
  return el("span", { class: "branch-switch", role: "group", "aria-label": "Versions" },
    el("button", { type: "button", class: "branch-prev", "aria-label": "Previous version", disabled: index === 0, onclick: go(index - 1) }, "‹"),
    el("span", { class: "branch-count", text: `${index + 1}/${siblings.length}` }),
    el("button", { type: "button", class: "branch-next", "aria-label": "Next version", disabled: index === siblings.length - 1, onclick: go(index + 1) }, "›"));
}

function bar(message, actions, handlers, at = message.created_at) {
  const node = el("div", { class: "msg-actions" });
  if ((message.siblings || []).length > 1) node.append(switcher(message.siblings, message.sibling_index || 0, handlers.onSwitch));
  node.append(...actions, stamp(at));
  return node;
}

// When it was written: the time of day (or the date, for an older day), the exact moment on hover.
// A message drawn live has no stored time yet: now.
function stamp(at) {
  const when = at ? new Date(at) : new Date();
  if (Number.isNaN(when.getTime())) return "";
  const today = new Date().toDateString() === when.toDateString();
  const short = today
    ? when.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })
    : when.toLocaleDateString([], { day: "numeric", month: "short" });
  return el("time", { class: "msg-time", datetime: when.toISOString(), title: when.toLocaleString() }, short);
}

// The bubble of a user message turns into a box with its text; Save sends the new text.
function editInPlace(node, text, onSave) {
  const bubble = node.querySelector(".bubble");
  const actions = node.querySelector(".msg-actions");
  const box = el("textarea", { class: "edit-box", rows: 3, "aria-label": "Edit message" });
  box.value = text;
  const restore = () => { form.remove(); bubble.hidden = false; actions.hidden = false; };
  const form = el("div", { class: "edit-form" }, box,
    el("div", { class: "edit-actions" },
      el("button", { type: "button", class: "edit-save", onclick: async () => {
        const changed = box.value.trim();
        if (changed && await onSave(changed)) restore();
      } }, "Save"),
      el("button", { type: "button", class: "edit-cancel", onclick: restore }, "Cancel")));
  box.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    event.preventDefault(); // cancels the edit only: a running answer goes on
    restore();
  });
  bubble.hidden = true;
  actions.hidden = true;
  bubble.after(form);
  box.focus();
}

// The actions under a stored user message `m` (its node: `node`, its shown text: `text`).
export function userActions(node, m, text, handlers) {
  node.append(bar(m, [
    el("button", { type: "button", class: "msg-edit", title: "Edit and run again as a new branch",
      onclick: () => editInPlace(node, text, (changed) => handlers.onEdit(m.id, changed)) }, "Edit"),
    el("button", { type: "button", class: "msg-fork", title: "A new conversation with everything up to here", onclick: () => handlers.onFork(m.id) }, "Fork"),
  ], handlers));
}

// The actions under an answer: `first` is its first stored message (whose siblings are the other
// answers to the same question), `last` its last (where a fork ends; with `question`, the id is the
// question's, for a turn drawn live: the fork then ends after its answer).
export function answerActions(turnNode, first, last, handlers, rated = null) {
  turnNode.append(bar(first, [
    ...(rated && handlers.onRate ? rating(rated, handlers.onRate) : []),
    copyButton(turnNode, "Copy", "Copy the answer as Markdown", (texts) => texts.map((n) => n.markdown ?? n.innerText).join("\n\n")),
    copyButton(turnNode, "Copy text", "Copy the answer as plain text", (texts) => texts.map((n) => n.innerText).join("\n\n")),
    el("button", { type: "button", class: "msg-regenerate", title: "Another answer to the same question", onclick: () => handlers.onRegenerate(first.id) }, "Regenerate"),
    el("button", { type: "button", class: "msg-fork", title: "A new conversation with everything up to here", onclick: () => handlers.onFork(last.id, last.question ? last.id : null) }, "Fork"),
  ], handlers, last.created_at));
}

// 👍 and 👎: the person's rating of the answer, kept with it; pressed again, taken back.
function rating(rated, onRate) {
  let current = rated.feedback || null;
  // Drawn icons, not the emoji: a system without an emoji font would show empty boxes.
  const buttons = [["up", "thumb-up", "A good answer"], ["down", "thumb-down", "A poor answer"]].map(([value, face, label]) =>
    el("button", { type: "button", class: `msg-rate rate-${value}`, "aria-label": label, title: label, "aria-pressed": String(current === value) }, icon(face)));
  const show = () => buttons.forEach((b, i) => b.setAttribute("aria-pressed", String(current === ["up", "down"][i])));
  buttons.forEach((button, i) => button.addEventListener("click", async () => {
    const wanted = current === ["up", "down"][i] ? null : ["up", "down"][i];
    try {
      await onRate(rated.id, wanted);
      current = wanted;
    } catch { /* unchanged: the buttons show what is stored */ }
    show();
  }));
  return buttons;
}

// Copies the answer's text (its Markdown, or what the page shows) and says so on the button.
function copyButton(turnNode, label, title, text) {
  const button = el("button", { type: "button", class: "msg-copy", title }, label);
  button.addEventListener("click", async () => {
    const texts = [...turnNode.querySelectorAll(":scope > .markdown.text")];
    try {
      await navigator.clipboard.writeText(text(texts).trim());
      button.textContent = "Copied";
    } catch {
      button.textContent = "Could not copy";
    }
    setTimeout(() => { button.textContent = label; }, 1500);
  });
  return button;
}
