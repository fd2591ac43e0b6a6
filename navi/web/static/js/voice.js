// Voice on the page (docs/voice.md): the microphone button (hold to talk, or tap to start and tap to
// stop; Space held in an empty message box), a live level meter, the transcript put into the box to
// send or edit; a speaker button on every answer; "answer aloud" per conversation, spoken sentence by
// sentence while the answer streams (markdown, code and addresses are not read); and hands-free:
// talk, hear the answer, talk again, where speaking over the answer stops it (barge-in).
//
// A voice turn goes over the conversation's WebSocket (docs/api.md#voice-on-the-socket): the clip as
// a `voice` frame (its `transcript` comes back), and with "answer aloud" or hands-free on, a `speak`
// frame: Navi sends each answer's sentences as `speech` frames while it streams, then `speech_end`;
// talking over the answer sends `speak` again (barge-in). The speaker button under an answer reads a
// finished answer through /v1/audio/speech. Nothing leaves for anywhere but Navi. A browser without
// microphone permission gets a message saying how to allow it.

import { el, toast } from "./dom.js";
import { icon } from "./icons.js";

const HOLD_MS = 350; // pressed longer than this: hold to talk; shorter: a tap that toggles
const SPEECH_LEVEL = 0.04; // RMS above this is someone talking (barge-in, hands-free start)
const BARGE_MS = 250; // …for this long while an answer plays: stop it and listen
const SILENCE_MS = 1200; // hands-free: this much quiet after speech ends the clip
const NO_MIC = "Navi cannot hear you: allow the microphone for this site in the browser's settings (the icon in the address bar), then try again.";
const ABBREVIATIONS = ["e.g.", "i.e.", "etc.", "mr.", "mrs.", "ms.", "dr.", "vs.", "no.", "st."];
const END = /(?<=[.!?…])["')\]]*\s+|\n[ \t]*\n/g;
const VOICE_CODES = new Set(["unsupported_format", "corrupt_audio", "too_large", "too_long", "no_speech", "voice_busy", "voice_unavailable", "voice_server_failed"]);
const NOTHING_HEARD = new Set(["unsupported_format", "corrupt_audio", "too_large", "too_long", "no_speech"]);
const HEAR_MS = 120_000; // a clip's transcript that has not come by then is given up on

// What of an answer is read aloud: the text of the markdown, without code, addresses or marks.
export function speakable(markdown) {
  let text = markdown
    .replace(/^[ \t]*(```|~~~)[\s\S]*?(^[ \t]*\1[^\n]*$|$(?![\s\S]))/gm, "\n\n")
    .replace(/`[^`\n]*`/g, "")
    .replace(/!\[([^\]\n]{0,300})\]\([^)\s]{0,2000}\)/g, "$1") // bounded: hostile text stays linear
    .replace(/\[([^\]\n]{1,300})\]\([^)\s]{0,2000}\)/g, "$1")
    .replace(/\b(?:https?:\/\/|www\.)\S+/gi, "")
    .replace(/<\/?[a-zA-Z][^>\n]{0,200}>/g, "")
    .replace(/^[ \t]{0,3}#{1,6}[ \t]*/gm, "")
    .replace(/^[ \t]*(?:[-*+]|\d+[.)])\s+/gm, "")
    .replace(/^[ \t]*>\s?/gm, "");
  for (let i = 0; i < 2; i++) text = text.replace(/(\*\*|__|\*|_|~~)(?=\S)([^\n]{1,200}?)(?<=\S)\1/g, "$2");
  text = text.replace(/\|/g, ", ").replace(/#/g, "");
  return text.split("\n").map((line) => line.replace(/[ \t]+/g, " ").trim())
    .filter(Boolean).map((line) => (/[.!?…:;,)]$/.test(line) ? line : `${line}.`)).join("\n");
}

function abbreviated(text, end) { // "e.g. this": not the end of a sentence
  const head = text.slice(Math.max(0, end - 8), end).trimEnd().toLowerCase();
  return ABBREVIATIONS.some((a) => head.endsWith(a));
}

function pieces(text) {
  const out = [];
  let start = 0;
  for (const match of text.matchAll(END)) {
    if (abbreviated(text, match.index)) continue;
    const piece = text.slice(start, match.index).trim();
    if (piece) out.push(piece);
    start = match.index + match[0].length;
  }
  const tail = text.slice(start).trim();
  if (tail) out.push(tail);
  return out;
}

