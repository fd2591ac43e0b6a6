// The session list: folders first (each conversation put in one), then pinned, then grouped by when
// each was last active (Today, Yesterday, Previous 7 days, Previous 30 days, then by month), filtered
// by the search box, which also finds messages (search.js: a "Messages" group under the title
// matches). Each row opens its session; its "⋯" button opens a small menu: pin, rename (in place),
// move to a folder, archive, export (Markdown, PDF, the JSON archive), delete (asked first in a
// dialog of the page, never the browser's prompt or confirm). A row can be dragged onto a folder,
// onto "New folder", or back onto the dated list (out of its folder) — with a mouse, or on a touch
// screen by holding it a moment, then moving the finger (touchdrag.js). A folder's "⋯" renames it. "Archived" shows the archived
// conversations instead, to bring them back. Up and Down move between the rows and the hits.

import { api } from "./api.js";
import { askText, confirmDialog } from "./confirm.js";
import { el, relativeTime, toast } from "./dom.js";
import { icon } from "./icons.js";
import { RowMenu } from "./rowmenu.js";
import { MessageSearch } from "./search.js";
import { touchDrag } from "./touchdrag.js";
import { exportSession, FORMATS } from "./transfer.js";

const DRAG_TYPE = "application/x-navi-session";

export function sessionTitle(session) {
  return session?.name || "New conversation";
}

const DAY = 86_400_000;

function startOfDay(time) {
  const date = new Date(time);
  date.setHours(0, 0, 0, 0);
  return date.getTime();
}

// Which group a session last active at `iso` falls in, seen from `now` (the browser's calendar days).
export function dateGroup(iso, now = Date.now()) {
  const then = Date.parse(iso);
  if (!Number.isFinite(then)) return "Older";
  const days = Math.round((startOfDay(now) - startOfDay(then)) / DAY);
  if (days <= 0) return "Today";
  if (days === 1) return "Yesterday";
  if (days <= 7) return "Previous 7 days";
  if (days <= 30) return "Previous 30 days";
  return new Intl.DateTimeFormat(undefined, { month: "long", year: "numeric" }).format(new Date(then));
}

