// The conversation pane: past messages from the display history, and the live turn built from
// WebSocket frames. Both paths end in the same blocks (thinking, plan, tool cards, text), so a turn
// looks the same while it streams, after a reload mid-run, and when read back later.

import { el, formatJson, imageSrc } from "/static/js/dom.js";
import { icon } from "/static/js/icons.js";
import { fillMarkdown } from "/static/js/markdown.js";

const SPAWN = "spawn_agent";
// Navi appends uploaded files' paths to the user's text for the model; the page shows them as chips.
const FILES_SUFFIX = /\n\n\[Uploaded files on disk:\n[\s\S]*\]$/;

function thinkingBlock(text, { open = false, label = "Thought" } = {}) {
  const body = el("div", { class: "thinking-text" }, text || "");
  const details = el("details", { class: "thinking", open }, el("summary", { text: label }), body);
  return { details, body };
}

function planCard(text, open) {
  const body = el("div", { class: "markdown" });
  fillMarkdown(body, text);
  return el("details", { class: "plan", open }, el("summary", {}, icon("plan"), " Plan"), body);
}

function notice(text, kind) {
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
};

function statusText(phase, detail) {
  const label = STATUS_LABELS[phase] || "Working";
  return detail ? `${label}: ${detail}…` : `${label}…`;
}

function compressionNotice(before, after) {
  const detail = before !== undefined ? ` (${before} → ${after} messages)` : "";
  return el("div", { class: "msg" }, notice(`Context compressed${detail}; earlier messages were summarised.`, "compressed"));
}

// One tool call. Pending until its result; subagent calls of a spawn_agent nest in `.subcalls`.
class ToolCard {
  constructor(tool, args, callId) {
    this.callId = callId || "";
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
  // The card opens (and any subagent card around it), so what is asked is in view with its arguments.
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
    for (let card = this.node; card; card = card.parentElement?.closest("details.tool")) card.open = true;
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
    this.status.textContent = decision === "deny" ? "not run" : "running";
  }

  get asking() {
    return this.node.classList.contains("asking");
  }

  complete(args, result, success) {
    if (args !== undefined) this.args.textContent = formatJson(args);
    this.result.textContent = result ?? "";
    this.result.hidden = false;
    this.resultLabel.hidden = false;
    this.node.classList.remove("pending");
    this.node.classList.add(success ? "ok" : "failed");
    this.status.textContent = success ? "done" : "failed";
  }
}

// A streamed text segment, re-rendered at most once per animation frame.
class TextSegment {
  constructor(text = "") {
    this.text = text;
    this.node = el("div", { class: "markdown text" });
    this.rendered = null; // the text the node shows
    this.frame = 0;
  }

  append(delta) {
    this.text += delta;
    this.frame ||= requestAnimationFrame(() => this.flush());
  }

  flush() {
    cancelAnimationFrame(this.frame);
    this.frame = 0;
    if (this.rendered === this.text) return;
    this.rendered = this.text;
    fillMarkdown(this.node, this.text);
  }
}

// An assistant turn: an ordered list of blocks.
export class Turn {
  constructor({ live = false } = {}) {
    this.node = el("article", { class: "msg turn", "aria-busy": live ? "true" : undefined });
    this.cards = new Map();
    this.spawns = []; // running spawn_agent cards, innermost last
    this.thinking = null;
    this.segment = null;
    this.texts = [];
    this.statusNode = null;
  }

  get text() {
    return this.texts.map((s) => s.text).join("");
  }

  add(node) {
    this.clearStatus();
    this.segment = null; // text after any other block starts a new segment
    this.node.append(node);
  }

  status(phase, detail) {
    if (!this.statusNode) this.statusNode = el("div", { class: "status-line", role: "status" });
    this.statusNode.textContent = statusText(phase, detail);
    this.node.append(this.statusNode); // always the last line of the turn
  }

  clearStatus() {
    this.statusNode?.remove();
    this.statusNode = null;
  }

  info(message) {
    this.add(notice(message, "info"));
  }

  // Where a subagent's blocks go: inside the running spawn_agent card when there is one.
  place(node, isSubagent) {
    const parent = isSubagent ? this.spawns[this.spawns.length - 1] : null;
    if (parent) parent.nest(node);
    else this.add(node);
  }

  thinkingDelta(delta) {
    this.clearStatus();
    if (!this.thinking) {
      this.thinking = thinkingBlock("", { open: true, label: "Thinking…" });
      this.add(this.thinking.details);
    }
    this.thinking.body.append(delta); // a new text node: no copy of what is already there
  }

