// The schedules panel: a modal dialog (Escape closes it, focus returns to its opener) listing the
// user's schedules — timing in words and the next run in the schedule's own zone, paused / done,
// the latest run's outcome — with pause/resume, run now, delete and the recent runs (each linked
// to its conversation), and a form that creates one. A refused form (422) says why and keeps
// everything typed.

import { api } from "./api.js";
import { confirmDialog } from "./confirm.js";
import { el } from "./dom.js";
import { plainText } from "./markdown.js";
import { inZone, timingWords } from "./timing.js";

const STATUS = { running: "running", waiting_approval: "waiting for your approval", ok: "ok", error: "failed", skipped: "skipped" };

function runLine(run, timeZone) {
  const what = run.status === "ok" ? plainText(run.preview || "") : run.error; // the answer's start, read as text
  // An answer that could not go where the schedule sends it: why, on its run (not only in the log).
  const undelivered = run.status === "ok" && run.error ? run.error : "";
  return [STATUS[run.status] || run.status, inZone(run.finished_at || run.started_at || run.due_at, timeZone), undelivered, what]
    .filter(Boolean).join(" · ");
}

export class SchedulesPanel {
  constructor({ dialog, openButton, closeButton, form, currentSession, profiles, onOpenSession, onStarted }) {
    this.dialog = dialog;
    this.form = form;
    this.list = dialog.querySelector("#schedule-list");
    this.empty = dialog.querySelector("#schedule-empty");
    this.error = form.querySelector("#schedule-error");
    this.currentSession = currentSession; // () → the open session or null
    this.profiles = profiles; // () → [{id, name}]
    this.onOpenSession = onOpenSession;
    this.onStarted = onStarted; // (schedule id) → this page started a run of it
    this.status = dialog.querySelector("#schedules-status");
    this.schedules = [];
    this.latest = new Map(); // schedule id → its latest run (from GET /schedules/{id} or events)
    this.loadedFor = new Map(); // schedule id → its last_run_at when its runs were last read
    this.expanded = new Set(); // schedules whose runs are shown
    openButton.addEventListener("click", () => this.open());
    closeButton.addEventListener("click", () => this.dialog.close());
    form.addEventListener("submit", (event) => { event.preventDefault(); this.create(); });
    for (const radio of form.querySelectorAll('input[name="kind"]')) radio.addEventListener("change", () => this.showTiming());
  }

  get isOpen() {
    return this.dialog.open;
  }

  open() {
    const session = this.currentSession();
    const select = this.form.querySelector("#schedule-profile");
    const chosen = select.value;
    select.replaceChildren(...this.profiles().map((p) => el("option", { value: p.id, text: p.name })));
    select.value = session?.profile_id || chosen || document.getElementById("profile-picker").value || select.value;
    const here = this.form.querySelector("#schedule-target-here");
    here.disabled = !session;
    here.parentElement.title = session ? "" : "Open a conversation first";
    if (!session && here.checked) this.form.querySelector('input[name="target"][value="new"]').checked = true;
    if (!this.dialog.open) this.dialog.showModal();
    // On a touch screen a focused text box brings up the keyboard over the list: focus the panel's
    // close button there, the prompt elsewhere.
    const touch = window.matchMedia("(hover: none) and (pointer: coarse)").matches;
    (touch ? this.dialog.querySelector("#close-schedules") : this.form.querySelector("#schedule-prompt")).focus();
    this.refresh();
  }

  showTiming() {
    const kind = this.form.querySelector('input[name="kind"]:checked').value;
    for (const part of this.form.querySelectorAll(".timing")) part.hidden = part.dataset.kind !== kind;
  }

  async refresh() {
    try {
      this.update(await api.schedules());
    } catch (error) {
      this.say(`Could not load the schedules: ${error.message}`, "error");
    }
  }

  // The schedules as they are now (from the panel's own request or the page's poll).
  update(schedules) {
    this.schedules = schedules;
    if (!this.isOpen) return;
    this.render();
    for (const s of schedules) {
      const going = ["running", "waiting_approval"].includes(this.latest.get(s.id)?.status);
      const moved = s.last_run_at && this.loadedFor.get(s.id) !== s.last_run_at;
      if (moved || going || (this.expanded.has(s.id) && !this.latest.get(s.id)?.runs)) this.loadRuns(s.id);
    }
  }

