// The chat page: wires the sidebar, the conversation, the composer and the session's WebSocket.
// The selected session lives in the URL (#/s/<id>), so a reload comes back to it — mid-run included:
// the history is drawn up to the user's last message and the server replays the running turn.
// Without one (#/) the page is a draft: the session is created when its first message is sent.
// Scheduled runs reach it as `schedule_run` frames on the open socket, or through ScheduleWatch's
// poll while no socket is open; either way they update the badges, the schedules panel and, when
// allowed, show a browser notification.

import { api } from "./api.js";
import { statusText } from "./blocks.js";
import { Conversation } from "./chat.js";
import { Citations } from "./citations.js";
import { Composer } from "./composer.js";
import { DocumentTracker, stateView } from "./docstate.js";
import { addTurn, setMeter, turnsFrom } from "./gauge.js";
import { toast } from "./dom.js";
import { fillIcons } from "./icons.js";
import { KnowledgePanel } from "./knowledge.js";
import { SkillsPanel } from "./skills.js";
import { setAfterRender } from "./markdown.js";
import { JobsPanel } from "./jobs.js";
import { MemoryPanel } from "./memory.js";
import { Notifier } from "./notify.js";
import { ProfilePicker } from "./profile.js";
import { SchedulesPanel } from "./schedules.js";
import { SettingsPanel } from "./settings.js";
import { ConversationOptions } from "./preferences.js";
import { installShortcuts } from "./shortcuts.js";
import { QueueView, steeredMessage } from "./queue.js";
import { StatusLight } from "./status.js";
import { Sidebar, sessionTitle } from "./sidebar.js";
import { importFile } from "./transfer.js";
import { SessionSocket } from "./socket.js";
import { ScheduleWatch } from "./watch.js";
import { VoiceControls } from "./voice.js";

const $ = (id) => document.getElementById(id);

const state = {
  session: null, // the open session (GET /sessions/{id} without its messages)
  socket: null,
  turn: null, // the live Turn while a run streams
  pending: null, // the message sent, until its stream_start (or its error)
  replaying: false, // opened mid-run: the next stream_start is the replay of that run
  unanswered: 0, // opened with history ending in a user's message (this many messages drawn)
  replayFrom: 0, // when that run's message was stored (the replayed turn's start)
  retrying: false, // Retry was pressed: the next stream_start is that retry
  continuing: false, // the turn running is a continuation of a cut-off answer
  opening: 0, // which openSession call is the latest (an older one finishing late must not win)
  reveal: null, // {session, message}: a search hit opened, its message is shown once its session is
  creating: null, // the session being created for a first message or upload
  waiting: null, // the nodes drawn for a message sent, until its turn starts
  queued: null, // a message waiting for Navi to be reachable (a token: Stop or a switch voids it)
  branching: null, // an edit or regenerate frame sent, until its turn starts (or it is refused)
  branchTurn: false, // the live turn runs on a new branch: the history is drawn again at its end
};

const conversation = new Conversation($("messages"), {
  sessionId: () => state.session?.id,
  onRetry: retry,
  onContinue: (id) => sendBranchFrame({ type: "continue", message_id: id }),
  branches: {
    onEdit: editMessage, onRegenerate: regenerate, onSwitch: switchBranch, onFork: forkAt,
    onRate: (messageId, rating) => api.rate(state.session.id, messageId, rating),
  },
});
const light = new StatusLight($("model-status"));

// Citations of the conversation's documents in answers become links (citations.js); documents
// uploaded into it are watched until they are ready, and then can be cited.
const citations = new Citations($("messages"));
setAfterRender((element) => citations.link(element));
const tracker = new DocumentTracker({ onSettled: () => citations.refresh() });

const sidebar = new Sidebar({
  list: $("sessions"),
  search: $("session-search"),
  onOpen: (id) => navigate(id),
  onOpenHit: openHit,
  onDeleted: (id) => { if (state.session?.id === id) navigate(null); },
  onRenamed: (updated) => { if (state.session?.id === updated.id) setHeader({ ...state.session, ...updated }); },
});
sidebar.onArchivedView = (on) => $("show-archived").setAttribute("aria-pressed", String(on));

// Import (a ChatGPT or Claude export, or a Navi archive): the list shows what came in at once.
$("import-button").addEventListener("click", () => $("import-file").click());
$("import-file").addEventListener("change", async (event) => {
  const file = event.target.files?.[0];
  event.target.value = "";
  if (!file) return;
  const done = await importFile(file);
  if (!done) return;
  if (sidebar.archivedView) sidebar.showArchived(false);
  else await sidebar.refresh();
});
$("new-folder").addEventListener("click", () => sidebar.newFolder());
// A conversation dropped on "New folder" goes into the folder it names.
$("new-folder").addEventListener("dragover", (event) => {
  if (!event.dataTransfer?.types.includes("application/x-navi-session")) return;
  event.preventDefault();
  event.dataTransfer.dropEffect = "move";
});
$("new-folder").addEventListener("drop", (event) => {
  const id = event.dataTransfer?.getData("application/x-navi-session");
  if (!id) return;
  event.preventDefault();
  sidebar.newFolder(id);
});
$("show-archived").addEventListener("click", () => sidebar.showArchived(!sidebar.archivedView));

