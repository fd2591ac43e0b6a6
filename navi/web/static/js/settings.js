// The settings panel (a modal dialog): the theme (this browser's), which notifications Navi sends
// and quiet hours (GET/PUT /push/settings, the user's on every device; saved on each change), the
// remembered "Always" answers (GET /approvals/remembered, each forgotten with DELETE: those calls
// ask again), custom instructions and the user's own profiles (preferences.js), the model list
// with each model's state (GET /models, read-only) and signing out
// (POST /logout revokes this browser's sign-in).

import { api } from "./api.js";
import { el, relativeTime } from "./dom.js";
import { BuiltinModels, InstructionsForm, ProfileEditor } from "./preferences.js";

const THEME = "navi.theme";
const KINDS = ["answers", "approvals", "reminders", "jobs", "notes"];

export function applyTheme(theme) {
  if (theme === "light" || theme === "dark") document.documentElement.dataset.theme = theme;
  else delete document.documentElement.dataset.theme;
}

export class SettingsPanel {
  constructor({ dialog, openButton, closeButton, onProfilesChanged }) {
    this.dialog = dialog;
    this.opener = openButton;
    this.list = dialog.querySelector("#remembered-list");
    this.empty = dialog.querySelector("#remembered-empty");
    this.status = dialog.querySelector("#settings-status");
    openButton.addEventListener("click", () => this.open());
    closeButton.addEventListener("click", () => this.dialog.close());
    dialog.addEventListener("close", () => this.opener.focus());
    for (const radio of dialog.querySelectorAll('input[name="theme"]')) {
      radio.addEventListener("change", () => this.setTheme(radio.value));
    }
    dialog.querySelector("#sign-out").addEventListener("click", () => this.signOut());
    this.notify = dialog.querySelector("#notify-settings");
    this.notifyEdits = 0; // changes made here, so a load that answers after one does not undo it
    this.enableNotify(false); // until the person's settings are read: a change would save guesses
    this.notify.addEventListener("change", () => {
      this.notifyEdits += 1;
      this.saveNotify();
    });
    const say = (message, kind) => this.say(message, kind);
    this.instructions = new InstructionsForm({ form: dialog.querySelector("#instructions-form"), say });
    this.profiles = new ProfileEditor({ root: dialog, say, onChanged: onProfilesChanged });
    this.builtinModels = new BuiltinModels({ list: dialog.querySelector("#builtin-models"), say, onChanged: onProfilesChanged });
    this.models = dialog.querySelector("#models-list");
    this.chains = dialog.querySelector("#models-chains");
  }

  async loadModels() {
    let body;
    try {
      body = await api.models();
    } catch (error) {
      this.models.replaceChildren(el("li", { class: "note", text: `Could not load the models: ${error.message}` }));
      return;
    }
    this.models.replaceChildren(...body.models.map((m) => modelItem(m)));
    const chains = Object.entries(body.chains).map(([name, ids]) => `${name}: ${ids.join(" → ")}`);
    if (body.side) chains.push(`side calls: ${body.side} first`);
    this.chains.textContent = body.from_file ? chains.join(" · ") : "One model, from the settings (no MODELS_FILE): no fallback.";
  }

  async loadNotify() {
    const edits = this.notifyEdits;
    let chosen;
    try {
      chosen = await api.notifySettings();
    } catch (error) {
      this.say(`Could not load the notification settings: ${error.message}`, "error");
      return;
    }
    this.enableNotify(true);
    if (edits !== this.notifyEdits) return; // changed (and saved) while they loaded: the person's stand
    const form = this.notify.elements;
    for (const kind of KINDS) form[kind].checked = Boolean(chosen[kind]);
    form.quiet.checked = Boolean(chosen.quiet);
    if (chosen.quiet) {
      form.start.value = chosen.quiet.start;
      form.end.value = chosen.quiet.end;
    }
  }

  enableNotify(on) {
    for (const input of this.notify.elements) input.disabled = !on;
  }