  thinkingEnd() {
    if (!this.thinking) return;
    this.thinking.details.open = false;
    this.thinking.details.querySelector("summary").textContent = "Thought";
    this.thinking = null;
  }

  turnThinking(text, isSubagent) {
    if (!text) return;
    const { details } = thinkingBlock(text, { label: isSubagent ? "Subagent thought" : "Thought" });
    this.place(details, isSubagent);
  }

  plan(text, open = true) {
    this.add(planCard(text, open));
  }

  toolStarted(tool, args, callId, isSubagent) {
    this.thinkingEnd();
    const card = new ToolCard(tool, args, callId);
    if (callId) this.cards.set(callId, card);
    this.place(card.node, isSubagent);
    if (tool === SPAWN && !isSubagent) this.spawns.push(card);
    return card;
  }

  toolCall(tool, args, result, success, callId, isSubagent) {
    let card = callId ? this.cards.get(callId) : null;
    if (!card) card = this.toolStarted(tool, args, callId, isSubagent);
    card.complete(args, result, success);
    const at = this.spawns.indexOf(card);
    if (at >= 0) this.spawns.splice(at, 1);
  }

  // approval_required: the card of the call (made here if its tool_started was missed) asks.
  approvalRequired({ call_id: callId, tool, args, reason, always_scope: alwaysScope, is_subagent: isSubagent }, onAnswer) {
    this.clearStatus();
    const card = this.cards.get(callId) || this.toolStarted(tool, args, callId, isSubagent);
    card.ask(reason, alwaysScope, onAnswer);
  }

  approvalResolved(callId, decision, by) {
    this.cards.get(callId)?.answered(decision, by);
  }

  isAsking(callId) {
    return Boolean(this.cards.get(callId)?.asking);
  }

  textDelta(delta) {
    this.clearStatus();
    this.thinkingEnd();
    if (!this.segment) {
      this.segment = new TextSegment();
      this.texts.push(this.segment);
      this.node.append(this.segment.node);
    }
    this.segment.append(delta);
  }

  setText(text) {
    const segment = new TextSegment(text);
    segment.flush();
    this.texts.push(segment);
    this.add(segment.node);
  }

  finish(content, finishReason) {
    this.clearStatus();
    this.thinkingEnd();
    for (const segment of this.texts) segment.flush();
    if (content && !this.text) this.setText(content);
    if (finishReason === "length") this.add(notice("The reply was cut off at its length limit.", "cut"));
    this.node.removeAttribute("aria-busy");
  }

  stopped() {
    this.finish();
    this.markStopped();
  }

  markStopped() {
    this.add(notice("Stopped.", "stopped"));
  }

  // The turn failed. `onRetry` (when given) adds a Retry button that runs the turn again; the
  // button goes once the retry starts (`retrying()`), the error stays as the history shows it.
  error(message, onRetry = null) {
    this.clearStatus();
    this.thinkingEnd();
    const node = notice(`Error: ${message}`, "error");
    if (onRetry) {
      this.retryButton = el("button", { class: "retry", type: "button", onclick: () => onRetry() }, "Retry");
      node.append(" ", this.retryButton);
    }
    this.add(node);
    this.node.removeAttribute("aria-busy");
  }

  retrying() {
    this.retryButton?.remove();
    this.retryButton = null;
  }
}

function userMessage(content, images = [], files = []) {
  const node = el("article", { class: "msg user" }, el("div", { class: "bubble" }, content));
  if (images.length) {
    node.append(el("div", { class: "images" },
      images.map((data, i) => el("img", { src: imageSrc(data), alt: `Attached image ${i + 1}` }))));
  }
  if (files.length) {
    node.append(el("div", { class: "files" }, files.map((f) => el("span", { class: "chip" }, icon("file"), f.name))));
  }
  return node;
}

// The message another window sent, as its stream_start tells it: file names and a count of images.
function announcedUserMessage({ content = "", files = [], images = 0 }) {
  const node = userMessage(content, [], files.map((name) => ({ name })));
  if (images) node.append(el("div", { class: "files" }, el("span", { class: "chip" }, images === 1 ? "1 image" : `${images} images`)));
  return node;
}

function storedUserMessage(m) {
  const files = m.metadata?.files || [];
  const text = files.length ? (m.content || "").replace(FILES_SUFFIX, "") : m.content || "";
  return userMessage(text, m.images || [], files);
}

