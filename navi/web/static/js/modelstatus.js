// The status light for the default profile's model server (GET /models/status): green when the
// model is ready, amber when the server answers but lacks the model, red when it cannot be reached.
// Asked on load, every 30 s and after the WebSocket comes back; a click shows the whole detail.

import { api } from "/static/js/api.js";
import { toast } from "/static/js/dom.js";

const POLL_MS = 30_000;

// Where each backend's server is set, for the red light's hint.
const SETTING = { ollama: "OLLAMA_HOST", openai: "OPENAI_BASE_URL", anthropic: "ANTHROPIC_API_KEY" };

function describe(status) {
  if (!status.reachable) {
    const setting = SETTING[status.backend];
    return { state: "unreachable", label: `Model server unreachable${setting ? ` — check ${setting}` : ""}` };
  }
  if (status.model_available === false) return { state: "missing", label: `Model not found: ${status.model}` };
  if (status.model_available === null) return { state: "ready", label: "Model server ready" };
  return { state: "ready", label: "Model ready" };
}

export class ModelStatus {
  constructor(button) {
    this.button = button;
    this.label = button.querySelector(".label");
    this.detail = "";
    this.timer = 0;
    this.asking = null;
    button.addEventListener("click", () => {
      if (this.detail) toast(this.detail, this.button.dataset.state === "ready" ? "info" : "error");
    });
  }

  start() {
    this.refresh();
    this.timer = setInterval(() => this.refresh(), POLL_MS);
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
      this.show("unknown", "Model status unknown", `Could not ask Navi about the model server: ${error.message}`);
      return;
    }
    const { state, label } = describe(status);
    this.show(state, label, status.detail);
  }

  show(state, label, detail) {
    this.detail = detail;
    this.button.dataset.state = state;
    this.label.textContent = label;
    this.button.title = detail;
    this.button.hidden = false;
  }
}