export class Sidebar {
  constructor({ list, search, onOpen, onOpenHit, onDeleted, onRenamed }) {
    this.list = list;
    this.search = search;
    this.onOpen = onOpen;
    this.messages = new MessageSearch({ onChange: () => this.render(), onOpen: (hit) => onOpenHit(hit) });
    this.onDeleted = onDeleted;
    this.onRenamed = onRenamed;
    this.sessions = [];
    // The list can be on its way while frames arrive: a list asked for before a rename or a
    // deletion must not undo it. `frames` counts the frames applied (a list that saw one arrive is
    // asked for again), `gone` keeps the deleted ids (never listed again), `asked` the newest ask.
    this.frames = 0;
    this.gone = new Set();
    this.asked = 0;
    this.profiles = [];
    this.currentId = null;
    this.renaming = null; // the id of the session whose name is being edited
    this.menu = new RowMenu();
    this.archivedView = false; // listing the archived conversations instead
    this.newFolders = new Set(); // folders made here that hold no conversation yet
    this.dragging = null; // the id of the row being dragged
    list.addEventListener("dragover", (event) => this.dragOver(event));
    list.addEventListener("dragleave", (event) => event.target.closest?.("[data-drop]")?.classList.remove("drop-here"));
    list.addEventListener("drop", (event) => this.drop(event));
    touchDrag({
      root: list,
      rows: "li.session",
      targetAt: (x, y) => document.elementFromPoint(x, y)?.closest?.("#sessions [data-drop], #new-folder") || null,
      onDrop: (id, target) => this.dropOn(id, target),
    });
    search.addEventListener("input", () => {
      this.messages.update(search.value);
      this.render();
    });
    search.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && search.value) {
        event.stopPropagation();
        this.clearSearch();
      } else if (event.key === "Enter") {
        this.targets()[0]?.click(); // the first match: a title, else a message
      } else if (event.key === "ArrowDown") {
        event.preventDefault();
        this.targets()[0]?.focus();
      }
    });
    list.addEventListener("keydown", (event) => this.move(event));
  }

  clearSearch() {
    this.search.value = "";
    this.messages.update("");
    this.render();
  }

  // What Up and Down go through: the rows' buttons, then the message hits.
  targets() {
    return [...this.list.querySelectorAll("button.session-open, button.hit-open")];
  }

  move(event) {
    const targets = this.targets();
    const at = targets.indexOf(event.target);
    if (at < 0) return;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const next = at + (event.key === "ArrowDown" ? 1 : -1);
      if (next < 0) this.search.focus();
      else targets[Math.min(next, targets.length - 1)].focus();
    } else if (event.key === "Escape" && this.search.value) {
      event.stopPropagation();
      this.search.focus(); // back to the box; a second Escape clears it
    }
  }

  setProfiles(profiles) {
    this.profiles = profiles;
  }

  profileName(id) {
    return this.profiles.find((p) => p.id === id)?.name || id;
  }

  rows() {
    return [...this.list.querySelectorAll("li.session")];
  }

  select(id) {
    this.currentId = id;
    for (const item of this.rows()) {
      const current = item.dataset.id === id;
      item.classList.toggle("current", current);
      item.querySelector(".session-open")?.setAttribute("aria-current", current ? "page" : "false");
    }
  }

  async refresh() {
    const ask = ++this.asked;
    let sessions;
    for (let attempt = 0; ; attempt++) {
      const frames = this.frames;
      try {
        sessions = await api.sessions(this.archivedView);
      } catch (error) {
        toast(`Could not load the conversations: ${error.message}`);
        return;
      }
      if (ask !== this.asked) return; // a later ask answers
      if (frames === this.frames || attempt >= 2) break;
    }
    this.sessions = this.current(sessions);
    this.render();
  }

  current(sessions) {
    return sessions.filter((s) => !this.gone.has(s.id));
  }

  // GET /sessions answered elsewhere (the schedule watch's poll): redraw only when something changed.
  setSessions(sessions) {
    if (this.archivedView) return; // a poll of the main list: not what is shown
    sessions = this.current(sessions);
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
    this.frames++;
    const at = this.sessions.findIndex((s) => s.id === frame.session_id);
    if (frame.deleted) {
      this.gone.add(frame.session_id);
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
    const moved = session.pinned !== frame.pinned || (frame.archived !== undefined && session.archived !== frame.archived);
    Object.assign(session, { name: frame.name, profile_id: frame.profile_id, pinned: frame.pinned });
    if ("folder" in frame) session.folder = frame.folder;
    if (moved) this.refresh(); // its place in the server's order (pinned first), or its list, changes
    else this.render();
  }

  // The open conversation on a visible page is being read: no badge there (the page marks it read).
  badged(session) {
    return session.unread && !(session.id === this.currentId && document.visibilityState === "visible");
  }

  matches(session) {
    const words = this.search.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
    const text = `${sessionTitle(session)} ${this.profileName(session.profile_id)}`.toLowerCase();
    return words.every((word) => text.includes(word));
  }

  render() {
    if (this.renaming && this.list.querySelector(".rename-input")) return; // not under the user's typing
    const focused = document.activeElement?.closest?.("li.session")?.dataset.id;
    const focusedHit = document.activeElement?.closest?.("li.search-hit")?.dataset.message;
    const shown = this.sessions.filter((s) => this.matches(s));
    const folders = this.archivedView ? [] : this.folderSections(shown);
    const groups = [];
    for (const session of shown.filter((s) => this.archivedView || !s.folder)) {
      const label = session.pinned ? "Pinned" : dateGroup(session.last_active);
      if (groups.at(-1)?.label !== label) groups.push({ label, sessions: [] });
      groups.at(-1).sessions.push(session);
    }
    const dated = groups.map(({ label, sessions }) => {
      const id = `group-${label.replace(/\W+/g, "-").toLowerCase()}`;
      return el("section", { class: "session-group", "aria-labelledby": id },
        el("h2", { class: "group-label", id, text: label }),
        el("ul", { class: "session-rows" }, sessions.map((s) => this.item(s))));
    });
    // Dropped here, a conversation leaves its folder.
    const unfiled = el("div", { class: "unfiled", dataset: { drop: "" } }, dated);
    const sections = this.archivedView ? [this.archivedHead(), ...dated] : [...folders, unfiled];
    const hits = this.messages.section();
    const empty = this.sessions.length && !shown.length && !hits
      ? el("p", { class: "no-match", text: "No conversation matches." }) : null;
    this.list.replaceChildren(...sections, ...(empty ? [empty] : []), ...(hits ? [hits] : []));
    this.select(this.currentId);
    if (focused) this.list.querySelector(`li.session[data-id="${CSS.escape(focused)}"] .session-open`)?.focus();
    if (focusedHit) this.list.querySelector(`li.search-hit[data-message="${CSS.escape(focusedHit)}"] .hit-open`)?.focus();
  }

  // A folder: its name (a drop target) and its conversations, most recently active first. Folders
  // made here that hold nothing yet are shown too, to drop into.
  folderSections(shown) {
    const names = new Set([...this.newFolders, ...this.sessions.map((s) => s.folder).filter(Boolean)]);
    for (const name of names) if (this.sessions.some((s) => s.folder === name)) this.newFolders.delete(name);
    const searching = Boolean(this.search.value.trim());
    return [...names].sort((a, b) => a.localeCompare(b)).flatMap((name) => {
      const inside = shown.filter((s) => s.folder === name);
      if (searching && !inside.length) return [];
      const id = `folder-${[...name].map((c) => c.codePointAt(0).toString(36)).join("-")}`;
      const more = el("button", { class: "icon-button folder-more", type: "button", title: "Folder",
        "aria-label": `More: folder ${name}`, "aria-haspopup": "menu", "aria-expanded": "false",
        onclick: (event) => {
          event.stopPropagation();
          this.menu.open(more, [{ label: "Rename folder", icon: "edit", run: () => this.renameFolder(name) }]);
        } }, icon("more"));
      return [el("section", { class: "session-group folder", "aria-labelledby": id, dataset: { drop: name } },
        el("div", { class: "folder-head" }, el("h2", { class: "group-label folder-label", id }, icon("folder"), name), more),
        inside.length
          ? el("ul", { class: "session-rows" }, inside.map((s) => this.item(s)))
          : el("p", { class: "folder-empty", text: "Drag a conversation here." }))];
    });
  }

  archivedHead() {
    return el("div", { class: "archived-head" },
      el("h2", { class: "group-label", text: "Archived" }),
      el("button", { type: "button", class: "link-button", onclick: () => this.showArchived(false) }, "Back to conversations"),
      this.sessions.length ? null : el("p", { class: "no-match", text: "No archived conversation." }));
  }

  showArchived(on) {
    this.archivedView = on;
    this.onArchivedView?.(on);
    this.clearSearch();
    this.sessions = [];
    this.refresh();
  }

  // "New folder": a name, shown at once as a place to drop conversations into.
  async newFolder(sessionId = null) {
    const name = await askText({ title: "New folder", label: "Its name", confirm: "Create" });
    if (!name) return;
    if (sessionId) await this.fileIn(sessionId, name);
    else {
      this.newFolders.add(name);
      if (this.archivedView) this.showArchived(false);
      else this.render();
    }
  }

  async moveTo(session) {
    const names = [...new Set([...this.newFolders, ...this.sessions.map((s) => s.folder).filter(Boolean)])].sort();
    const name = await askText({ title: "Move to folder", label: `Folder for “${sessionTitle(session)}”`,
      value: session.folder || "", confirm: "Move", options: names });
    if (name && name !== session.folder) await this.fileIn(session.id, name);
  }

  fileIn(id, folder) {
    return this.change("move it", () => api.place(id, { folder }));
  }

  archive(session, archived) {
    return this.change(archived ? "archive it" : "bring it back", async () => {
      await api.place(session.id, { archived });
      toast(archived ? `“${sessionTitle(session)}” is archived: “Archived” shows it.` : `“${sessionTitle(session)}” is back in the list.`, "info");
    });
  }

  dragOver(event) {
    const target = event.target.closest?.("[data-drop]");
    if (!target || !event.dataTransfer?.types.includes(DRAG_TYPE)) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "move";
    for (const other of this.list.querySelectorAll(".drop-here")) if (other !== target) other.classList.remove("drop-here");
    target.classList.add("drop-here");
  }

  drop(event) {
    const target = event.target.closest?.("[data-drop]");
    const id = event.dataTransfer?.getData(DRAG_TYPE);
    if (!target || !id) return;
    event.preventDefault();
    target.classList.remove("drop-here");
    this.dropOn(id, target);
  }

  // A row dropped on a folder, the dated list (out of its folder) or "New folder".
  dropOn(id, target) {
    if (target.id === "new-folder") return this.newFolder(id);
    const folder = target.dataset.drop || null;
    const session = this.sessions.find((s) => s.id === id);
    if (session && (session.folder || null) !== folder) this.fileIn(id, folder);
  }

  // A folder's new name: every conversation in it moves (POST /sessions/folders/rename); a folder
  // made here that holds nothing yet is renamed here.
  async renameFolder(name) {
    const to = await askText({ title: "Rename folder", label: `New name for “${name}”`, value: name, confirm: "Rename" });
    if (!to || to === name) return;
    if (this.newFolders.has(name)) {
      this.newFolders.delete(name);
      this.newFolders.add(to);
      this.render();
      return;
    }
    await this.change("rename the folder", () => api.renameFolder(name, to));
  }

  item(session) {
    const title = sessionTitle(session);
    const meta = [this.profileName(session.profile_id), relativeTime(session.last_active)];
    if (session.active) meta.push("● running");
    const more = el("button", { class: "icon-button row-more", type: "button", title: "More",
      "aria-label": `More: ${title}`, "aria-haspopup": "menu", "aria-expanded": "false",
      onclick: (event) => { event.stopPropagation(); this.openMenu(session, more); } }, icon("more"));
    return el("li", { class: "session", dataset: { id: session.id }, draggable: "true",
      ondragstart: (event) => {
        event.dataTransfer.setData(DRAG_TYPE, session.id);
        event.dataTransfer.effectAllowed = "move";
        this.dragging = session.id;
      },
      ondragend: () => { this.dragging = null; } },
      el("button", { class: "session-open", type: "button", onclick: () => this.onOpen(session.id) },
        el("span", { class: "session-name" }, session.pinned ? el("span", { class: "pinned-mark", title: "Pinned" }, icon("pin", "pinned")) : null,
          this.badged(session) ? el("span", { class: "unread-badge", title: "A scheduled run answered here" }, "New", el("span", { class: "visually-hidden", text: ":" })) : null,
          title),
        el("span", { class: "session-meta", text: meta.join(" · ") })),
      el("span", { class: "session-actions" }, more));
  }

  openMenu(session, button) {
    this.menu.open(button, [
      { label: session.pinned ? "Unpin" : "Pin", icon: session.pinned ? "unpin" : "pin", run: () => this.pin(session) },
      { label: "Rename", icon: "edit", run: () => this.rename(session) },
      { label: "Move to folder…", icon: "folder", run: () => this.moveTo(session) },
      ...(session.folder ? [{ label: "Remove from folder", icon: "folder", run: () => this.fileIn(session.id, null) }] : []),
      session.archived
        ? { label: "Unarchive", icon: "archive", run: () => this.archive(session, false) }
        : { label: "Archive", icon: "archive", run: () => this.archive(session, true) },
      ...FORMATS.map(({ format, label }) => ({ label, icon: "download", run: () => exportSession(session, sessionTitle(session), format) })),
      { label: "Delete", icon: "trash", danger: true, run: () => this.remove(session) },
    ]);
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

  // The name becomes a text box in its row: Enter (or leaving it) saves, Escape keeps the old name.
  // An empty name lets Navi name the conversation again.
  rename(session) {
    const row = this.list.querySelector(`li.session[data-id="${CSS.escape(session.id)}"]`);
    const name = row?.querySelector(".session-name");
    if (!name) return;
    const input = el("input", { class: "rename-input", type: "text", maxlength: "200",
      "aria-label": `New name for ${sessionTitle(session)} (empty: Navi names it)` });
    input.value = session.name || "";
    this.renaming = session.id;
    let done = false;
    const finish = async (save) => {
      if (done) return;
      done = true;
      this.renaming = null;
      const value = input.value.trim();
      const refocus = () => this.list.querySelector(`li.session[data-id="${CSS.escape(session.id)}"] .session-open`)?.focus();
      if (!save || value === (session.name || "")) {
        this.render();
        refocus();
        return;
      }
      await this.change("rename", async () => this.onRenamed?.(await api.rename(session.id, value)));
      refocus();
    };
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        finish(true);
      } else if (event.key === "Escape") {
        event.preventDefault();
        event.stopPropagation(); // not the drawer's or the reply's Escape
        finish(false);
      }
    });
    input.addEventListener("blur", () => finish(true));
    input.addEventListener("click", (event) => event.stopPropagation());
    row.classList.add("renaming");
    row.querySelector(".session-open").replaceWith(el("div", { class: "session-open editing" }, input));
    input.focus();
    input.select();
  }

  async remove(session) {
    const ok = await confirmDialog({
      title: "Delete this conversation?",
      message: `“${sessionTitle(session)}” and its uploaded files will be deleted. This cannot be undone.`,
      confirm: "Delete",
    });
    if (!ok) return;
    await this.change("delete", async () => {
      await api.remove(session.id);
      this.onDeleted?.(session.id);
    });
  }
}