// Sentences out of a streaming answer, each as soon as the text after it shows it is complete.
export class Sentences {
  constructor() { this.raw = ""; this.done = 0; }
  feed(delta) { this.raw += delta; return this.take(false); }
  finish() { return this.take(true); }
  take(final) {
    const pending = this.raw.slice(this.done);
    let cut = pending.length;
    if (!final) {
      if ((pending.match(/```/g) || []).length % 2 === 1) return []; // inside a code block
      cut = 0;
      let worded = false;
      let seen = 0;
      for (const match of pending.matchAll(END)) {
        if (abbreviated(pending, match.index)) continue;
        worded ||= /\w/.test(pending.slice(seen, match.index)); // "1." alone waits for its item
        seen = match.index + match[0].length;
        if (worded) { cut = seen; worded = false; }
      }
      if (!cut) return [];
    }
    this.done += cut;
    return pieces(speakable(pending.slice(0, cut)));
  }
}

async function voiceRequest(path, options) {
  const response = await fetch(path, { credentials: "same-origin", ...options });
  if (!response.ok) {
    let message = response.statusText;
    try { message = (await response.json()).error?.message || message; } catch { /* not JSON */ }
    throw Object.assign(new Error(message), { status: response.status });
  }
  return response;
}

function dataUrl(blob) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(blob);
  });
}

function audioBlob(frame) {
  const bytes = Uint8Array.from(atob(frame.audio), (c) => c.charCodeAt(0));
  return new Blob([bytes], { type: frame.format === "opus" ? "audio/ogg" : `audio/${frame.format}` });
}

// Plays sentences in order: the socket's `speech` frames as they come, or (the speaker button) each
// sentence's audio asked of /v1/audio/speech as soon as the sentence is known. `awaiting`: Navi is
// still speaking an answer (its `speech_end` has not come), so the player counts as busy between
// sentences too.
class Player {
  constructor(audio, onIdle) {
    Object.assign(this, { audio, onIdle, queue: [], current: null, awaiting: false, controller: new AbortController() });
    audio.dataset.played = "0";
  }
  get busy() { return this.awaiting || Boolean(this.current) || this.queue.length > 0; }
  play(text, blob) { this.enqueue(text, Promise.resolve(blob)); }
  say(text) {
    const signal = this.controller.signal;
    const audio = voiceRequest("/v1/audio/speech", {
      method: "POST", signal, headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ model: "tts-1", voice: "alloy", input: text, response_format: "mp3" }),
    }).then((r) => r.blob());
    audio.catch(() => {}); // reported when its turn to play comes
    this.enqueue(text, audio);
  }
  enqueue(text, audio) {
    this.queue.push({ text, audio });
    if (!this.current) this.next();
  }
  async next() {
    const job = this.queue.shift();
    if (!job) { this.current = null; if (!this.awaiting) this.onIdle(); return; }
    this.current = job;
    try {
      const blob = await job.audio;
      if (this.current !== job) return; // stopped meanwhile
      const url = URL.createObjectURL(blob);
      this.audio.src = url;
      await new Promise((resolve, reject) => {
        this.audio.onended = resolve;
        this.audio.onerror = () => reject(new Error("the answer's audio does not play"));
        this.audio.onpause = () => { if (this.current !== job) resolve(); };
        this.audio.play().then(() => {
          this.audio.dataset.played = String(Number(this.audio.dataset.played) + 1);
          this.audio.dataset.sentence = job.text;
        }, reject);
      });
      URL.revokeObjectURL(url);
    } catch (error) {
      if (error.name !== "AbortError" && this.current === job) toast(`Could not speak the answer: ${error.message}`);
    }
    if (this.current === job) this.next();
  }
  spoken() { // Navi has nothing more of the answer to send
    this.awaiting = false;
    if (!this.current && !this.queue.length) this.onIdle();
  }
  stop(reason = "stopped") {
    this.controller.abort();
    this.controller = new AbortController();
    this.queue = [];
    this.awaiting = false;
    const was = this.current;
    this.current = null;
    if (was) { this.audio.dataset.stopped = reason; this.audio.pause(); }
  }
}

export class VoiceControls {
  constructor({ input, row, composer, conversation, socket, ensureSession }) {
    Object.assign(this, { input, composer, conversation, socket, ensureSession });
    this.hearing = []; // clips sent on the socket, waiting for their transcript, in order
    this.live = new Set(); // answers Navi may be speaking to this page (run ids)
    this.muted = new Set(); // answers stopped here: their speech still on the way is dropped
    this.session = null;
    this.aloud = false;
    this.handsFree = false;
    this.answering = false;
    this.mic = el("button", { type: "button", id: "mic", class: "icon-button mic", "aria-label": "Talk (hold, or tap to start and stop)", title: "Talk: hold, or tap to start and stop (Space held in an empty box)" }, icon("mic"));
    this.meter = el("span", { id: "mic-level", class: "mic-level", "aria-hidden": "true", dataset: { level: "0" } }, el("span"));
    this.aloudButton = el("button", { type: "button", id: "answer-aloud", class: "toggle", "aria-pressed": "false", title: "Read this conversation's answers aloud", "aria-label": "Answer aloud" }, icon("speaker"));
    this.handsButton = el("button", { type: "button", id: "hands-free", class: "toggle", "aria-pressed": "false", title: "Hands-free: talk, hear the answer, talk again", "aria-label": "Hands-free" }, icon("handsfree"));
    this.status = el("span", { id: "voice-status", class: "voice-status", role: "status", "aria-live": "polite" });
    this.audio = el("audio", { id: "voice-player", hidden: true });
    this.player = new Player(this.audio, () => this.afterSpeaking());
    row.querySelector("#send").before(this.mic, this.meter, this.aloudButton, this.handsButton);
    row.after(this.status);
    row.append(this.audio);
    this.wire();
    this.watchAnswers(conversation);
  }

  wire() {
    this.mic.addEventListener("pointerdown", (event) => {
      event.preventDefault();
      if (this.recorder && this.mode === "tap") { this.finish(); return; }
      if (!this.recorder) { this.pressedAt = performance.now(); this.mode = "pending"; this.listen(); }
    });
    this.mic.addEventListener("pointerup", () => {
      if (this.mode !== "pending") return;
      if (performance.now() - this.pressedAt >= HOLD_MS) this.finish();
      else this.mode = "tap";
    });
    this.mic.addEventListener("click", (event) => { // the keyboard (Enter, Space on the button): a tap
      if (event.detail !== 0) return;
      if (this.recorder) this.finish(); else { this.mode = "tap"; this.listen(); }
    });
    this.input.addEventListener("keydown", (event) => {
      if (event.key === " " && !event.repeat && this.input.value === "" && !this.recorder) {
        event.preventDefault();
        this.mode = "key";
        this.listen();
      }
    });
    this.input.addEventListener("keyup", (event) => {
      if (event.key === " " && this.mode === "key") this.finish();
    });
    this.aloudButton.addEventListener("click", () => this.setAloud(!this.aloud));
    this.handsButton.addEventListener("click", () => this.setHandsFree(!this.handsFree));
  }

  // A conversation opened: its own "answer aloud" choice. A new conversation starts without it; the
  // choice made in a draft goes with the conversation the first message makes of it.
  setSession(id) {
    const fromDraft = !this.session;
    this.session = id || null;
    if (!fromDraft) this.player.stop("switched");
    const stored = this.session ? localStorage.getItem(`navi.aloud.${this.session}`) : null;
    if (this.session && stored === null && fromDraft) this.setAloud(this.aloud);
    else this.setAloud(stored === "1", false);
  }

  setAloud(on, remember = true) {
    const was = this.speaking;
    this.aloud = on;
    this.aloudButton.setAttribute("aria-pressed", String(on));
    if (remember && this.session) localStorage.setItem(`navi.aloud.${this.session}`, on ? "1" : "0");
    if (!on && !this.handsFree) this.player.stop();
    if (this.speaking !== was) this.tellSpeak();
  }

  get speaking() { return this.aloud || this.handsFree; }

  // Navi is told whether to speak this connection's answers (an answer streaming now is read from
  // its current sentence). Sent while speaking, it stops what is left of the answers (barge-in).
  tellSpeak() {
    const socket = this.socket();
    if (!socket?.ready) return; // said when the socket opens (`socketOpened`)
    if (this.speaking && this.answering) this.player.awaiting = true;
    try { socket.send({ type: "speak", on: this.speaking, format: "mp3" }); } catch { /* closed meanwhile */ }
  }

  // The session's socket opened (first time, or again after a drop): a new connection speaks nothing
  // until told, and what the old one was hearing or speaking is gone.
  socketOpened() {
    for (const waiter of this.hearing.splice(0)) waiter.reject(new Error("the connection to Navi was lost; try again"));
    this.live.clear();
    this.muted.clear();
    this.player.awaiting = false;
    if (this.speaking) this.tellSpeak();
  }

  // Stop what is playing and what Navi has left to say of it.
  hush(reason) {
    const busy = this.player.busy;
    this.player.stop(reason);
    if (!busy) return;
    for (const run of this.live) this.muted.add(run);
    this.live.clear();
    if (this.speaking) this.tellSpeak(); // `speak` again: Navi drops the rest (barge-in)
  }

  async setHandsFree(on) {
    const was = this.speaking;
    this.handsFree = on;
    this.handsButton.setAttribute("aria-pressed", String(on));
    if (this.speaking !== was) this.tellSpeak();
    if (on) {
      if (!(await this.openMic())) { this.setHandsFree(false); return; }
      this.say("Hands-free: talk whenever you like.");
      this.watch = setInterval(() => this.tick(), 50);
    } else {
      clearInterval(this.watch);
      if (this.recorder) this.finish({ send: false });
      this.closeMic();
    }
  }

  say(text) { this.status.textContent = text; }

  // The microphone's stream and a level meter on it (kept open in hands-free mode).
  async openMic() {
    if (this.stream) return true;
    try {
      if (!navigator.mediaDevices?.getUserMedia) throw Object.assign(new Error("no microphone API"), { name: "NotSupportedError" });
      this.stream = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true } });
    } catch (error) {
      const text = error.name === "NotSupportedError" ? "This browser cannot record here (it needs https or localhost)." : NO_MIC;
      this.say(text);
      toast(text);
      this.mic.dataset.denied = "true";
      return false;
    }
    this.context = new AudioContext();
    const analyser = this.context.createAnalyser();
    analyser.fftSize = 1024;
    this.context.createMediaStreamSource(this.stream).connect(analyser);
    const samples = new Float32Array(analyser.fftSize);
    this.level = () => {
      analyser.getFloatTimeDomainData(samples);
      let sum = 0;
      for (const s of samples) sum += s * s;
      return Math.sqrt(sum / samples.length);
    };
    const draw = () => {
      if (!this.stream) return;
      const level = this.level();
      this.meter.dataset.level = level.toFixed(3);
      this.meter.firstChild.style.width = `${Math.min(100, Math.round(level * 400))}%`;
      requestAnimationFrame(draw);
    };
    requestAnimationFrame(draw);
    return true;
  }

  closeMic() {
    this.stream?.getTracks().forEach((t) => t.stop());
    this.context?.close();
    this.stream = this.context = null;
    this.meter.dataset.level = "0";
  }

  async listen() {
    if (!(await this.openMic())) { this.mode = null; return; }
    if (this.recorder) return;
    this.hush("listening");
    this.ensureSession().catch(() => {}); // a draft: its conversation (and socket) opens while you talk
    const type = ["audio/webm;codecs=opus", "audio/ogg;codecs=opus", "audio/mp4"].find((t) => MediaRecorder.isTypeSupported(t));
    const recorder = new MediaRecorder(this.stream, type ? { mimeType: type } : {});
    const chunks = [];
    recorder.ondataavailable = (event) => { if (event.data.size) chunks.push(event.data); };
    this.recorded = new Promise((resolve) => { recorder.onstop = () => resolve(new Blob(chunks, { type: recorder.mimeType })); });
    recorder.start(250);
    this.recorder = recorder;
    this.heard = false;
    this.quietSince = null;
    this.mic.classList.add("recording");
    this.mic.setAttribute("aria-pressed", "true");
    this.say("Listening…");
  }

  // Recording ends: the clip is transcribed into the message box (hands-free: and sent).
  async finish({ send = this.handsFree } = {}) {
    const recorder = this.recorder;
    if (!recorder) return;
    this.recorder = null;
    this.mode = null;
    this.mic.classList.remove("recording");
    this.mic.setAttribute("aria-pressed", "false");
    recorder.stop();
    const blob = await this.recorded;
    if (!this.handsFree) this.closeMic();
    if (!send && this.handsFree) return;
    this.say("Transcribing…");
    this.transcribing = true;
    try {
      const text = await this.hear(blob);
      this.input.value = this.input.value ? `${this.input.value.trimEnd()} ${text}` : text;
      this.input.dispatchEvent(new Event("input", { bubbles: true }));
      this.input.focus();
      this.say("");
      if (send) await this.composer.submit();
    } catch (error) {
      this.say(NOTHING_HEARD.has(error.code) ? `Nothing to send: ${error.message}` : `Could not transcribe: ${error.message}`);
    } finally {
      this.transcribing = false;
    }
  }

  // The clip as a `voice` frame on the conversation's socket (opened first in a draft); its words
  // come back as `transcript` (only transcribed here: the page puts them in the box and sends them).
  async hear(blob) {
    await this.ensureSession();
    const socket = this.socket();
    await socket.whenOpen();
    const audio = await dataUrl(blob);
    return new Promise((resolve, reject) => {
      const waiter = { resolve, reject };
      waiter.timer = setTimeout(() => {
        this.hearing = this.hearing.filter((w) => w !== waiter);
        reject(new Error("Navi did not answer in time"));
      }, HEAR_MS);
      this.hearing.push(waiter);
      try {
        socket.send({ type: "voice", audio, send: false });
      } catch (error) {
        this.hearing = this.hearing.filter((w) => w !== waiter);
        reject(error);
      }
    });
  }

  // The socket's voice frames (main.js's handleFrame): a clip's words, an answer's spoken sentences.
  frame(frame) {
    if (frame.type === "transcript") {
      const waiter = this.hearing.shift();
      clearTimeout(waiter?.timer);
      waiter?.resolve(frame.text);
    } else if (frame.type === "speech") {
      if (this.muted.has(frame.run_id) || !this.speaking) return;
      this.live.add(frame.run_id);
      this.player.play(frame.text, audioBlob(frame));
    } else if (frame.type === "speech_end") {
      this.live.delete(frame.run_id);
      if (this.muted.delete(frame.run_id)) return; // the end of an answer stopped here
      if (!this.live.size) this.player.spoken();
    }
  }

  // An `error` frame: true when it is about voice (a clip that could not be heard, speech that failed).
  error(frame) {
    if (!VOICE_CODES.has(frame.code) || frame.seq !== undefined) return false;
    const waiter = this.hearing.shift();
    if (waiter) {
      clearTimeout(waiter.timer);
      waiter.reject(Object.assign(new Error(frame.message), { code: frame.code }));
    } else {
      this.player.spoken();
      toast(`Could not speak the answer: ${frame.message}`);
    }
    return true;
  }

  // Hands-free: start when someone talks, end after a pause, and barge in on a playing answer.
  tick() {
    if (!this.stream || !this.level) return;
    const now = performance.now();
    const loud = this.level() > SPEECH_LEVEL;
    if (this.player.busy) {
      this.loudSince = loud ? this.loudSince ?? now : null;
      if (this.loudSince !== null && now - this.loudSince >= BARGE_MS) {
        this.hush("barge-in");
        this.listen();
      }
      return;
    }
    if (!this.recorder) {
      if (loud && !this.answering && !this.transcribing) this.listen();
      return;
    }
    if (loud) { this.heard = true; this.quietSince = null; return; }
    this.quietSince ??= now;
    if (this.heard && now - this.quietSince >= SILENCE_MS) this.finish({ send: true });
  }

  afterSpeaking() {} // hands-free listens again through `tick` once the answer is spoken

  // The page's answer frames: Navi speaks the answer (`speech` frames) when asked to.
  turnStarted(runId) {
    this.answering = true;
    if (!this.speaking) return;
    this.live.add(runId);
    this.player.awaiting = true;
  }

  turnEnded() {
    this.answering = false;
  }

  // A speaker button on every answer, in its row of actions (before the time) once it has one:
  // reads that answer from the start.
  watchAnswers(conversation) {
    const place = (turn, button) => {
      const actions = turn.querySelector(":scope > .msg-actions");
      if (!actions) {
        if (!button.isConnected) turn.append(button); // never moved again: that would observe itself
      } else if (button.parentElement !== actions) {
        const time = actions.querySelector(":scope > .msg-time");
        if (time) time.before(button);
        else actions.append(button);
      }
    };
    const add = (turn) => {
      const drawn = turn.querySelector(".speak-answer");
      if (drawn) {
        place(turn, drawn); // moved into the actions drawn after it
        return;
      }
      const button = el("button", { type: "button", class: "icon-button speak-answer", "aria-label": "Read this answer aloud", title: "Read aloud" }, icon("speaker"));
      button.addEventListener("click", () => {
        this.hush("replaced");
        const found = new Sentences();
        for (const sentence of [...found.feed(readable(turn)), ...found.finish()]) this.player.say(sentence);
      });
      place(turn, button);
    };
    new MutationObserver(() => {
      for (const turn of conversation.querySelectorAll("article.msg.turn:not([aria-busy])")) add(turn);
    }).observe(conversation, { childList: true, subtree: true, attributes: true, attributeFilter: ["aria-busy"] });
  }
}

// An answer's rendered text without its code blocks (the DOM has them as <pre>).
function readable(turn) {
  const parts = [];
  for (const node of turn.querySelectorAll(":scope > .markdown.text")) {
    const copy = node.cloneNode(true);
    copy.querySelectorAll("pre, code, .citation").forEach((n) => n.remove());
    copy.querySelectorAll("p, li, h1, h2, h3, h4, h5, h6, blockquote").forEach((n) => n.append("\n\n"));
    parts.push(copy.textContent);
  }
  return parts.join("\n\n");
}