export class Conversation {
  // Follows the end of the conversation while the reader is there (new blocks, streamed text, images
  // that finish loading); scrolling up to read stops that until they scroll back down. Following
  // happens at most once per animation frame, however many changes arrive.
  constructor(container, { onRetry = null } = {}) {
    this.container = container;
    this.onRetry = onRetry; // runs the latest failed turn again
    this.failed = null; // the Turn showing the latest failed turn's error, while it can be retried
    this.stick = true;
    this.frame = 0;
    container.addEventListener("scroll", () => { this.stick = this.nearBottom(); });
    container.addEventListener("load", () => this.follow(), true); // images, once they have a size
    new MutationObserver(() => this.follow()).observe(container, { childList: true, subtree: true });
  }

  clear() {
    this.container.replaceChildren();
  }

  nearBottom() {
    const c = this.container;
    return c.scrollHeight - c.scrollTop - c.clientHeight < 120;
  }

  follow() {
    this.frame ||= requestAnimationFrame(() => {
      this.frame = 0;
      if (this.stick) this.container.scrollTop = this.container.scrollHeight;
    });
  }

  // Back to the end, and keep following.
  scrollToEnd() {
    this.stick = true;
    this.follow();
  }

  append(node, before = null) {
    if (before) this.container.insertBefore(node, before);
    else this.container.append(node);
    return node;
  }

  addUser(content, images, files) {
    return this.append(userMessage(content, images, files));
  }

  addAnnouncedUser(message) {
    return this.append(announcedUserMessage(message));
  }

  // A live turn failed: its error, with Retry (the failure is stored, so Retry also works after a reload).
  failTurn(turn, message, retryable) {
    turn.error(message, retryable ? this.onRetry : null);
    this.failed = retryable ? turn : null;
  }

  // A retry started: the failed turn keeps its error, without the button.
  retryStarted() {
    this.failed?.retrying();
    this.failed = null;
  }

  startTurn() {
    const turn = new Turn({ live: true });
    turn.status("starting");
    this.append(turn.node);
    return turn;
  }

  // The message just sent, until its turn starts (stream_start): drawn faint, with the waiting line
  // under it, so Send is answered at once. Returns the nodes, for the caller to remove.
  addPending({ content, images = [], files = [] }) {
    const user = userMessage(content, images, files);
    user.classList.add("pending");
    const waiting = el("div", { class: "msg pending-turn" },
      el("div", { class: "status-line", role: "status", text: statusText("starting") }));
    this.append(user);
    this.append(waiting);
    this.scrollToEnd();
    return [user, waiting];
  }

  addNotice(text, kind) {
    return this.append(el("div", { class: "msg" }, notice(text, kind)));
  }

  addCompression(before, after) {
    return this.append(compressionNotice(before, after));
  }

  // Stored display history → blocks. Assistant messages and tool results between two user messages
  // form one turn; tool results fill the cards of the calls they answer.
  renderHistory(messages) {
    this.clear();
    this.failed = null;
    let turn = null;
    const ensureTurn = () => {
      if (!turn) {
        turn = new Turn();
        this.container.append(turn.node);
      }
      return turn;
    };
    for (const m of messages) {
      if (m.role === "user") {
        turn = null;
        this.container.append(storedUserMessage(m));
      } else if (m.role === "assistant" && m.is_compression) {
        turn = null;
        this.container.append(compressionNotice(m.metadata?.messages_before, m.metadata?.messages_after));
      } else if (m.role === "assistant" && m.is_plan) {
        ensureTurn().plan(m.content || "", false);
      } else if (m.role === "assistant" && m.metadata?.error) {
        // A failed turn's record; only the latest one, at the very end, can be retried.
        const t = ensureTurn();
        this.failTurn(t, m.metadata.error.message || m.content || "the turn failed", m === messages.at(-1));
      } else if (m.role === "assistant") {
        const t = ensureTurn();
        if (m.thinking) t.turnThinking(m.thinking, false);
        if (m.content) t.setText(m.content);
        for (const call of m.tool_calls || []) t.toolStarted(call.name, call.arguments, call.id, false);
        if (m.stopped) t.markStopped();
      } else if (m.role === "tool") {
        const t = ensureTurn();
        const status = m.metadata?.status;
        t.toolCall(m.name || "tool", undefined, m.content || "", status === "ok" || status === undefined, m.tool_call_id);
      }
    }
    this.scrollToEnd();
  }
}
