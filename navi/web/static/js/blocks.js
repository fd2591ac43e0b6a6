// The blocks a turn is made of: thinking, the plan, tool cards, streamed text and notices. Model and
// tool output is inserted as text everywhere here, except the Markdown of answers and plans, which
// goes through markdown.js (sanitised).

import { el, formatJson } from "./dom.js";
import { icon } from "./icons.js";
import { fillMarkdown } from "./markdown.js";

export function thinkingBlock(text, { open = false, label = "Thought" } = {}) {
  const body = el("div", { class: "thinking-text" }, text || "");
  const details = el("details", { class: "thinking", open }, el("summary", { text: label }), body);
  return { details, body };
}

export function planCard(text, open) {
  const body = el("div", { class: "markdown" });
  fillMarkdown(body, text);
  return el("details", { class: "plan", open }, el("summary", {}, icon("plan"), " Plan"), body);
}

export function notice(text, kind) {
  return el("div", { class: `notice ${kind}`, role: kind === "error" ? "alert" : undefined }, text);
}

// What Navi is doing while no token flows (status frames); replaced by the next one, gone with the
// first thinking, text or tool block. A turn starts out waiting, before any frame says more.
const STATUS_LABELS = {
  starting: "Waiting for Navi",
  preparing: "Preparing",
  compressing: "Summarising earlier messages",
  planning: "Planning",
  waiting: "Waiting for the model",
  researching: "Researching",
};

export function statusText(phase, detail) {
  const label = STATUS_LABELS[phase] || "Working";
  return detail ? `${label}: ${detail}…` : `${label}…`;
}

// How a call ended. A call the user declined (or nobody answered, or a stop cut) was not run: that
// is the user's choice or a wait, drawn apart from a call that ran and failed.
const OUTCOMES = {
  ok: { status: "done", cls: "ok" },
  failed: { status: "failed", cls: "failed" },
  declined: { status: "declined", cls: "declined" },
  timeout: { status: "not run: nobody answered", cls: "declined" },
  stopped: { status: "not run: stopped", cls: "declined" },
};

const NOT_RUN = new Set(["declined", "timeout", "stopped"]);

// One tool call. Pending until its result; subagent calls of a spawn_agent nest in `.subcalls`.
export class ToolCard {
  constructor(tool, args, callId, onChange = () => {}) {
    this.tool = tool;
    this.callId = callId || "";
    this.onChange = onChange; // the turn's steps line follows the card
    this.outcome = ""; // "" while pending, else a key of OUTCOMES
    this.declinedBy = ""; // "user", "timeout" or "stop" once a question was answered with deny
    this.status = el("span", { class: "status", text: "running" });
    this.args = el("pre", { class: "tool-args" }, formatJson(args ?? {}));
    this.result = el("pre", { class: "tool-result" });
    this.resultLabel = el("div", { class: "tool-label", text: "Result", hidden: true });
    this.result.hidden = true;
    this.subcalls = el("div", { class: "subcalls", hidden: true });
    this.node = el(
      "details",
      { class: "tool pending", dataset: { callId: this.callId, tool } },
      el("summary", {}, icon("tool"), " ", el("strong", { text: tool }), " · ", this.status),
      el("div", { class: "tool-body" },
        el("div", { class: "tool-label", text: "Arguments" }), this.args, this.resultLabel, this.result, this.subcalls),
    );
  }

  nest(node) {
    this.subcalls.hidden = false;
    this.subcalls.append(node);
  }

