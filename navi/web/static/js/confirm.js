// A question asked in a dialog of the page (never the browser's confirm(), which blocks the page and
// looks like a warning from the browser): a title, a sentence, and the action's button beside
// Cancel. Escape, Cancel or a click outside answer no. Resolves true only for the action.

import { el } from "./dom.js";

export function confirmDialog({ title, message, confirm = "OK", danger = true }) {
  const opener = document.activeElement;
  return new Promise((resolve) => {
    const yes = el("button", { type: "button", class: danger ? "danger" : "primary", value: "yes" }, confirm);
    const no = el("button", { type: "button", class: "outline", value: "no" }, "Cancel");
    const heading = el("h2", { id: "confirm-title", text: title });
    const dialog = el("dialog", { class: "dialog confirm", "aria-labelledby": "confirm-title", "aria-describedby": "confirm-text" },
      heading, el("p", { id: "confirm-text", text: message }), el("div", { class: "confirm-actions" }, no, yes));
    let answer = false;
    yes.addEventListener("click", () => { answer = true; dialog.close(); });
    no.addEventListener("click", () => dialog.close());
    dialog.addEventListener("click", (event) => { if (event.target === dialog) dialog.close(); }); // the backdrop
    dialog.addEventListener("close", () => {
      dialog.remove();
      if (opener?.isConnected) opener.focus();
      resolve(answer);
    });
    document.body.append(dialog);
    dialog.showModal();
    no.focus(); // the safe answer is the one Enter gives
  });
}

// A short text asked in a dialog of the page (a folder's name): the box, suggestions to pick from
// (`options`), Cancel and the action. Enter gives the action; Escape, Cancel or a click outside give
// null. Resolves to the text, trimmed (null when it is empty).
export function askText({ title, label, value = "", confirm = "OK", options = [], maxlength = 100 }) {
  const opener = document.activeElement;
  return new Promise((resolve) => {
    const input = el("input", { type: "text", id: "ask-text", maxlength: String(maxlength), autocomplete: "off",
      list: options.length ? "ask-options" : undefined });
    input.value = value;
    const choices = options.length
      ? el("datalist", { id: "ask-options" }, options.map((option) => el("option", { value: option })))
      : null;
    const yes = el("button", { type: "submit", class: "primary" }, confirm);
    const no = el("button", { type: "button", class: "outline" }, "Cancel");
    const form = el("form", { method: "dialog", class: "ask-form" },
      el("label", { for: "ask-text", text: label }), input, choices, el("div", { class: "confirm-actions" }, no, yes));
    const dialog = el("dialog", { class: "dialog confirm", "aria-labelledby": "ask-title" },
      el("h2", { id: "ask-title", text: title }), form);
    let answer = null;
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      answer = input.value.trim().replace(/\s+/g, " ") || null;
      dialog.close();
    });
    no.addEventListener("click", () => dialog.close());
    dialog.addEventListener("click", (event) => { if (event.target === dialog) dialog.close(); });
    dialog.addEventListener("close", () => {
      dialog.remove();
      if (opener?.isConnected) opener.focus();
      resolve(answer);
    });
    document.body.append(dialog);
    dialog.showModal();
    input.focus();
    input.select();
  });
}