  async loadRuns(id) {
    let detail;
    try {
      detail = await api.schedule(id);
    } catch {
      return; // deleted meanwhile: the next list drops it
    }
    this.latest.set(id, { ...(detail.runs[0] || {}), runs: detail.runs });
    this.loadedFor.set(id, detail.last_run_at);
    this.renderItem(id);
  }

  // A schedule_run event: the run's schedule shows its new state.
  event(event) {
    const known = this.latest.get(event.schedule_id);
    this.latest.set(event.schedule_id, { ...(known || {}), id: event.schedule_run_id, status: event.status,
      preview: event.preview, error: event.error, session_id: event.session_id, runs: undefined });
    this.loadedFor.delete(event.schedule_id); // its runs are read again
    if (this.isOpen) this.refresh();
  }

  // A line at the top of the panel (the page's toast would sit under the modal dialog).
  say(message, kind = "info") {
    this.status.textContent = message;
    this.status.className = `panel-status ${kind}`;
    this.status.hidden = !message;
  }

  render() {
    const focused = document.activeElement;
    const place = this.list.contains(focused) ? [focused.closest("li.schedule")?.dataset.id, focused.dataset.action] : null;
    this.empty.hidden = this.schedules.length > 0;
    this.list.replaceChildren(...this.schedules.map((s) => this.item(s)));
    if (place) { // a redraw keeps the keyboard's place (Pause becomes Resume under the focus)
      const row = this.list.querySelector(`li.schedule[data-id="${CSS.escape(place[0] || "")}"]`);
      (row?.querySelector(`[data-action="${place[1]}"]`) || this.dialog.querySelector("#schedule-prompt")).focus();
    }
  }

  renderItem(id) {
    const schedule = this.schedules.find((s) => s.id === id);
    const old = this.list.querySelector(`li[data-id="${CSS.escape(id)}"]`);
    if (!schedule || !old) return;
    const focused = old.contains(document.activeElement) ? document.activeElement.dataset.action : null;
    const fresh = this.item(schedule);
    old.replaceWith(fresh);
    if (focused) fresh.querySelector(`[data-action="${focused}"]`)?.focus(); // a redraw keeps the keyboard's place
  }

  item(s) {
    const title = s.title || s.prompt.slice(0, 60);
    const state = s.done ? "done" : s.paused ? "paused" : "";
    const next = s.next_run_at && !s.paused ? `Next: ${inZone(s.next_run_at, s.timezone)}` : "";
    const latest = this.latest.get(s.id);
    const action = (name, label, handler, extra = {}) =>
      el("button", { type: "button", class: "schedule-action", dataset: { action: name }, "aria-label": `${label}: ${title}`,
        onclick: () => handler(s), ...extra }, label);
    const shown = this.expanded.has(s.id);
    const runs = shown ? this.runsList(s, latest?.runs) : null;
    return el("li", { class: `schedule ${state}`, dataset: { id: s.id } },
      el("div", { class: "schedule-main" },
        el("span", { class: "schedule-title", text: title }),
        state ? el("span", { class: `schedule-state ${state}`, text: state === "done" ? "Done" : "Paused" }) : null),
      el("div", { class: "schedule-when" },
        `${timingWords(s)} · ${s.timezone}`, next ? el("br") : null, next || null),
      s.deliver ? el("div", { class: "schedule-deliver muted", text: `Also sent to ${s.deliver.channel}: ${s.deliver.to}` }) : null,
      latest?.status ? el("div", { class: `schedule-last ${latest.status}`, text: `Last run: ${runLine(latest, s.timezone)}` }) : null,
      el("div", { class: "schedule-actions" },
        s.done ? null : action("pause", s.paused ? "Resume" : "Pause", (x) => this.change(x, x.paused ? "resume" : "pause", () => api.updateSchedule(x.id, { paused: !x.paused }))),
        action("run", "Run now", (x) => this.change(x, "run", async () => {
          await api.runSchedule(x.id);
          this.onStarted(x.id);
          this.say(`“${title}” is running.`);
        })),
        action("runs", shown ? "Hide runs" : "Runs", (x) => this.toggleRuns(x), { "aria-expanded": shown ? "true" : "false" }),
        action("delete", "Delete", (x) => this.remove(x, title))),
      runs);
  }

  runsList(s, runs) {
    if (!runs) return el("p", { class: "schedule-runs muted", text: "Loading…" });
    if (!runs.length) return el("p", { class: "schedule-runs muted", text: "It has not run yet." });
    return el("ul", { class: "schedule-runs", "aria-label": `Recent runs of ${s.title}` },
      ...runs.map((run) => el("li", { class: `run ${run.status}` },
        el("span", { text: runLine(run, s.timezone) }),
        run.session_id ? el("a", { href: `#/s/${run.session_id}`, onclick: (event) => {
          event.preventDefault();
          this.dialog.close();
          this.onOpenSession(run.session_id);
        } }, "Open conversation") : null)));
  }

