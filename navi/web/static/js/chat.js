// The conversation pane: past messages from the display history, and the live turn built from
// WebSocket frames. Both paths end in the same blocks (thinking, plan, tool cards, text), so a turn
// looks the same while it streams, after a reload mid-run, and when read back later.

import { ToolCard, TextSegment, notice, planCard, statusText, thinkingBlock } from "./blocks.js";
import { answerActions, userActions } from "./branches.js";
import { el, imageSrc } from "./dom.js";
import { icon } from "./icons.js";
import { QuestionCard } from "./elicit.js";
import { Steps } from "./steps.js";

const SPAWN = "spawn_agent";
const REVEAL_MS = 4000; // how long a message opened from a search hit stays marked
// Navi appends uploaded files' paths to the user's text for the model; the page shows them as chips.
const FILES_SUFFIX = /\n\n\[Uploaded files on disk:\n[\s\S]*\]$/;

function compressionNotice(before, after) {
  const detail = before !== undefined ? ` (${before} → ${after} messages)` : "";
  return el("div", { class: "msg" }, notice(`Context compressed${detail}; earlier messages were summarised.`, "compressed"));
}

// An assistant turn: its steps folded into one line (see steps.js), then the answer and notices.
export class Turn {
  // `startedAt`: when the turn began (ms since the epoch), for the time on its steps line.
  constructor({ live = false, startedAt = Date.now() } = {}) {
    this.live = live;
    this.startedAt = startedAt;
    this.node = el("article", { class: "msg turn", "aria-busy": live ? "true" : undefined });
    this.cards = new Map();
    this.spawns = []; // running spawn_agent cards, innermost last
    this.thinking = null;
    this.segment = null;
    this.texts = [];
    this.statusNode = null;
    this.steps = null; // made with the first step
  }

  get text() {
    return this.texts.map((s) => s.text).join("");
  }

  // A notice or other block of the turn itself (not a step).
  add(node) {
    this.clearStatus();
    this.segment = null; // text after any other block starts a new segment
    this.node.append(node);
  }

