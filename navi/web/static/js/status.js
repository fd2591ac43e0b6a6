// One light in the header for whether a message can be answered now: Navi itself (its WebSocket and
// REST calls), then the default profile's model server (GET /models/status). Navi unreachable wins
// over any model state — a model light cannot be green while Navi is gone. The model's state comes
// from the status route (on load, every 30 s, when Navi is back) and from turns: an answer means
// the model is there, an error of a model code means what it says, so the light never contradicts
// the conversation under it. While Navi is unreachable, /health is asked every few seconds, so the
// page knows it is back even without a socket (the draft view).

import { api, connectivity } from "./api.js";
import { toast } from "./dom.js";

const POLL_MS = 30_000;
const PROBE_MS = 3_000;

// Where each backend's server is set, for the red light's hint.
const SETTING = { ollama: "OLLAMA_HOST", openai: "OPENAI_BASE_URL", anthropic: "ANTHROPIC_API_KEY" };
// Error codes of a turn that say something about the model server.
const MODEL_CODES = { model_unreachable: "unreachable", model_not_found: "missing", model_auth: "unreachable" };

function describe(status) {
  if (!status.reachable) {
    const setting = SETTING[status.backend];
    return { state: "unreachable", label: `Model server unreachable${setting ? ` — check ${setting}` : ""}` };
  }
  if (status.model_available === false) return { state: "missing", label: `Model not found: ${status.model}` };
  if (status.model_available === null) return { state: "ready", label: "Model server ready" };
  return { state: "ready", label: "Model ready" };
}

export class StatusLight {
  constructor(button) {
    this.button = button;
    this.label = button.querySelector(".label");
    this.online = true; // Navi answers (REST and, with a session open, its socket)
    this.socket = "none"; // "none" (draft view), "open" or "reconnecting"
    this.model = { state: "unknown", label: "", detail: "" };
    this.timer = 0;
    this.probe = 0;
    this.asking = null;
    this.waiters = [];
    this.onBack = null; // called when Navi answers again after being away
    button.addEventListener("click", () => {
      const { detail } = this.shown();
      if (detail) toast(detail, this.button.dataset.state === "ready" ? "info" : "error");
    });
    connectivity.addEventListener("offline", () => this.setOnline(false));
    connectivity.addEventListener("online", () => this.setOnline(true));
  }

  start() {
    this.refresh();
    this.timer = setInterval(() => this.refresh(), POLL_MS);
  }

  get reachable() {
    return this.online && this.socket !== "reconnecting";
  }

  // Resolves once Navi answers again (at once when it does).
  whenOnline() {
    if (this.reachable) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  // The open session's WebSocket: "open", "reconnecting", or "none" when no session is open.
  setSocket(state) {
    const was = this.reachable;
    this.socket = state;
    if (state === "open") this.online = true;
    this.changed(was);
  }

  setOnline(online) {
    if (online === this.online) return;
    const was = this.reachable;
    this.online = online;
    this.changed(was);
  }

  changed(was) {
    const now = this.reachable;
    clearTimeout(this.probe);
    if (!now) this.probe = setTimeout(() => this.ping(), PROBE_MS);
    if (now && !was) {
      for (const resolve of this.waiters.splice(0)) resolve();
      this.refresh(); // the model may have changed while Navi was away
      this.onBack?.();
    }
    this.render();
  }

  async ping() {
    try {
      await api.health(); // success reports "online" through `connectivity`
    } catch { /* still away */ }
    if (!this.reachable && this.socket !== "reconnecting") this.probe = setTimeout(() => this.ping(), PROBE_MS);
  }

  // One question at a time; a call while one is under way shares it.
  refresh() {
    this.asking ??= this.ask().finally(() => { this.asking = null; });
    return this.asking;
  }

  async ask() {
    let status;
    try {
      status = await api.modelStatus();
    } catch (error) {
      if (this.online) this.setModel("unknown", "Model status unknown", `Could not ask Navi about the model server: ${error.message}`);
      return;
    }
    const { state, label } = describe(status);
    this.setModel(state, label, status.detail);
  }

  // A turn was answered: the model is there, whatever an older check said.
  turnAnswered() {
    if (this.model.state !== "ready") this.setModel("ready", "Model ready", "The model answered the last message.");
  }

  // A turn failed: a model error changes the light at once (and is checked again soon).
  turnFailed(code, message) {
    const state = MODEL_CODES[code];
    if (!state) return;
    const label = state === "missing" ? "Model not found" : "Model server unreachable";
    this.setModel(state, label, message);
  }

  setModel(state, label, detail) {
    this.model = { state, label, detail: detail || "" };
    this.render();
  }

  shown() {
    if (!this.reachable) {
      return { state: "offline", label: "Navi unreachable — reconnecting…",
        detail: "Navi is not answering (stopped or restarting?). The page reconnects by itself; a message you send now goes out once it is back." };
    }
    return this.model;
  }

  render() {
    const { state, label, detail } = this.shown();
    this.button.dataset.state = state;
    this.label.textContent = label;
    this.button.title = detail;
    this.button.setAttribute("aria-label", label);
    this.button.hidden = !label;
  }
}