  // The call waits for the user: the reason, and Allow / Deny (/ Always, when Navi can remember it).
  // The card opens (and every card and steps line around it), so what is asked is in view.
  ask(reason, alwaysScope, onAnswer) {
    this.approval?.remove();
    const choose = (decision) => {
      for (const b of this.approval.querySelectorAll("button")) b.disabled = true;
      this.status.textContent = "answering…";
      if (!onAnswer(this.callId, decision)) { // not sent: let the user try again
        for (const b of this.approval.querySelectorAll("button")) b.disabled = false;
        this.status.textContent = "waiting for approval";
      }
    };
    const button = (label, decision, title) =>
      el("button", { type: "button", class: `approve-${decision}`, title, onclick: () => choose(decision) }, label);
    this.approval = el("div", { class: "approval", role: "group", "aria-label": "Approval" },
      el("p", { class: "approval-reason", text: `Navi asks before running this: ${reason}` }),
      el("div", { class: "approval-actions" },
        button("Allow", "allow", "Run this call"),
        button("Deny", "deny", "Do not run it; Navi is told you declined"),
        alwaysScope ? button("Always", "always", `Run it, and from now on allow ${alwaysScope} without asking`) : null));
    this.node.querySelector(".tool-body").prepend(this.approval);
    this.node.classList.add("asking");
    this.status.textContent = "waiting for approval";
    this.unfolded = []; // what the question opened, folded again once it is answered
    for (let node = this.node; node; node = node.parentElement?.closest("details")) {
      if (!node.open) this.unfolded.push(node);
      node.open = true;
    }
    this.onChange();
  }

  // An MCP server's question (elicit.js) during this call: shown on the card, opened like an approval.
  askFor(node) {
    this.node.querySelector(".tool-body").prepend(node);
    this.node.classList.add("asking");
    this.status.textContent = "waiting for your answer";
    this.unfolded = this.unfolded || [];
    for (let n = this.node; n; n = n.parentElement?.closest("details")) {
      if (!n.open) this.unfolded.push(n);
      n.open = true;
    }
    this.onChange();
  }

  // The server's question is settled: the call runs on.
  settled() {
    this.node.classList.remove("asking");
    for (const node of this.unfolded || []) {
      if (!node.classList.contains("asking") && !node.querySelector(".tool.asking")) node.open = false;
    }
    this.unfolded = [];
    if (!this.outcome) this.status.textContent = "running";
    this.onChange();
  }

  // The question was answered (here, in another window, by the timeout or a stop): the buttons go.
  answered(decision, by) {
    if (!this.approval) return;
    const outcomes = {
      allow: "Allowed.",
      always: "Allowed, and remembered: Navi will not ask again for this.",
      deny: by === "timeout" ? "Not run: nobody answered in time." : by === "stop" ? "Not run: stopped." : "Declined: not run.",
    };
    const outcome = el("p", { class: `approval-outcome ${decision}`, role: "status", text: outcomes[decision] || decision });
    this.approval.querySelector(".approval-actions")?.replaceWith(outcome);
    this.node.classList.remove("asking");
    // Answered, the turn folds again like any other (unless another question in it still waits).
    for (const node of this.unfolded || []) {
      if (!node.classList.contains("asking") && !node.querySelector(".tool.asking")) node.open = false;
    }
    this.unfolded = [];
    if (decision === "deny") this.declinedBy = by || "user";
    this.status.textContent = decision === "deny" ? "not run" : "running";
    this.onChange();
  }

  get asking() {
    return this.node.classList.contains("asking");
  }

  // The browser tool's page after the call: its title and address, and its latest screenshot. The
  // title is the page's own text (textContent, never markup); the picture is a data: URL only.
  page({ url, title, tab, tabs, screenshot }) {
    this.browserView?.remove();
    const shot = typeof screenshot === "string" && screenshot.startsWith("data:image/")
      ? el("img", { class: "browser-shot", src: screenshot, alt: `Screenshot of ${title || url}` })
      : null;
    const where = tabs > 1 ? ` (tab ${tab} of ${tabs})` : "";
    this.browserView = el("figure", { class: "browser-page" }, shot,
      el("figcaption", {}, el("strong", { text: title || "(untitled)" }), ` — ${url}${where}`));
    this.node.querySelector(".tool-body").prepend(this.browserView);
    this.onChange();
  }

