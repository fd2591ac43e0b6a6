// Notifications. Off until the person turns on "Notify me" in the schedules panel: that click is
// the user gesture browsers require before asking for permission, and the page never asks on load.
// The choice is kept in localStorage for this browser. Where the browser has Web Push, turning it
// on subscribes this browser (POST /push/subscriptions): Navi then notifies it through its push
// service when a turn, schedule or job ends while none of the user's pages is visible, or an
// approval waits — with the page closed too (sw.js shows them). Without Web Push, scheduled runs
// are shown by this page while it is open.

import { api } from "./api.js";
import { plainText } from "./markdown.js";

function keyBytes(base64url) {
  const text = atob(base64url.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}

const KEY = "navi.notify";

export class Notifier {
  constructor({ toggle, note, onOpen }) {
    this.toggle = toggle;
    this.note = note;
    this.onOpen = onOpen; // (session id) → open it in this window
    this.supported = "Notification" in window;
    this.toggle.checked = this.enabled;
    this.toggle.addEventListener("change", () => this.changed());
    this.pushing = false;
    this.explain();
    if (this.enabled) this.subscribe(); // kept current: Navi may have dropped a subscription it found gone
  }

  get pushable() {
    return "serviceWorker" in navigator && "PushManager" in window;
  }

  // This browser subscribed with Navi's VAPID key and the subscription given to Navi.
  async subscribe() {
    if (!this.pushable) return;
    try {
      const registration = await navigator.serviceWorker.ready;
      const { public_key: key } = await api.pushKey();
      let subscription = await registration.pushManager.getSubscription();
      const current = subscription?.options?.applicationServerKey;
      if (subscription && current && btoa(String.fromCharCode(...new Uint8Array(current))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "") !== key) {
        await subscription.unsubscribe(); // made for another key (another Navi on this address)
        subscription = null;
      }
      subscription ??= await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(key) });
      await api.subscribePush(subscription.toJSON());
      this.pushing = true;
    } catch {
      this.pushing = false; // no push service reachable, or refused: notifications while the page is open
    }
    this.explain();
  }

  async unsubscribe() {
    this.pushing = false;
    if (!this.pushable) return;
    try {
      const registration = await navigator.serviceWorker.ready;
      const subscription = await registration.pushManager.getSubscription();
      if (!subscription) return;
      await api.unsubscribePush(subscription.endpoint).catch(() => {});
      await subscription.unsubscribe();
    } catch { /* nothing subscribed */ }
  }

  get enabled() {
    return this.supported && Notification.permission === "granted" && localStorage.getItem(KEY) === "on";
  }

  async changed() {
    if (!this.toggle.checked) {
      localStorage.removeItem(KEY);
      await this.unsubscribe();
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
    if (this.enabled) await this.subscribe();
  }

  explain() {
    let text = "";
    if (!this.supported) text = "This browser cannot show notifications.";
    else if (Notification.permission === "denied") text = "Notifications are blocked for this site in the browser's settings.";
    else if (this.enabled && this.pushing) text = "This browser is notified when Navi finishes or waits for you while no Navi page is in view — closed too.";
    else if (this.enabled) text = "You will be notified when a scheduled run ends or waits for your approval.";
    this.note.textContent = text;
    this.note.hidden = !text;
  }

  // A schedule_run event (a frame, or one the poll found): ended, or waiting for an approval.
  show(event) {
    if (!this.enabled || this.pushing) return; // pushed by Navi when no page is in view
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