const picker = new ProfilePicker({
  select: $("profile-picker"),
  modelName: $("model-name"),
  currentSession: () => state.session,
  onChanged: (updated) => {
    if (state.session?.id === updated.id) setHeader({ ...state.session, profile_id: updated.profile_id });
    sidebar.refresh();
  },
});

const notifier = new Notifier({ toggle: $("notify-toggle"), note: $("notify-note"), onOpen: (id) => navigate(id) });

const watch = new ScheduleWatch({
  api,
  onEvent: scheduleEvent,
  onSessions: (sessions) => sidebar.setSessions(sessions),
  onSchedules: (schedules) => panel.update(schedules),
});

const panel = new SchedulesPanel({
  dialog: $("schedules"),
  openButton: $("open-schedules"),
  closeButton: $("close-schedules"),
  form: $("schedule-form"),
  currentSession: () => state.session,
  profiles: () => sidebar.profiles,
  onOpenSession: (id) => { closeDrawer(); navigate(id); },
  onStarted: (id) => watch.started(id),
});

new MemoryPanel({
  dialog: $("memory"),
  openButton: $("open-memory"),
  closeButton: $("close-memory"),
  onOpenHit: (hit) => { closeDrawer(); openHit(hit); },
  onOpenSession: (id) => { closeDrawer(); navigate(id); },
  sessionName: (id) => sidebar.sessions.find((s) => s.id === id)?.name,
});

const jobsPanel = new JobsPanel({
  dialog: $("jobs"),
  openButton: $("open-jobs"),
  closeButton: $("close-jobs"),
  onOpenSession: (id) => { closeDrawer(); navigate(id); },
});

// "Background" beside Send: what is typed becomes a job of this conversation (created first when
// it is a draft); the conversation stays free, and the job's result is posted here. "Research"
// beside it starts a research job (docs/jobs.md#research): its report, with its Markdown and PDF
// files, is posted here too.
async function startJob(mode) {
  const text = $("input").value.trim();
  if (!text) {
    toast(mode === "research" ? "Write the question first, then press Research." : "Write the task first, then press Background.", "info");
    return;
  }
  try {
    const sessionId = await ensureSession();
    const job = await api.startJob(text, sessionId, mode);
    composer.clear();
    const what = mode === "research" ? `Research “${job.title}” started: its report` : `Background job “${job.title}” started: its result`;
    toast(`${what} will be posted here.`, "info");
  } catch (error) {
    toast(`Could not start it: ${error.message}`);
  }
}
$("background").addEventListener("click", () => startJob("task"));
$("research").addEventListener("click", () => startJob("research"));

function jobChanged(frame) {
  jobsPanel.changed();
  const ended = ["done", "failed", "stopped"].includes(frame.state);
  // Its result was posted into the open conversation: drawn, unless a turn is being drawn there.
  if (ended && frame.origin_session_id && state.session?.id === frame.origin_session_id && !state.turn) {
    redrawHistory(frame.origin_session_id);
  }
}

const settings = new SettingsPanel({
  dialog: $("settings"),
  openButton: $("open-settings"),
  closeButton: $("close-settings"),
  onProfilesChanged: () => loadProfiles().catch(() => {}),
});

const conversationOptions = new ConversationOptions({
  dialog: $("conversation-options"),
  openButton: $("open-conversation-options"),
  closeButton: $("close-conversation-options"),
  currentSession: () => state.session,
  defaultModel: () => picker.profileModel(),
  onSaved: (fields) => { if (state.session) setHeader({ ...state.session, ...fields }); },
});

const composer = new Composer({
  form: $("composer"),
  input: $("input"),
  send: $("send"),
  stop: $("stop"),
  fileInput: $("file-input"),
  attachments: $("attachments"),
  dropZone: document.querySelector(".main"),
  ensureSession,
  onSend: send,
  onStop: stop,
  onQueue: queueMessage,
  tracker,
});
// The microphone, the answer read aloud, hands-free (voice.js).
const voice = new VoiceControls({
  input: $("input"),
  row: document.querySelector("#composer .composer-row"),
  composer,
  conversation: $("messages"),
  socket: () => state.socket,
  ensureSession,
});

new KnowledgePanel({
  dialog: $("knowledge"),
  openButton: $("open-knowledge"),
  closeButton: $("close-knowledge"),
  currentSession: () => state.session,
  ensureSession,
  onChanged: () => citations.refresh(),
});

new SkillsPanel({ dialog: $("skills"), openButton: $("open-skills"), closeButton: $("close-skills") });

