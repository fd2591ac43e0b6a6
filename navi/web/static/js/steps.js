// The steps of a turn — plan, thinking, tool calls, and any text written between them — folded into
// one line above the answer that says what happened and how long it took ("Planned, used todo,
// thought for 3 s"); a click opens them. While the turn runs the line says what Navi is doing now.
// A question waiting for the user's approval opens it, so the buttons are in view.

import { el } from "./dom.js";

const SPAWN = "spawn_agent";

export function duration(ms) {
  const seconds = Math.max(1, Math.round(ms / 1000)); // "0 s" would read as nothing happened
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  return seconds % 60 ? `${minutes} min ${seconds % 60} s` : `${minutes} min`;
}

function list(names) {
  return names.length < 2 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

const unique = (names) => [...new Set(names)];

// What the steps did, in words. `cards` are the turn's top-level tool cards (nested calls of a helper
// are the helper's business); `ms` the turn's time, when known.
export function stepsSummary({ planned, thought, cards, ms = null, activity = "" }) {
  const parts = [];
  if (planned) parts.push("planned");
  const used = unique(cards.filter((c) => c.outcome === "ok" || !c.outcome).map((c) => c.tool));
  const helpers = used.filter((name) => name === SPAWN).length;
  const tools = used.filter((name) => name !== SPAWN);
  if (tools.length) parts.push(`used ${list(tools.length > 4 ? [...tools.slice(0, 3), `${tools.length - 3} more`] : tools)}`);
  if (helpers) parts.push("asked a helper");
  const declined = unique(cards.filter((c) => c.outcome === "declined").map((c) => c.tool));
  if (declined.length) parts.push(`you declined ${list(declined)}`);
  const notRun = cards.filter((c) => c.outcome === "timeout" || c.outcome === "stopped").length;
  if (notRun) parts.push(`${notRun} call${notRun > 1 ? "s" : ""} not run`);
  const failed = cards.filter((c) => c.outcome === "failed").length;
  if (failed) parts.push(`${failed} call${failed > 1 ? "s" : ""} failed`);
  let text;
  if (activity) { // still going: what is done, then what is going on
    text = parts.length ? `${parts.join(", ")} · ${activity}` : activity;
  } else {
    // The time is the turn's: "thought for" only when the model did think, else "worked for".
    if (thought) parts.push(ms !== null ? `thought for ${duration(ms)}` : "thought");
    else if (ms !== null) parts.push(`worked for ${duration(ms)}`);
    text = parts.join(", ") || "Working…";
  }
  return text.charAt(0).toUpperCase() + text.slice(1);
}

export class Steps {
  constructor({ live = false } = {}) {
    this.label = el("span", { class: "steps-label" });
    this.body = el("div", { class: "steps-body" });
    this.node = el("details", { class: "steps", dataset: { live: live ? "true" : "false" } },
      el("summary", {}, el("span", { class: "steps-spinner", "aria-hidden": "true" }), this.label), this.body);
    this.planned = false;
    this.thoughts = 0;
    this.cards = []; // top-level ToolCards, in order
    this.activity = ""; // what is going on now, while the turn runs
    this.ms = null;
    this.update();
  }

  add(node) {
    this.body.append(node);
    this.update();
  }

  plan() {
    this.planned = true;
    this.update();
  }

  thought() {
    this.thoughts += 1;
    this.update();
  }

  card(card) {
    this.cards.push(card);
    this.update();
  }

  doing(activity) {
    this.activity = activity;
    this.update();
  }

  // The turn ended (or was read back): the line says how long it took, when that is known.
  finish(ms) {
    this.activity = "";
    this.ms = Number.isFinite(ms) ? ms : null;
    this.node.dataset.live = "false";
    this.update();
  }

  update() {
    const asking = this.cards.some((c) => c.asking) || this.body.querySelector("details.tool.asking");
    const running = this.cards.find((c) => !c.outcome && !c.asking);
    let activity = this.activity;
    if (this.node.dataset.live === "true") {
      if (asking) activity = this.node.parentElement?.querySelector(".tool.asking .elicitation") ? "waiting for your answer" : "waiting for your approval";
      else if (!activity && running) activity = `running ${running.tool === SPAWN ? "a helper" : running.tool}…`;
    }
    this.label.textContent = stepsSummary({ planned: this.planned, thought: this.thoughts > 0, cards: this.cards, ms: this.ms, activity });
  }
}