  async saveNotify() {
    const form = this.notify.elements;
    const body = Object.fromEntries(KINDS.map((kind) => [kind, form[kind].checked]));
    body.quiet = form.quiet.checked && form.start.value && form.end.value ? { start: form.start.value, end: form.end.value } : null;
    try {
      await api.saveNotifySettings(body);
      this.say("Notification settings saved.");
    } catch (error) {
      this.say(`Could not save them: ${error.message}`, "error");
    }
  }

  get theme() {
    return localStorage.getItem(THEME) || "system";
  }

  setTheme(theme) {
    if (theme === "system") localStorage.removeItem(THEME);
    else localStorage.setItem(THEME, theme);
    applyTheme(theme);
  }

  open() {
    const chosen = this.dialog.querySelector(`input[name="theme"][value="${this.theme}"]`);
    if (chosen) chosen.checked = true;
    this.say("");
    if (!this.dialog.open) this.dialog.showModal();
    this.dialog.querySelector('input[name="theme"]:checked')?.focus();
    this.load();
  }

  say(message, kind = "info") {
    this.status.textContent = message;
    this.status.className = `panel-status ${kind}`;
    this.status.hidden = !message;
  }

  async load() {
    this.loadNotify();
    this.instructions.load();
    this.profiles.load();
    this.builtinModels.load();
    this.loadModels();
    let remembered;
    try {
      remembered = await api.remembered();
    } catch (error) {
      this.say(`Could not load the remembered answers: ${error.message}`, "error");
      return;
    }
    this.empty.hidden = remembered.length > 0;
    this.list.replaceChildren(...remembered.map((r) => this.item(r)));
  }

  item(r) {
    const what = r.program ? `${r.tool}: ${r.program}` : `${r.tool} (every call)`;
    return el("li", { class: "remembered-item", dataset: { tool: r.tool, program: r.program || "" } },
      el("span", { class: "remembered-what" }, el("code", { text: what }),
        el("span", { class: "note", text: ` · ${relativeTime(r.created_at)}` })),
      el("button", { type: "button", class: "outline small", "aria-label": `Forget: ${what}`,
        onclick: () => this.forget(r, what) }, "Forget"));
  }

  async forget(r, what) {
    try {
      await api.forget(r.tool, r.program);
      this.say(`Forgotten: Navi asks again before ${what}.`);
    } catch (error) {
      this.say(`Could not forget it: ${error.message}`, "error");
    }
    await this.load();
    (this.list.querySelector("button") || this.dialog.querySelector("#sign-out")).focus(); // its row is gone
  }

  async signOut() {
    try {
      await api.logout();
    } catch (error) {
      this.say(`Could not sign out: ${error.message}`, "error");
      return;
    }
    window.location.assign("/login");
  }
}

// One model of the list: what it is, then whether its server answers and has it, and its window.
function modelItem(m) {
  const state = m.state;
  let said = "not checked";
  let kind = "unknown";
  if (state) {
    if (!state.reachable) [said, kind] = ["unreachable", "down"];
    else if (state.model_present === false) [said, kind] = ["model missing", "down"];
    else [said, kind] = ["ready", "up"];
  }
  if (m.cooling) [said, kind] = [`skipped after ${m.cooling.failures} failure(s)`, "down"];
  const facts = [m.backend, m.model];
  const window = m.window || state?.window;
  if (window) facts.push(`${window.toLocaleString()} tokens`);
  if (m.capabilities?.length) facts.push(m.capabilities.join(", "));
  if (m.price) facts.push(`$${m.price[0]}/$${m.price[1]} per Mtok`);
  return el("li", { class: "model-item", dataset: { model: m.id, state: kind } },
    el("strong", { text: m.id }), el("span", { class: "note", text: ` ${facts.join(" · ")}` }),
    el("span", { class: `model-state ${kind}`, text: ` — ${said}`, title: state?.detail || m.cooling?.reason || "" }));
}