// The chips of documents in a message just sent keep showing their state until they are ready.
function watchSentDocuments(node, documents) {
  if (!node || !documents.length) return;
  for (const chip of node.querySelectorAll(".files .chip")) {
    const doc = documents.find((d) => d.name === chip.textContent.trim());
    if (!doc) continue;
    tracker.watch(doc.id, (read) => {
      chip.querySelector(".doc-state")?.remove();
      if (read.state !== "ready") chip.append(stateView(read));
    });
  }
}

// Typed while a turn runs: the server queues it (or hands it to the turn, "steer"); `queued` draws it.
function queueMessage(message, mode) {
  if (!state.socket?.ready) return false;
  state.socket.send({ type: "message", ...message, mode });
  return true;
}

const queueView = new QueueView($("queue"), {
  onEdit: (id, content) => state.socket?.send({ type: "queue_edit", message_id: id, content }),
  onCancel: (id) => state.socket?.send({ type: "queue_cancel", message_id: id }),
});

// ---- header -------------------------------------------------------------------------------------

function setHeader(session) {
  if (session?.id !== state.session?.id) voice.setSession(session?.id);
  state.session = session;
  const title = session ? sessionTitle(session) : "Navi";
  $("session-title").textContent = title;
  $("temporary-badge").hidden = !session?.temporary;
  document.title = session ? `${title} · Navi` : "Navi";
  picker.show(session?.profile_id, session); // a draft shows the profile it will be created with
  conversationOptions.setSession(session);
  document.querySelector(".debug-link").href = session ? `/debug?session=${session.id}` : "/debug";
}

// ---- sessions -----------------------------------------------------------------------------------

function navigate(id) {
  const hash = id ? `#/s/${id}` : "#/";
  if (location.hash !== hash) location.hash = hash;
  else route();
}

// A message found by the search box: open its session (unless it is open) at that message, on the
// branch that holds it.
function openHit(hit) {
  state.reveal = { session: hit.session_id, message: hit.message_id };
  if (state.session?.id === hit.session_id) {
    closeDrawer();
    revealPending();
  } else {
    navigate(hit.session_id);
  }
}

// When the message is not on the branch shown, the branch that holds it becomes the active one (as
// ‹ › does, so a reload keeps it) and the history is drawn again.
async function revealPending() {
  if (!state.reveal || state.reveal.session !== state.session?.id) return;
  const { session, message } = state.reveal;
  state.reveal = null;
  if (conversation.reveal(message)) return;
  if (state.turn || state.replaying) {
    toast("That message is on another version of this conversation: open it again when Navi has answered.", "info");
    return;
  }
  try {
    await api.branch(session, message);
  } catch (error) {
    toast(error.status === 404 ? "That message is not there any more." : `Could not show it: ${error.message}`);
    return;
  }
  await redrawHistory(session);
  if (state.session?.id === session && !conversation.reveal(message)) toast("That message is not shown here any more.", "info");
}