  toggleRuns(s) {
    if (this.expanded.has(s.id)) this.expanded.delete(s.id);
    else {
      this.expanded.add(s.id);
      this.loadRuns(s.id);
    }
    this.renderItem(s.id);
  }

  async change(s, what, action) {
    try {
      await action();
    } catch (error) {
      this.say(`Could not ${what} it: ${error.message}`, "error");
    }
    await this.refresh();
  }

  async remove(s, title) {
    const ok = await confirmDialog({
      title: "Delete this schedule?",
      message: `“${title}” and its runs will be deleted. The conversations it answered in stay.`,
      confirm: "Delete",
    });
    if (!ok) return;
    await this.change(s, "delete", () => api.deleteSchedule(s.id));
    this.latest.delete(s.id);
    this.dialog.querySelector("#schedule-prompt").focus(); // its row is gone
  }

  // The form as a POST /schedules body, or a sentence saying what is missing.
  body() {
    const value = (id) => this.form.querySelector(`#${id}`).value;
    const prompt = value("schedule-prompt").trim();
    if (!prompt) return { problem: "Write what Navi should do.", field: "schedule-prompt" };
    const body = { prompt, profile_id: value("schedule-profile") || undefined };
    const title = value("schedule-title").trim();
    if (title) body.title = title;
    const session = this.currentSession();
    if (this.form.querySelector('input[name="target"]:checked').value === "here" && session) body.session_id = session.id;
    const deliver = value("schedule-deliver").trim();
    if (deliver) { // CHANNEL:TO, as `navi schedules add --deliver` takes it (a Matrix room id has colons too)
      const colon = deliver.indexOf(":");
      const channel = colon > 0 ? deliver.slice(0, colon).trim().toLowerCase() : "";
      const to = colon > 0 ? deliver.slice(colon + 1).trim() : "";
      if (!channel || !to) return { problem: "Write where to send it as channel:address, such as email:ana@example.org.", field: "schedule-deliver" };
      body.deliver = { channel, to };
    }
    const kind = this.form.querySelector('input[name="kind"]:checked').value;
    if (kind === "at") {
      const moment = new Date(value("schedule-at")); // the browser's local time; sent with its offset
      if (!value("schedule-at") || !Number.isFinite(moment.getTime())) return { problem: "Pick the moment it should run.", field: "schedule-at" };
      body.at = moment.toISOString();
    } else if (kind === "every") {
      const count = Number(value("schedule-every"));
      if (!Number.isInteger(count) || count < 1) return { problem: "Say every how many minutes or hours (a whole number).", field: "schedule-every" };
      body.every_seconds = count * Number(value("schedule-unit"));
    } else {
      body.cron = value("schedule-cron").trim();
      if (!body.cron) return { problem: "Write a cron expression, such as 0 7 * * 1-5.", field: "schedule-cron" };
    }
    return { body, field: kind === "every" ? "schedule-every" : `schedule-${kind}` };
  }

  showError(message, field) {
    this.error.textContent = message;
    this.error.hidden = !message;
    for (const input of this.form.querySelectorAll("[aria-invalid]")) input.removeAttribute("aria-invalid");
    if (message && field) {
      const input = this.form.querySelector(`#${field}`);
      input.setAttribute("aria-invalid", "true");
      input.setAttribute("aria-describedby", "schedule-error");
    }
  }

  async create() {
    const { body, problem, field } = this.body();
    if (problem) {
      this.showError(problem, field);
      this.form.querySelector(`#${field}`).focus();
      return;
    }
    const button = this.form.querySelector("#schedule-create");
    button.disabled = true;
    try {
      const made = await api.createSchedule(body);
      this.showError("");
      this.form.querySelector("#schedule-prompt").value = "";
      this.form.querySelector("#schedule-title").value = "";
      this.form.querySelector("#schedule-deliver").value = "";
      this.say(`Scheduled “${made.title}”.`);
      await this.refresh();
    } catch (error) {
      const bad = error.message.startsWith("deliver") ? "schedule-deliver" : field;
      this.showError(error.message, error.status === 422 ? bad : null); // everything typed stays
    } finally {
      button.disabled = false;
    }
  }
}
