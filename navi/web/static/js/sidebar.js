// The session list: pinned first (the server's order), with open, pin, rename, delete and export.

import { api } from "/static/js/api.js";
import { el, relativeTime, toast } from "/static/js/dom.js";
import { icon } from "/static/js/icons.js";

export function sessionTitle(session) {
  return session?.name || "New conversation";
}

function download(filename, blob) {
  const url = URL.createObjectURL(blob);
  const link = el("a", { href: url, download: filename });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export class Sidebar {
  constructor({ list, onOpen, onDeleted, onRenamed }) {
    this.list = list;
    this.onOpen = onOpen;
    this.onDeleted = onDeleted;
    this.onRenamed = onRenamed;
    this.sessions = [];
    this.profiles = [];
    this.currentId = null;
  }

  setProfiles(profiles) {
    this.profiles = profiles;
  }

  profileName(id) {
    return this.profiles.find((p) => p.id === id)?.name || id;
  }

  select(id) {
    this.currentId = id;
    for (const item of this.list.children) {
      const current = item.dataset.id === id;
      item.classList.toggle("current", current);
      item.querySelector(".session-open")?.setAttribute("aria-current", current ? "page" : "false");
    }
  }

  async refresh() {
    try {
      this.sessions = await api.sessions();
    } catch (error) {
      toast(`Could not load the conversations: ${error.message}`);
      return;
    }
    this.render();
  }

  // GET /sessions answered elsewhere (the schedule watch's poll): redraw only when something changed.
  setSessions(sessions) {
    if (JSON.stringify(sessions) === JSON.stringify(this.sessions)) return;
    this.sessions = sessions;
    this.render();
  }

  // A scheduled run answered in this session (true), or the page showed it (false): the badge follows.
  setUnread(id, unread) {
    const session = this.sessions.find((s) => s.id === id);
    if (!session) {
      if (unread) this.refresh(); // a session this page has not listed yet (a new one per run)
      return;
    }
    if (session.unread === unread) return;
    session.unread = unread;
    this.render();
  }

  isUnread(id) {
    return Boolean(this.sessions.find((s) => s.id === id)?.unread);
  }

  // A session_updated frame: change the entry in place, drop a deleted one, fetch the list for a
  // session this page has not seen yet (created or imported elsewhere).
  apply(frame) {
    const at = this.sessions.findIndex((s) => s.id === frame.session_id);
    if (frame.deleted) {
      if (at < 0) return;
      this.sessions.splice(at, 1);
      this.render();
      return;
    }
    if (at < 0) {
      this.refresh();
      return;
    }
    const session = this.sessions[at];
    const repin = session.pinned !== frame.pinned;
    Object.assign(session, { name: frame.name, profile_id: frame.profile_id, pinned: frame.pinned });
    if (repin) this.refresh(); // its place in the server's order (pinned first) changes
    else this.render();
  }

  // The open conversation on a visible page is being read: no badge there (the page marks it read).
  badged(session) {
    return session.unread && !(session.id === this.currentId && document.visibilityState === "visible");
  }

  render() {
    this.list.replaceChildren(...this.sessions.map((s) => this.item(s)));
    this.select(this.currentId);
  }

  item(session) {
    const title = sessionTitle(session);
    const meta = [this.profileName(session.profile_id), relativeTime(session.last_active)];
    if (session.active) meta.push("● running");
    const action = (label, icon, handler) =>
      el("button", { class: "icon-button", type: "button", title: label, "aria-label": `${label}: ${title}`,
        onclick: (event) => { event.stopPropagation(); handler(session); } }, icon);
    return el("li", { class: "session", dataset: { id: session.id } },
      el("button", { class: "session-open", type: "button", onclick: () => this.onOpen(session.id) },
        el("span", { class: "session-name" }, session.pinned ? el("span", { class: "pinned-mark", title: "Pinned" }, icon("pin", "pinned")) : null,
          this.badged(session) ? el("span", { class: "unread-badge", title: "A scheduled run answered here" }, "New", el("span", { class: "visually-hidden", text: ":" })) : null,
          title),
        el("span", { class: "session-meta", text: meta.join(" · ") })),
      el("span", { class: "session-actions" },
        action(session.pinned ? "Unpin" : "Pin", icon(session.pinned ? "unpin" : "pin"), (s) => this.pin(s)),
        action("Rename", icon("edit"), (s) => this.rename(s)),
        action("Export", icon("download"), (s) => this.export(s)),
        action("Delete", icon("trash"), (s) => this.remove(s))));
  }

  // Run one change, say what went wrong if it failed, and show the list as it is now.
  async change(what, action) {
    try {
      await action();
    } catch (error) {
      toast(`Could not ${what}: ${error.message}`);
    }
    await this.refresh();
  }

  pin(session) {
    return this.change("pin", () => api.pin(session.id, !session.pinned));
  }

  rename(session) {
    const name = window.prompt("Name this conversation (leave empty to let Navi name it):", session.name || "");
    if (name === null) return undefined;
    return this.change("rename", async () => this.onRenamed?.(await api.rename(session.id, name.trim())));
  }

  remove(session) {
    if (!window.confirm(`Delete “${sessionTitle(session)}” and its uploaded files? This cannot be undone.`)) return undefined;
    return this.change("delete", async () => {
      await api.remove(session.id);
      this.onDeleted?.(session.id);
    });
  }

  async export(session) {
    try {
      const response = await api.exportRaw(session.id);
      const safe = sessionTitle(session).replace(/[^\w.-]+/g, "-").slice(0, 60) || "session";
      download(`navi-${safe}-${session.id.slice(0, 8)}.json`, await response.blob());
      toast("Exported.", "info");
    } catch (error) {
      toast(`Could not export: ${error.message}`);
    }
  }
}