function currentRouteId() {
  const match = location.hash.match(/^#\/s\/([\w-]+)(?:\?m=([\w-]+))?$/);
  if (match?.[2]) { // a notification's link to a message: shown once the conversation is open
    state.reveal = { session: match[1], message: match[2] };
    history.replaceState(null, "", `#/s/${match[1]}`);
  }
  return match ? match[1] : null;
}

async function createSession() {
  const toggle = $("temporary-toggle");
  const created = await api.create(picker.draft || undefined, { temporary: toggle.checked });
  toggle.checked = false; // the next draft is kept unless asked again
  if (!created.temporary) await sidebar.refresh();
  return created.session_id;
}

// A temporary chat is deleted when the page leaves it: another conversation opened, a new one begun,
// the tab closed or reloaded (its id is never in the address, so a reload starts a new draft).
function dropTemporary(session, { closing = false } = {}) {
  if (!session?.temporary) return;
  if (closing) {
    fetch(`/sessions/${session.id}`, { method: "DELETE", credentials: "same-origin", keepalive: true }).catch(() => {});
  } else {
    api.remove(session.id).catch(() => { /* swept by the server once idle */ });
  }
}
window.addEventListener("pagehide", () => dropTemporary(state.session, { closing: true }));

// The open session's id, creating one (once, however many callers ask at the same time) if none is open.
function ensureSession() {
  if (state.session) return Promise.resolve(state.session.id);
  state.creating ??= (async () => {
    const id = await createSession();
    await openSession(id, { fresh: true });
    if (!state.session?.temporary) history.replaceState(null, "", `#/s/${id}`);
    return id;
  })().finally(() => { state.creating = null; });
  return state.creating;
}

function closeSession() {
  state.socket?.close();
  dropTemporary(state.session);
  Object.assign(state, {
    socket: null, pending: null, retrying: false, session: null, waiting: null, unanswered: 0,
  });
  queueView.clear();
  endTurn();
  light.setSocket("none");
  watch.setSocketOpen(false); // the draft view has no socket: scheduled runs are polled for
}

// The open session is on screen: a scheduled run's answer in it counts as read (the badge goes).
function readIfShown() {
  const id = state.session?.id;
  if (!id || document.visibilityState !== "visible") return;
  if (!state.session.unread && !sidebar.isUnread(id)) return;
  state.session.unread = false;
  sidebar.setUnread(id, false);
  api.markRead(id).catch(() => { /* it stays unread on the server; the next open tries again */ });
}

const ENDED = new Set(["ok", "error", "skipped"]);

// A scheduled run started, waits for an approval or ended (a frame, or found by the poll).
function scheduleEvent(event) {
  const shown = event.session_id && state.session?.id === event.session_id;
  if (event.unread && event.session_id) {
    if (shown) state.session.unread = true;
    sidebar.setUnread(event.session_id, true);
  }
  if (shown && ENDED.has(event.status)) readIfShown();
  const seen = shown && document.visibilityState === "visible" && document.hasFocus();
  if (!seen && (ENDED.has(event.status) || event.status === "waiting_approval")) notifier.show(event);
  panel.event(event);
}

async function openSession(id, { fresh = false } = {}) {
  if (state.reveal && state.reveal.session !== id) state.reveal = null; // a hit elsewhere was given up
  if (!fresh) state.queued = null; // another conversation: a message waiting to go out stays in the box
  closeSession();
  if (!fresh) composer.dropUploads(); // uploaded files belong to the session they were sent to
  const ticket = ++state.opening;
  let detail;
  try {
    detail = await api.session(id);
  } catch (error) {
    if (ticket !== state.opening) return;
    toast(error.status === 404 ? "That conversation no longer exists." : `Could not open it: ${error.message}`);
    navigate(null);
    return;
  }
  if (ticket !== state.opening) return; // another session was opened meanwhile
  const { messages, ...session } = detail;
  setHeader(session);
  sidebar.select(id);
  $("empty-state").hidden = true;
  $("messages").hidden = false;
  turnsFrom(messages);
  picker.answeredBy(messages.findLast((m) => m.role === "assistant" && m.metadata?.model)?.metadata.model);
  setMeter(session.context_token_count, session.max_context_tokens, session.compress_at_tokens);
  citations.setSession(id);
  if (session.active) {
    // Draw up to the user's last message; the replay of the running turn draws the rest.
    // (A steering message said during the running turn is part of it: the replay draws it.)
    const last = messages.map((m) => m.role === "user" && !m.metadata?.steered).lastIndexOf(true);
    conversation.renderHistory(last >= 0 ? messages.slice(0, last + 1) : messages);
    state.replaying = true;
    state.replayFrom = last >= 0 ? Date.parse(messages[last].created_at) || Date.now() : Date.now();
    composer.setRunning(true);
  } else {
    conversation.renderHistory(messages);
    // A turn for that message may run and end before the socket below is open: no frame of it
    // would come. The socket's first opening reads the history once more (`resync`).
    state.unanswered = messages.at(-1)?.role === "user" ? messages.length : 0;
  }
  queueView.reading();
  api.queue(id).then((q) => { if (ticket === state.opening) queueView.read(q.messages); }, () => {
    if (ticket === state.opening) queueView.read(null);
  });
  state.socket = new SessionSocket(id, {
    onFrame: (frame) => {
      handleFrame(frame);
      if (!state.pending) clearWaiting(); // its turn has started, or the message was refused
    },
    onOpen: ({ reconnected }) => {
      voice.socketOpened(); // a new connection: told again whether to speak
      resync(id, reconnected);
    },
    onStatus: (status) => {
      light.setSocket(status);
      watch.setSocketOpen(status === "open"); // while it reconnects, the poll keeps watching
    },
    onGone: () => {
      toast("This conversation was deleted.");
      navigate(null);
    },
  });
  watch.setSocketOpen(true); // it carries the user's schedule_run frames
  readIfShown();
  if (!fresh) closeDrawer();
  revealPending();
}

// After (re)connecting, a run we believed was going may have ended unseen: then reload the history.
function resync(id, reconnected) {
  if (state.unanswered) answeredMeanwhile(id, state.unanswered);
  state.unanswered = 0;
  if (!state.replaying && !(reconnected && state.turn)) return;
  setTimeout(async () => {
    if (state.session?.id !== id || (!state.replaying && !state.turn)) return;
    const detail = await api.session(id).catch(() => null);
    if (!detail || detail.active || state.session?.id !== id) return;
    conversation.renderHistory(detail.messages);
    turnsFrom(detail.messages);
    setMeter(detail.context_token_count, detail.max_context_tokens, detail.compress_at_tokens);
    endTurn();
  }, reconnected ? 0 : 1500);
}

// Opened on an unanswered message: a turn that ran whole before the socket opened sent its frames to
// nobody here. Drawn from the history, if it ended (a running one is replayed by the socket).
async function answeredMeanwhile(id, drawn) {
  const detail = await api.session(id).catch(() => null);
  if (!detail || detail.active || state.session?.id !== id || state.turn || state.pending) return;
  if (detail.messages.length === drawn) return;
  conversation.renderHistory(detail.messages);
  turnsFrom(detail.messages);
  setMeter(detail.context_token_count, detail.max_context_tokens, detail.compress_at_tokens);
}

async function route() {
  const id = currentRouteId();
  if (id && id === state.session?.id) return;
  if (id) {
    await openSession(id);
  } else {
    state.opening += 1; // an open still under way is void
    state.queued = null;
    closeSession();
    citations.setSession(null);
    setHeader(null);
    setMeter(0, 0);
    conversation.clear();
    $("messages").hidden = true;
    $("empty-state").hidden = false;
    sidebar.select(null);
  }
}

// ---- sending and stopping -----------------------------------------------------------------------

// Send is answered at once: the message and a waiting line are drawn until the turn's first frame.
function showWaiting(message) {
  if (state.waiting?.[0].isConnected) return;
  $("empty-state").hidden = true;
  $("messages").hidden = false;
  state.waiting = conversation.addPending(message);
}

function clearWaiting() {
  if (!state.waiting) return;
  for (const node of state.waiting) node.remove();
  state.waiting = null;
  if (!state.session) { // still a draft: its session could not be created
    $("messages").hidden = true;
    $("empty-state").hidden = false;
  }
}

// The waiting line under a message sent says it waits for Navi to be reachable again.
function showQueued() {
  const line = state.waiting?.[1]?.querySelector(".status-line");
  if (!line) return;
  line.textContent = "Navi is not reachable: your message goes out as soon as it is back (Stop takes it back).";
  line.classList.add("queued");
}

function showSending() {
  const line = state.waiting?.[1]?.querySelector(".status-line");
  if (!line) return;
  line.textContent = statusText("starting");
  line.classList.remove("queued");
}

// A message sent while Navi cannot be reached waits, drawn with a line saying so, and goes out once
// it is back — once: it is only ever written to an open socket. Stop takes it back into the box.
async function send(message) {
  const ticket = {};
  state.queued = ticket;
  const voided = () => state.queued !== ticket;
  showWaiting(message);
  composer.setRunning(true); // no second send while the session is being created
  try {
    for (;;) {
      try {
        await ensureSession();
        break;
      } catch (error) {
        if (!error.network || voided()) throw error;
        showQueued();
        await light.whenOnline();
        if (voided()) return;
        showSending();
      }
    }
    if (voided()) return;
    showWaiting(message); // opening the new session cleared the pane
    composer.setRunning(true);
    if (!state.socket.ready) {
      showQueued();
      await state.socket.whenOpen(0);
      if (voided()) return;
      showSending();
    }
    state.queued = null;
    state.pending = message;
    state.socket.send({ type: "message", ...message });
  } catch (error) {
    if (voided()) return;
    Object.assign(state, { queued: null, pending: null });
    clearWaiting();
    composer.setRunning(false);
    toast(error.message);
  }
}

// Run the latest failed turn again; its message is stored already, so it is not sent (or drawn) twice.
function retry() {
  if (!state.socket || state.turn) return;
  try {
    state.socket.send({ type: "retry" });
    state.retrying = true;
    composer.setRunning(true);
  } catch (error) {
    toast(error.message);
  }
}

// A tool call waits for the user: the answer goes on the socket. Every window then gets
// approval_resolved, which takes the buttons away. Returns whether the answer was sent.
function answerApproval(callId, decision) {
  try {
    state.socket.send({ type: "approval", call_id: callId, decision });
    return true;
  } catch (error) {
    toast(error.message);
    return false;
  }
}

// An MCP server's question: the answer goes on the socket; elicitation_resolved settles the card
// in every window (bad_answer: Navi says what is wrong, and the question still waits).
function answerElicitation(id, action, content) {
  try {
    state.socket.send({ type: "elicitation", elicitation_id: id, action, ...(content ? { content } : {}) });
    return true;
  } catch (error) {
    toast(error.message);
    return false;
  }
}

async function stop() {
  if (state.queued) { // not sent yet: take it back (its text is still in the box)
    Object.assign(state, { queued: null, pending: null });
    clearWaiting();
    composer.setRunning(false);
    return;
  }
  if (!state.session) return;
  try {
    await api.stop(state.session.id);
  } catch (error) {
    toast(`Could not stop: ${error.message}`);
  }
}

// ---- frames -------------------------------------------------------------------------------------

function liveTurn() {
  if (!state.turn) state.turn = conversation.startTurn();
  return state.turn;
}

function endTurn() {
  const redraw = state.branchTurn;
  Object.assign(state, {
    turn: null, replaying: false, retrying: false, branching: null, branchTurn: false, continuing: false,
  });
  composer.setRunning(false);
  if (redraw && state.session) redrawHistory(state.session.id); // the new branch's ‹ 2/3 › switchers
}

// ---- branches (branches.js): edit and regenerate on the socket, switch and fork over REST --------

// Resolves to whether the frame went out. Right after the page loads (or while it reconnects) the
// socket may not be open yet: the frame waits for it (at most 8 s) rather than being refused.
async function sendBranchFrame(frame) {
  if (!state.socket || state.turn || state.branching) {
    toast("Wait until Navi has answered.");
    return false;
  }
  const socket = state.socket;
  state.branching = frame;
  composer.setRunning(true);
  try {
    await socket.whenOpen();
    if (state.socket !== socket) return false; // another conversation was opened meanwhile
    socket.send(frame);
  } catch (error) {
    if (state.socket !== socket) return false;
    if (state.branching === frame) state.branching = null;
    composer.setRunning(false);
    toast(error.message);
    return false;
  }
  return true;
}

function editMessage(id, content) {
  return sendBranchFrame({ type: "edit", message_id: id, content });
}

function regenerate(id) {
  return sendBranchFrame({ type: "regenerate", message_id: id });
}

async function switchBranch(id) {
  const sid = state.session?.id;
  if (!sid || state.turn) return;
  try {
    await api.branch(sid, id);
  } catch (error) {
    toast(error.message);
    return;
  }
  await redrawHistory(sid);
}

// `answerTo`: fork after the answer to this user message (a turn drawn live knows only its question).
async function forkAt(id, answerTo = null) {
  const sid = state.session?.id;
  if (!sid) return;
  try {
    if (answerTo) {
      const { messages } = await api.session(sid);
      const at = messages.findIndex((m) => m.id === answerTo);
      const next = messages.findIndex((m, i) => i > at && m.role === "user");
      id = messages.at(next >= 0 ? next - 1 : -1)?.id ?? answerTo;
    }
    const made = await api.fork(sid, id);
    sidebar.refresh();
    navigate(made.session_id);
  } catch (error) {
    toast(error.message);
  }
}

async function redrawHistory(sid) {
  const detail = await api.session(sid).catch(() => null);
  if (!detail || state.session?.id !== sid || state.turn) return;
  conversation.renderHistory(detail.messages);
  turnsFrom(detail.messages);
  setMeter(detail.context_token_count, detail.max_context_tokens, detail.compress_at_tokens);
}

// A turn on a new branch started: what the old branch showed after the branch point goes.
function branchStarted(frame) {
  state.branchTurn = true;
  const sent = state.branching;
  if (frame.retry && frame.message) conversation.cutAfter(frame.message.id, { keep: true });
  else if (sent?.type === "edit") conversation.cutAfter(sent.message_id, { keep: false });
  else if (frame.parent_id === null) conversation.clear();
  else conversation.cutAfter(frame.parent_id, { keep: true });
  return !frame.retry && frame.message ? conversation.addAnnouncedUser(frame.message) : null;
}

// A session was created, renamed (naming after the first answer too), pinned, switched or deleted,
// here or in another window: the list and the header follow.
function sessionUpdated(frame) {
  sidebar.apply(frame);
  if (state.session?.id !== frame.session_id) return;
  if (frame.deleted) return; // the socket closes with 4004, which says so
  setHeader({ ...state.session, name: frame.name, profile_id: frame.profile_id, pinned: frame.pinned });
}

function handleFrame(frame) {
  switch (frame.type) {
    case "stream_start": {
      if (frame.continues) { // the rest of a cut-off answer: into that answer's bubble
        state.turn = conversation.continueTurn() || conversation.startTurn();
        Object.assign(state, { replaying: false, retrying: false, continuing: true });
        composer.setRunning(true);
        conversation.scrollToEnd();
        break;
      }
      if (frame.message) queueView.remove(frame.message.id); // a queued message's turn
      let asked = null; // the user message drawn now
      if (frame.parent_id !== undefined) {
        asked = branchStarted(frame);
      } else if (frame.retry) {
        conversation.retryStarted(); // its message is drawn already, with the error under it
      } else if (state.pending) {
        const { content, images, files } = state.pending;
        asked = conversation.addUser(content, images, files);
        watchSentDocuments(asked, composer.documents());
        state.pending = null;
        composer.clear();
      } else if (!state.replaying && frame.message) {
        asked = conversation.addAnnouncedUser(frame.message); // another window of this session sent it
      }
      if (asked) conversation.liveActions(asked, frame.message);
      if (!state.replaying) voice.turnStarted(frame.run_id); // one opened mid-run: Navi reads it on from its current sentence
      state.turn = conversation.startTurn(state.replaying ? state.replayFrom : Date.now());
      state.turn.userId = frame.message?.id;
      Object.assign(state, { replaying: false, retrying: false });
      composer.setRunning(true);
      conversation.scrollToEnd();
      break;
    }
    case "thinking_delta":
      liveTurn().thinkingDelta(frame.delta);
      break;
    case "thinking_end":
      liveTurn().thinkingEnd();
      break;
    case "turn_thinking":
      liveTurn().turnThinking(frame.thinking, frame.is_subagent);
      break;
    case "plan_ready":
      liveTurn().plan(frame.plan);
      break;
    case "tool_started":
      liveTurn().toolStarted(frame.tool, frame.args, frame.call_id, frame.is_subagent);
      break;
    case "tool_call":
      liveTurn().toolCall(frame.tool, frame.args, frame.result, frame.success, frame.call_id, frame.is_subagent, frame.browser);
      break;
    case "approval_required":
      liveTurn().approvalRequired(frame, answerApproval);
      break;
    case "approval_resolved":
      liveTurn().approvalResolved(frame.call_id, frame.decision, frame.by);
      break;
    case "elicitation_required":
      liveTurn().elicitationRequired(frame, answerElicitation);
      break;
    case "elicitation_resolved":
      liveTurn().elicitationResolved(frame.elicitation_id, frame.action, frame.by);
      break;
    case "stream_delta":
      liveTurn().textDelta(frame.delta);
      break;
    case "stream_end":
      voice.turnEnded();
      liveTurn().finish(frame.content, frame.finish_reason);
      if (!state.continuing) conversation.answerActions(liveTurn(), frame.message_id); // a continued answer has them
      if (frame.finish_reason === "length") conversation.offerContinue(liveTurn(), frame.message_id);
      light.turnAnswered();
      picker.answeredBy(frame.model);
      addTurn(frame.usage);
      setMeter(frame.context_tokens, frame.max_context_tokens, frame.compress_at_tokens);
      endTurn();
      sidebar.refresh(); // its place in the list (last active); a new name comes as session_updated
      break;
    case "stream_stopped":
      voice.turnEnded();
      liveTurn().stopped();
      // A stopped answer is no dead end: Regenerate at once, and Continue when part of it was written.
      if (!state.continuing) conversation.answerActions(liveTurn());
      if (frame.message_id) conversation.offerContinue(liveTurn(), frame.message_id);
      endTurn();
      sidebar.refresh();
      break;
    case "status":
      liveTurn().status(frame.phase, frame.detail);
      break;
    case "notice":
      liveTurn().info(frame.message);
      break;
    case "model_fallback":
      liveTurn().fallback(frame);
      break;
    case "context_compressed":
      conversation.addCompression(frame.messages_before, frame.messages_after);
      break;
    case "profile_switched":
      if (state.session) setHeader({ ...state.session, profile_id: frame.profile_id });
      break;
    case "transcript":
    case "speech":
    case "speech_end":
      voice.frame(frame);
      break;
    case "error":
      if (!voice.error(frame)) handleError(frame);
      break;
    case "session_updated":
      sessionUpdated(frame);
      break;
    case "schedule_run":
      watch.event(frame);
      break;
    case "job":
      jobChanged(frame);
      break;
    case "queued":
      if (frame.session_id !== state.session?.id) break;
      queueView.upsert(frame);
      if (state.pending?.content === frame.content) { // ours, sent as a turn ran unseen: it waits
        state.pending = null;
        composer.clear();
      }
      break;
    case "queue_cancelled":
      if (frame.session_id === state.session?.id) queueView.remove(frame.message_id);
      break;
    case "steered":
      queueView.remove(frame.message_id);
      liveTurn().add(steeredMessage(frame.message)); // where it reached the model
      break;
    default:
      break; // newer server, older page: ignore what we do not know
  }
}

// Errors that end no turn of ours refuse a frame; the composer keeps its text, so nothing is lost.
const REFUSALS = {
  busy: "Navi is still answering in this conversation (perhaps in another window). Your message is kept: send it once the answer is done.",
  nothing_to_retry: "There is nothing to retry: the failed turn was answered or removed.",
  nothing_to_continue: "There is nothing to continue: only the latest answer, cut off at its length limit or stopped, can be.",
};

function handleError(frame) {
  if (frame.code === "not_queued" || frame.code === "queue_full") { // the running turn goes on
    toast(frame.message);
    return;
  }
  if (frame.code === "bad_answer" || frame.code === "elicitation_not_found") { // the turn goes on
    if (!state.turn?.elicitationRefused(frame.elicitation_id, frame.message)) toast(frame.message);
    return;
  }
  if (frame.code === "approval_not_found") { // answered meanwhile (another window, the timeout): no turn ends
    if (state.turn?.isAsking(frame.call_id)) toast(frame.message);
    return;
  }
  if (frame.seq !== undefined && state.continuing) { // the answer stays as it was, Continue after a reload
    conversation.failTurn(liveTurn(), frame.message, false);
    endTurn();
    return;
  }
  if (frame.seq !== undefined && frame.code !== "nothing_to_retry") { // the run failed, and it is stored
    light.turnFailed(frame.code, frame.message);
    conversation.failTurn(liveTurn(), frame.message, true);
    state.pending = null;
    endTurn();
    return;
  }
  if (state.turn && frame.seq !== undefined) state.turn.node.remove(); // the retry's turn: nothing ran
  if (state.pending || state.retrying || state.turn || state.branching) {
    state.pending = null;
    endTurn();
  }
  toast(REFUSALS[frame.code] || frame.message);
}

// ---- layout -------------------------------------------------------------------------------------

function closeDrawer() {
  $("sidebar").classList.remove("open");
}

const PHONE = window.matchMedia("(max-width: 760px)");

function openDrawer() {
  $("sidebar").classList.add("open");
}

$("open-sidebar").addEventListener("click", () => {
  openDrawer();
  $("sessions").querySelector("button")?.focus();
});

function newConversation() {
  navigate(null);
  closeDrawer();
  $("input").focus();
}

installShortcuts({
  dialog: $("shortcuts"),
  openButton: $("open-shortcuts"),
  closeButton: $("close-shortcuts"),
  newConversation,
  search: () => {
    if (PHONE.matches) openDrawer();
    $("session-search").focus();
    $("session-search").select();
  },
  focusInput: () => {
    closeDrawer();
    $("input").focus();
  },
});

// The example prompts of the empty page are sent as they are, as if typed.
for (const example of document.querySelectorAll("#examples .example")) {
  example.addEventListener("click", () => {
    if (composer.running) return;
    $("input").value = example.dataset.prompt;
    $("input").dispatchEvent(new Event("input"));
    composer.submit();
  });
}
// On a phone the list is a drawer over the chat: a tap beside it or Escape closes it. That tap only
// closes it: it does not also press what lies under it (an example prompt, a link).
document.querySelector(".main").addEventListener("click", (event) => {
  if (!$("sidebar").classList.contains("open") || event.target.closest("#open-sidebar")) return;
  closeDrawer();
  event.preventDefault();
  event.stopPropagation();
}, true);
document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape" || !$("sidebar").classList.contains("open")) return;
  event.preventDefault(); // closing the list is all this Escape does (the composer's stop skips it)
  closeDrawer();
}, true);
// A panel opened from the phone's list takes the screen: the list closes under it.
for (const opener of ["open-schedules", "open-memory", "open-knowledge", "open-skills", "open-jobs", "open-settings", "open-shortcuts"]) $(opener).addEventListener("click", closeDrawer);
$("close-sidebar").addEventListener("click", () => {
  closeDrawer();
  $("open-sidebar").focus();
});
// A new conversation is a draft until its first message: nothing is created for an empty one.
$("new-session").addEventListener("submit", (event) => {
  event.preventDefault();
  newConversation();
});
window.addEventListener("hashchange", route);
document.addEventListener("visibilitychange", readIfShown);

