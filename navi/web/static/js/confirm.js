// A question asked in a dialog of the page (never the browser's confirm(), which blocks the page and
// looks like a warning from the browser): a title, a sentence, and the action's button beside
// Cancel. Escape, Cancel or a click outside answer no. Resolves true only for the action.

import { el } from "/static/js/dom.js";

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
