// Browser notifications for scheduled runs. Off until the person turns on "Notify me" in the
// schedules panel: that click is the user gesture browsers require before asking for permission,
// and the page never asks on load. The choice is kept in localStorage for this browser.

import { plainText } from "/static/js/markdown.js";

const KEY = "navi.notify";

export class Notifier {
  constructor({ toggle, note, onOpen }) {
    this.toggle = toggle;
    this.note = note;
    this.onOpen = onOpen; // (session id) → open it in this window
    this.supported = "Notification" in window;
    this.toggle.checked = this.enabled;
    this.toggle.addEventListener("change", () => this.changed());
    this.explain();
  }

  get enabled() {
    return this.supported && Notification.permission === "granted" && localStorage.getItem(KEY) === "on";
  }

  async changed() {
    if (!this.toggle.checked) {
      localStorage.removeItem(KEY);
      this.explain();
      return;
    }
    if (!this.supported) {
      this.toggle.checked = false;
      this.explain();
      return;
    }
    let permission = Notification.permission;
    if (permission === "default") permission = await Notification.requestPermission();
    if (permission === "granted") localStorage.setItem(KEY, "on");
    this.toggle.checked = this.enabled;
    this.explain();
  }

  explain() {
    let text = "";
    if (!this.supported) text = "This browser cannot show notifications.";
    else if (Notification.permission === "denied") text = "Notifications are blocked for this site in the browser's settings.";
    else if (this.enabled) text = "You will be notified when a scheduled run ends or waits for your approval.";
    this.note.textContent = text;
    this.note.hidden = !text;
  }

  // A schedule_run event (a frame, or one the poll found): ended, or waiting for an approval.
  show(event) {
    if (!this.enabled) return;
    let body;
    if (event.status === "waiting_approval") body = `Waiting for your approval${event.tool ? `: ${event.tool}` : ""}`;
    else if (event.status === "ok") body = plainText(event.preview || "") || "Done.";
    else body = `${event.status === "skipped" ? "Skipped" : "Failed"}: ${event.error || "no reason given"}`;
    try {
      const note = new Notification(event.title || "Navi", { body, tag: `navi-${event.schedule_run_id}` });
      note.onclick = () => {
        window.focus();
        if (event.session_id) this.onOpen(event.session_id);
        note.close();
      };
    } catch { /* some browsers allow notifications only from a service worker: nothing to show */ }
  }
}