  // `outcome`: true/false (a live tool_call's success) or one of OUTCOMES' keys (the stored history).
  complete(args, result, outcome) {
    if (args !== undefined) this.args.textContent = formatJson(args);
    let key = outcome === true ? "ok" : outcome === false ? "failed" : outcome || "failed";
    if (key === "failed" && this.declinedBy) key = { user: "declined", stop: "stopped" }[this.declinedBy] || "timeout";
    // A call that was not run has no result: what Navi told the model instead is shown as that,
    // not as an error.
    const notRun = NOT_RUN.has(key);
    this.result.textContent = notRun ? String(result ?? "").replace(/^Error:\s*/, "") : result ?? "";
    this.resultLabel.textContent = notRun ? "What Navi was told" : "Result";
    this.result.hidden = false;
    this.resultLabel.hidden = false;
    const { status, cls } = OUTCOMES[key] || OUTCOMES.failed;
    this.outcome = key;
    this.node.classList.remove("pending", "ok", "failed", "declined");
    this.node.classList.add(cls);
    this.status.textContent = status;
    this.onChange();
  }
}

// A streamed text segment, re-rendered at most once per animation frame. While it streams, an
// unfinished Markdown construct at its end (an open `**`, `` ` `` or code fence) is closed for the
// drawing only, so the reader never sees raw markers that the next words will complete.
export class TextSegment {
  constructor(text = "") {
    this.text = text;
    this.node = el("div", { class: "markdown text" });
    Object.defineProperty(this.node, "markdown", { get: () => this.text }); // what Copy copies
    this.rendered = null; // the text the node shows
    this.frame = 0;
    this.streaming = false;
  }

  append(delta) {
    this.text += delta;
    this.streaming = true;
    this.frame ||= requestAnimationFrame(() => this.flush());
  }

  // `partial` (with `final`): the text ends where the answer was left unfinished, drawn as while
  // it streamed.
  flush({ final = false, partial = false } = {}) {
    cancelAnimationFrame(this.frame);
    this.frame = 0;
    if (final) this.streaming = false;
    const shown = this.streaming || partial ? closeOpenMarkdown(this.text) : this.text;
    if (this.rendered === shown) return;
    this.rendered = shown;
    fillMarkdown(this.node, shown);
  }
}

// The text as it would read if the model stopped here: an open code fence, inline code span, bold
// or italic marker at the end is closed (or a lone marker still being typed is left out).
export function closeOpenMarkdown(text) {
  const fences = text.match(/^ {0,3}(```|~~~)/gm) || [];
  if (fences.length % 2 === 1) { // inside a code block: close it (a closing fence half typed is left out)
    return `${text.replace(/\n {0,3}(`{1,2}|~{1,2})$/, "")}\n${fences.at(-1).trim()}`;
  }
  if (/(^|\n) {0,3}(```|~~~)\s*$/.test(text)) return text; // it ends with a code block, closed
  // Only the last paragraph can hold an unfinished inline marker.
  const start = text.lastIndexOf("\n\n") + 1;
  let tail = text.slice(start);
  const head = text.slice(0, start);
  tail = tail.replace(/(\*{1,3}|`{1,2})$/, ""); // a marker (or a fence) just begun, nothing after it yet
  const code = (tail.match(/`/g) || []).length;
  if (code % 2 === 1) return `${head}${tail}\``;
  const outside = tail.replace(/`[^`]*`/g, "");
  let closing = "";
  for (const marker of ["**", "__"]) {
    const count = outside.split(marker).length - 1;
    if (count % 2 === 1) closing = marker + closing;
  }
  const singles = outside.replace(/\*\*|__/g, "").replace(/^\s*\*\s/gm, ""); // list bullets are no markers
  const stars = (singles.match(/\*/g) || []).length;
  if (stars % 2 === 1 && /\*\S[^*]*$/.test(singles)) closing = `*${closing}`;
  return `${head}${tail.replace(/\s+$/, "")}${closing}`;
}