  // A step: into the steps line, made (at the top of the turn) with the first one. Text written
  // before this step was said on the way, not the answer: it goes into the steps too.
  addStep(node) {
    this.clearStatus();
    if (!this.steps) {
      this.steps = new Steps({ live: this.live });
      this.node.prepend(this.steps.node);
    }
    for (const segment of this.texts) {
      if (segment.node.parentElement === this.node) {
        segment.flush({ final: true });
        segment.node.classList.add("narration");
        this.steps.body.append(segment.node);
      }
    }
    this.segment = null;
    this.steps.add(node);
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

  // The model chain moved on to its next endpoint before the answer began (a `model_fallback` frame).
  fallback({ endpoint, model, reason, next_endpoint: next, next_model: nextModel, cooling }) {
    const why = cooling ? `skipped, ${reason}` : `failed: ${reason}`;
    this.add(notice(`${endpoint} (${model}) ${why} — asking ${next} (${nextModel})`, "info fallback"));
  }

  // Where a subagent's blocks go: inside the running spawn_agent card when there is one.
  place(node, isSubagent) {
    const parent = isSubagent ? this.spawns[this.spawns.length - 1] : null;
    if (parent) {
      parent.nest(node);
      this.steps?.update();
    } else {
      this.addStep(node);
    }
  }

  thinkingDelta(delta) {
    this.clearStatus();
    if (!this.thinking) {
      // A model that does not think may still send blank "thinking": no block (nor "thought for")
      // until something is said.
      this.blankThought = (this.blankThought || "") + delta;
      if (!this.blankThought.trim()) return;
      delta = this.blankThought.trimStart();
      this.blankThought = "";
      this.thinking = thinkingBlock("", { open: true, label: "Thinking…" });
      this.addStep(this.thinking.details);
      this.steps.thought();
    }
    this.steps.doing("thinking…");
    this.thinking.body.append(delta); // a new text node: no copy of what is already there
  }

  thinkingEnd() {
    this.blankThought = "";
    if (!this.thinking) return;
    this.thinking.details.open = false;
    this.thinking.details.querySelector("summary").textContent = "Thought";
    this.thinking = null;
    this.steps?.doing("");
  }

  turnThinking(text, isSubagent) {
    if (!text?.trim()) return;
    const { details } = thinkingBlock(text, { label: isSubagent ? "Subagent thought" : "Thought" });
    this.place(details, isSubagent);
    if (!isSubagent || !this.spawns.length) this.steps.thought();
  }

  plan(text, open = true) {
    this.addStep(planCard(text, open));
    this.steps.plan();
  }

  toolStarted(tool, args, callId, isSubagent) {
    this.thinkingEnd();
    const card = new ToolCard(tool, args, callId, () => this.steps?.update());
    if (callId) this.cards.set(callId, card);
    const nested = isSubagent && this.spawns.length > 0;
    // One level of boxes: the steps line folds the turn; the calls in it show opened.
    if (!nested) card.node.open = true;
    this.place(card.node, isSubagent);
    if (!nested) this.steps.card(card);
    if (tool === SPAWN && !isSubagent) this.spawns.push(card);
    return card;
  }

  // `outcome`: the live frame's success (true/false), or what the stored history says.
  // `browser`: the browser tool's page after the call (a live frame's `browser`), drawn on the card.
  toolCall(tool, args, result, outcome, callId, isSubagent, browser) {
    let card = callId ? this.cards.get(callId) : null;
    if (!card) card = this.toolStarted(tool, args, callId, isSubagent);
    card.complete(args, result, outcome);
    if (browser) card.page(browser);
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

  // elicitation_required: an MCP server asks the user during a call; the question goes on the
  // card of that call (the latest running one of the tool), which opens, as an approval does.
  elicitationRequired(frame, onAnswer) {
    this.clearStatus();
    const running = [...this.cards.values()].filter((c) => c.tool === frame.tool && !c.outcome);
    const card = running[running.length - 1] || this.toolStarted(frame.tool, {}, "", frame.is_subagent);
    const question = new QuestionCard(frame, onAnswer);
    (this.questions ||= new Map()).set(question.id, { question, card });
    card.askFor(question.node);
  }

  elicitationResolved(id, action, by) {
    const asked = this.questions?.get(id);
    if (!asked) return;
    asked.question.answered(action, by);
    asked.card.settled();
  }

  elicitationRefused(id, message) {
    const asked = this.questions?.get(id);
    if (asked) asked.question.refused(message);
    return Boolean(asked);
  }

  textDelta(delta) {
    this.clearStatus();
    this.thinkingEnd();
    if (!this.segment) {
      this.segment = new TextSegment();
      this.texts.push(this.segment);
      this.node.append(this.segment.node);
    }
    this.steps?.doing("writing…");
    this.segment.append(delta);
  }

  // `partial`: an answer left unfinished (stopped, cut off), its Markdown drawn as it stands.
  setText(text, { partial = false } = {}) {
    const segment = new TextSegment(text);
    segment.flush({ final: true, partial });
    this.texts.push(segment);
    this.add(segment.node);
  }

  // The turn is over: every text drawn whole, and the steps line says how long it took (`endedAt`,
  // ms since the epoch, when the history knows; else now, for a turn this page saw start).
  // An unfinished answer (`partial`: stopped, or cut off at its length limit) has its last
  // paragraph's open Markdown closed, as while it streamed: no raw `**` is left.
  finish(content, finishReason, endedAt = null, { partial = finishReason === "length" } = {}) {
    this.clearStatus();
    this.thinkingEnd();
    for (const segment of this.texts) segment.flush({ final: true, partial: partial && segment === this.texts.at(-1) });
    if (content && !this.text) this.setText(content, { partial });
    if (finishReason === "length") this.markCut();
    this.node.removeAttribute("aria-busy");
    const end = endedAt ?? Date.now();
    this.steps?.finish(this.startedAt !== null ? end - this.startedAt : null);
  }

  markCut() {
    this.cutNotice = notice("The reply was cut off at its length limit.", "cut");
    this.add(this.cutNotice);
  }

  // Cut off at the length limit or stopped: a Continue button under the notice runs `onContinue`.
  offerContinue(onContinue) {
    if (!this.cutNotice) return;
    this.continueButton = el("button", { class: "continue", type: "button", onclick: () => onContinue() }, "Continue");
    this.cutNotice.after(this.continueButton);
  }

  dropContinue() {
    this.continueButton?.remove();
    this.continueButton = null;
  }

  // A continuation of this answer starts: the cut-off notice goes, and the text streams on in the
  // answer's last paragraph, in this same bubble.
  resume() {
    this.cutNotice?.remove();
    this.cutNotice = null;
    this.dropContinue();
    this.node.setAttribute("aria-busy", "true");
    const last = this.texts.at(-1);
    this.segment = last && last.node.parentElement === this.node ? last : null;
  }

  stopped() {
    this.finish(null, null, null, { partial: true });
    this.markStopped();
  }

  // The notice a continuation takes away, as the cut-off one.
  markStopped() {
    this.cutNotice = notice("Stopped.", "stopped");
    this.add(this.cutNotice);
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
    this.steps?.finish(null);
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

// The files an answer names (a research report's .md and .pdf), as download links. They are in the
// folder of `files_session_id` (the job's session, for a job's result posted back) or of this one.
function answerFiles(m, sessionId) {
  const files = (m.metadata?.files || []).filter((f) => f?.name);
  const where = m.metadata?.files_session_id || sessionId;
  if (!files.length || !where) return null;
  return el("div", { class: "files answer-files" }, files.map((f) => el(
    "a",
    { class: "chip", href: `/sessions/${encodeURIComponent(where)}/files/${encodeURIComponent(f.name)}`, download: f.name },
    icon("file"),
    f.name,
  )));
}

function storedUserMessage(m, branches = null) {
  const files = m.metadata?.files || [];
  const text = files.length ? (m.content || "").replace(FILES_SUFFIX, "") : m.content || "";
  const node = userMessage(text, m.images || [], files);
  if (m.id) node.dataset.messageId = m.id; // a search hit scrolls to it
  if (branches && m.id) userActions(node, m, text, branches);
  return node;
}

// How a stored tool result ended (its metadata: `status`, and `declined` when a question was answered no).
function storedOutcome(metadata = {}) {
  const status = metadata.status;
  if (status === "ok" || status === undefined) return "ok";
  if (status === "stopped") return "stopped";
  if (metadata.declined === "timeout" || metadata.declined === "unattended") return "timeout";
  if (metadata.declined) return "declined";
  return "failed";
}

export class Conversation {
  // Follows the end of the conversation while the reader is there (new blocks, streamed text, images
  // that finish loading); scrolling up to read stops that until they scroll back down. Following
  // happens at most once per animation frame, however many changes arrive.
  constructor(container, { onRetry = null, onContinue = null, branches = null, sessionId = () => null } = {}) {
    this.container = container;
    this.sessionId = sessionId; // the conversation shown: where the files its answers name are
    this.onRetry = onRetry; // runs the latest failed turn again
    this.onContinue = onContinue; // goes on with the latest answer, cut off at its length limit (its id)
    this.cut = null; // the Turn showing that answer, while it can be continued
    this.branches = branches; // {onEdit, onRegenerate, onSwitch, onFork}: the tree's actions (branches.js)
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

  // A new branch starts at the message `id` (a user message, or any message with its id on a node):
  // what comes after it goes, and it too unless `keep`. Unknown: everything goes (the caller
  // draws the history again at the turn's end).
  cutAfter(id, { keep = true } = {}) {
    const marked = [...this.container.querySelectorAll("[data-message-id]")].find((n) => n.dataset.messageId === id);
    const node = marked?.closest(".msg");
    if (!node || node.parentElement !== this.container) {
      this.clear();
      return;
    }
    while (node.nextSibling) node.nextSibling.remove();
    if (!keep) node.remove();
  }

  // A user message drawn live (sent here, or announced by stream_start): its id and its actions.
  liveActions(node, message) {
    if (!message?.id) return;
    node.dataset.messageId = message.id;
    if (this.branches) userActions(node, { id: message.id }, message.content || "", this.branches);
  }

  // A live turn answered: Regenerate and Fork under it (both name it by its question's id).
  answerActions(turn, answerId = null) {
    if (!this.branches || !turn.userId) return;
    const rated = answerId ? { id: answerId } : null; // the stored answer, to rate it
    answerActions(turn.node, { id: turn.userId }, { id: turn.userId, question: true }, this.branches, rated);
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

  // The latest answer was cut off at its length limit or stopped mid-text: Continue under it goes
  // on with it (`id`, any stored part of the answer).
  offerContinue(turn, id) {
    this.cut?.dropContinue();
    this.cut = null;
    if (!this.onContinue || !id) return;
    turn.offerContinue(() => this.onContinue(id));
    this.cut = turn;
  }

  // A continuation started (stream_start with `continues`): the answer it goes on with, live again
  // (null when this page does not show it).
  continueTurn() {
    const turn = this.cut;
    this.cut = null;
    if (!turn || !turn.node.isConnected) return null;
    turn.resume();
    return turn;
  }

  // `startedAt`: when the turn began, if not now (a turn replayed after a reload began earlier).
  startTurn(startedAt = Date.now()) {
    this.cut?.dropContinue(); // another turn: that answer is no longer the latest
    this.cut = null;
    const turn = new Turn({ live: true, startedAt });
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

  // Scroll the stored message `id` into view and mark it for a moment (a search hit was opened).
  // Returns whether it is shown. Following the end stops, so the view stays on it.
  reveal(id) {
    const node = [...this.container.querySelectorAll("[data-message-id]")].find(
      (n) => n.dataset.messageId === id || (n.dataset.parts || "").split(" ").includes(id),
    );
    if (!node) return false;
    const target = node.getClientRects().length ? node : node.closest(".msg") || node; // folded in the steps: its turn
    cancelAnimationFrame(this.frame);
    this.frame = 0;
    this.stick = false;
    target.scrollIntoView({ block: "center" });
    for (const old of this.container.querySelectorAll(".search-target")) old.classList.remove("search-target");
    target.classList.add("search-target");
    clearTimeout(this.revealTimer);
    this.revealTimer = setTimeout(() => target.classList.remove("search-target"), REVEAL_MS);
    return true;
  }

  // Stored display history → blocks. Assistant messages and tool results between two user messages
  // form one turn; tool results fill the cards of the calls they answer. A turn's time is from its
  // user message to its last message.
  renderHistory(messages) {
    this.clear();
    this.failed = null;
    this.cut = null;
    let turn = null;
    let asked = null; // when the turn's user message was stored
    let last = null; // when its latest message was
    let first = null; // the turn's first and latest stored messages (its answer's place in the tree)
    let latest = null;
    const close = () => {
      if (turn) turn.steps?.finish(asked !== null && last !== null ? last - asked : null);
      if (turn && first?.id && this.branches) {
        const rated = latest?.role === "assistant" ? { id: latest.id, feedback: latest.metadata?.feedback } : null;
        answerActions(turn.node, first, latest, this.branches, rated);
      }
      turn = null;
      first = null;
    };
    const ensureTurn = () => {
      if (!turn) {
        turn = new Turn({ startedAt: asked });
        this.container.append(turn.node);
      }
      return turn;
    };
    for (const m of messages) {
      const at = Date.parse(m.created_at);
      if (m.role === "user") {
        close();
        asked = Number.isFinite(at) ? at : null;
        this.container.append(storedUserMessage(m, this.branches));
        continue;
      }
      if (m.role === "assistant" && m.is_compression) {
        close();
        asked = null;
        this.container.append(compressionNotice(m.metadata?.messages_before, m.metadata?.messages_after));
        continue;
      }
      last = Number.isFinite(at) ? at : last;
      first ||= m;
      latest = m;
      if (m.role === "assistant" && m.is_plan) {
        ensureTurn().plan(m.content || "", false);
      } else if (m.role === "assistant" && m.metadata?.error) {
        // A failed turn's record; only the latest one, at the very end, can be retried.
        const t = ensureTurn();
        this.failTurn(t, m.metadata.error.message || m.content || "the turn failed", m === messages.at(-1));
      } else if (m.role === "assistant") {
        const t = ensureTurn();
        if (m.thinking) t.turnThinking(m.thinking, false);
        const cut = m.metadata?.finish_reason === "length" && !m.tool_calls?.length;
        if (m.content) t.setText(m.content, { partial: cut || m.stopped });
        if (cut) {
          t.markCut(); // a continuation is joined to it already (GET /sessions/{id})
          if (m === messages.at(-1)) this.offerContinue(t, m.id);
        }
        const shown = m.content ? t.texts.at(-1).node : t.node; // where a search hit scrolls to
        if (m.id && !shown.dataset.messageId) shown.dataset.messageId = m.id;
        if (m.metadata?.parts) shown.dataset.parts = m.metadata.parts.join(" "); // a joined answer's stored ids
        for (const call of m.tool_calls || []) t.toolStarted(call.name, call.arguments, call.id, false);
        const files = answerFiles(m, this.sessionId());
        if (files) t.add(files);
        if (m.stopped) {
          t.markStopped();
          // Stopped mid-text, the latest answer goes on from there (Continue), as a cut-off one.
          if (m === messages.at(-1) && m.content && !m.tool_calls?.length) this.offerContinue(t, m.id);
        }
      } else if (m.role === "tool") {
        const page = m.metadata?.page; // a browser call's page, stored without its screenshot
        ensureTurn().toolCall(m.name || "tool", undefined, m.content || "", storedOutcome(m.metadata), m.tool_call_id, false, page);
      }
    }
    close();
    this.scrollToEnd();
  }
}
