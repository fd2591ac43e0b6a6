// Background jobs (docs/jobs.md): the Jobs panel lists the user's jobs (GET /jobs) with their state,
// steps out of their budget, and latest step; a running or waiting one can be stopped (POST
// /jobs/{id}/stop), and each opens its own session (what it did, step by step). A research job also
// shows what it does between steps (phase `researching`: "notes on [2] …"), its sub-questions once
// planned, and how many sources it has read. `job` frames on the socket keep an open panel current.
// Titles, errors and sub-questions are the user's or the model's text: only ever set as text nodes.

import { api } from "./api.js";
import { el } from "./dom.js";

const STATES = { queued: "waiting", running: "running", done: "done", failed: "failed", stopped: "stopped" };

export class JobsPanel {
  constructor({ dialog, openButton, closeButton, onOpenSession }) {
    this.dialog = dialog;
    this.list = dialog.querySelector("#job-list");
    this.empty = dialog.querySelector("#job-empty");
    this.status = dialog.querySelector("#jobs-status");
    this.onOpenSession = onOpenSession;
    openButton.addEventListener("click", () => this.open());
    closeButton.addEventListener("click", () => this.dialog.close());
  }

  open() {
    if (!this.dialog.open) this.dialog.showModal();
    this.load();
  }

  // A `job` frame: the panel drawn again when it is open.
  changed() {
    if (this.dialog.open) this.load();
  }

  async load() {
    // Frames can come faster than the list answers: only the latest request's answer is drawn, so
    // an older list never replaces a newer one.
    const asked = (this.asked = (this.asked || 0) + 1);
    let jobs;
    try {
      jobs = await api.jobs();
    } catch (error) {
      if (asked === this.asked) this.say(`Could not list your jobs: ${error.message}`);
      return;
    }
    if (asked !== this.asked) return;
    this.say("");
    this.empty.hidden = jobs.length > 0;
    this.list.replaceChildren(...jobs.map((job) => this.row(job)));
  }

  row(job) {
    const active = job.state === "queued" || job.state === "running";
    const progress = el("progress", { max: job.max_steps, value: Math.min(job.steps, job.max_steps), "aria-label": "Steps" });
    const stop = active && !job.stop_requested
      ? el("button", { type: "button", class: "danger", onclick: () => this.stop(job.id) }, "Stop")
      : null;
    const open = el("button", { type: "button", class: "link", onclick: () => { this.dialog.close(); this.onOpenSession(job.session_id); } }, "Open");
    const research = job.mode === "research";
    const step = job.last_step ? (research && job.state === "running" ? `researching: ${job.last_step}` : `latest step: ${job.last_step}`) : "";
    const detail = job.error || step;
    const plan = research && job.plan?.length
      ? el("ol", { class: "job-plan", "aria-label": "Sub-questions" }, job.plan.map((q) => el("li", { text: q })))
      : null;
    const sources = research && (job.sources || job.state === "done")
      ? el("span", { class: "job-sources", text: job.sources === 1 ? "1 source read" : `${job.sources} sources read` })
      : null;
    return el(
      "li",
      { class: `job ${job.state}${research ? " research" : ""}`, dataset: { job: job.id, state: job.state, mode: job.mode || "task" } },
      el(
        "div",
        { class: "job-head" },
        el("strong", { text: job.title }),
        research ? el("span", { class: "job-kind", text: "Research" }) : null,
        el("span", { class: "job-state", text: job.stop_requested && active ? "stopping" : STATES[job.state] }),
      ),
      el("div", { class: "job-progress" }, progress, el("span", { class: "job-steps", text: `${job.steps}/${job.max_steps} steps` }), sources),
      detail ? el("p", { class: "job-detail", text: detail }) : null,
      plan,
      el("div", { class: "job-actions" }, open, stop),
    );
  }

  async stop(id) {
    try {
      await api.stopJob(id);
    } catch (error) {
      this.say(`Could not stop it: ${error.message}`);
    }
    this.load();
  }

  say(message) {
    this.status.textContent = message;
    this.status.hidden = !message;
  }
}
