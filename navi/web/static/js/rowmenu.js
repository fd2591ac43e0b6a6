// A small menu of actions under a row's "⋯" button: a list of menu items, opened by the button
// (click, Enter or Space), left with Escape, a click elsewhere or Tab; Up and Down move between the
// items. One menu at a time; the focus goes back to the button when it closes without an action.

import { el } from "./dom.js";
import { icon } from "./icons.js";

export class RowMenu {
  constructor() {
    this.node = null;
    this.button = null;
    this.onDocument = (event) => {
      if (this.node && !this.node.contains(event.target) && event.target !== this.button) this.close();
    };
  }

  open(button, items) {
    const same = this.button === button;
    this.close();
    if (same) return; // a second click on the button closes its menu
    this.button = button;
    button.setAttribute("aria-expanded", "true");
    const entries = items.map((item) => el("button", {
      type: "button", role: "menuitem", class: item.danger ? "danger-text" : undefined,
      onclick: (event) => {
        event.stopPropagation();
        this.close(false);
        item.run();
      },
    }, icon(item.icon), item.label));
    this.node = el("div", { class: "row-menu", role: "menu", "aria-label": button.getAttribute("aria-label") }, entries);
    this.node.addEventListener("keydown", (event) => this.key(event, entries));
    document.body.append(this.node);
    this.place(button);
    entries[0].focus();
    document.addEventListener("pointerdown", this.onDocument, true);
  }

  // Under the button, inside the window (above it when there is no room below).
  place(button) {
    const box = button.getBoundingClientRect();
    const menu = this.node.getBoundingClientRect();
    const left = Math.max(8, Math.min(box.right - menu.width, window.innerWidth - menu.width - 8));
    const below = box.bottom + 4;
    const top = below + menu.height > window.innerHeight - 8 ? Math.max(8, box.top - menu.height - 4) : below;
    Object.assign(this.node.style, { left: `${left}px`, top: `${top}px` });
  }

  key(event, entries) {
    const at = entries.indexOf(document.activeElement);
    if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
      this.close();
    } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const step = event.key === "ArrowDown" ? 1 : -1;
      entries[(at + step + entries.length) % entries.length].focus();
    } else if (event.key === "Tab") {
      this.close();
    }
  }

  close(refocus = true) {
    if (!this.node) return;
    document.removeEventListener("pointerdown", this.onDocument, true);
    this.node.remove();
    this.node = null;
    const button = this.button;
    this.button = null;
    if (button?.isConnected) {
      button.setAttribute("aria-expanded", "false");
      if (refocus) button.focus();
    }
  }
}