async function loadProfiles() {
  const profiles = await api.profiles();
  sidebar.setProfiles(profiles);
  picker.setProfiles(profiles);
  picker.show(state.session?.profile_id || picker.shown, state.session); // the header names the profile and its model again
}

// Navi back after being away (restarted, or not running when the page opened from the installed
// app's shell): its profiles and the list are read again, without a reload.
light.onBack = () => {
  loadProfiles().catch(() => { /* away again: the next return tries again */ });
  sidebar.refresh().catch(() => {});
};

async function start() {
  fillIcons();
  try {
    await loadProfiles();
  } catch (error) {
    toast(`Navi is not answering: ${error.message}`);
  }
  await sidebar.refresh();
  light.start();
  $("composer").hidden = false;
  composer.setRunning(false);
  await route();
  document.body.dataset.ready = "true";
}

start();
// The page as an app: a service worker keeps its shell, so it opens (and says Navi is not
// reachable) when Navi is not running, and Chromium offers to install it.
if ("serviceWorker" in navigator) {
  navigator.serviceWorker.register("/sw.js").catch(() => { /* an old browser or a private window: the page works without */ });
  // A notification clicked (sw.js): open its conversation here, at its message when it names one.
  navigator.serviceWorker.addEventListener("message", (event) => {
    if (event.origin && event.origin !== location.origin) return;
    const data = event.data || {};
    if (data.type !== "navi-open" || typeof data.url !== "string") return;
    const match = data.url.match(/#\/s\/([\w-]+)(?:\?m=([\w-]+))?$/);
    if (!match) return navigate(null);
    if (match[2]) {
      state.reveal = { session: match[1], message: match[2] };
      if (state.session?.id === match[1]) return revealPending();
    }
    navigate(match[1]);
  });
}
