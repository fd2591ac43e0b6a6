// Voice on the page (docs/voice.md): the microphone button (hold to talk, or tap to start and tap to
// stop; Space held in an empty message box), a live level meter, the transcript put into the box to
// send or edit; a speaker button on every answer; "answer aloud" per conversation, spoken sentence by
// sentence while the answer streams (markdown, code and addresses are not read); and hands-free:
// talk, hear the answer, talk again, where speaking over the answer stops it (barge-in).
//
// Speech goes to Navi's own /v1/audio/transcriptions and /v1/audio/speech: nothing leaves for
// anywhere else. A browser without microphone permission gets a message saying how to allow it.

import { el, toast } from "/static/js/dom.js";
import { icon } from "/static/js/icons.js";

const HOLD_MS = 350; // pressed longer than this: hold to talk; shorter: a tap that toggles
const SPEECH_LEVEL = 0.04; // RMS above this is someone talking (barge-in, hands-free start)
const BARGE_MS = 250; // …for this long while an answer plays: stop it and listen
const SILENCE_MS = 1200; // hands-free: this much quiet after speech ends the clip
const NO_MIC = "Navi cannot hear you: allow the microphone for this site in the browser's settings (the icon in the address bar), then try again.";
const ABBREVIATIONS = ["e.g.", "i.e.", "etc.", "mr.", "mrs.", "ms.", "dr.", "vs.", "no.", "st."];
const END = /(?<=[.!?…])["')\]]*\s+|\n[ \t]*\n/g;

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

// Plays sentences in order; each one's audio is asked for as soon as the sentence is known.
class Player {
  constructor(audio, onIdle) {
    Object.assign(this, { audio, onIdle, queue: [], current: null, controller: new AbortController() });
    audio.dataset.played = "0";
  }
  get busy() { return Boolean(this.current) || this.queue.length > 0; }
  say(text) {
    const signal = this.controller.signal;
    const audio = voiceRequest("/v1/audio/speech", {
      method: "POST", signal, headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ model: "tts-1", voice: "alloy", input: text, response_format: "mp3" }),
    }).then((r) => r.blob());
    audio.catch(() => {}); // reported when its turn to play comes
    this.queue.push({ text, audio });
    if (!this.current) this.next();
  }
  async next() {
    const job = this.queue.shift();
    if (!job) { this.current = null; this.onIdle(); return; }
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
  stop(reason = "stopped") {
    this.controller.abort();
    this.controller = new AbortController();
    this.queue = [];
    const was = this.current;
    this.current = null;
    if (was) { this.audio.dataset.stopped = reason; this.audio.pause(); }
  }
}

export class VoiceControls {
  constructor({ input, row, composer, conversation }) {
    Object.assign(this, { input, composer, conversation });
    this.session = null;
    this.aloud = false;
    this.handsFree = false;
    this.turn = null; // the streaming answer's sentences, when it is read aloud
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
    this.aloud = on;
    this.aloudButton.setAttribute("aria-pressed", String(on));
    if (remember && this.session) localStorage.setItem(`navi.aloud.${this.session}`, on ? "1" : "0");
    if (!on && !this.handsFree) this.player.stop();
  }

  async setHandsFree(on) {
    this.handsFree = on;
    this.handsButton.setAttribute("aria-pressed", String(on));
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
    this.player.stop("listening");
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
    const form = new FormData();
    form.append("file", blob, "speech.webm");
    form.append("model", "whisper-1");
    try {
      const { text } = await (await voiceRequest("/v1/audio/transcriptions", { method: "POST", body: form })).json();
      this.input.value = this.input.value ? `${this.input.value.trimEnd()} ${text}` : text;
      this.input.dispatchEvent(new Event("input", { bubbles: true }));
      this.input.focus();
      this.say("");
      if (send) await this.composer.submit();
    } catch (error) {
      this.say(error.status === 400 ? `Nothing to send: ${error.message}` : `Could not transcribe: ${error.message}`);
    } finally {
      this.transcribing = false;
    }
  }

  // Hands-free: start when someone talks, end after a pause, and barge in on a playing answer.
  tick() {
    if (!this.stream || !this.level) return;
    const now = performance.now();
    const loud = this.level() > SPEECH_LEVEL;
    if (this.player.busy) {
      this.loudSince = loud ? this.loudSince ?? now : null;
      if (this.loudSince !== null && now - this.loudSince >= BARGE_MS) {
        this.player.stop("barge-in");
        this.turn = null;
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

  // The page's answer frames: read aloud while they stream, when asked to.
  turnStarted() {
    this.answering = true;
    this.turn = this.aloud || this.handsFree ? new Sentences() : null;
  }

  delta(text) {
    for (const sentence of this.turn?.feed(text) || []) this.player.say(sentence);
  }

  turnEnded() {
    for (const sentence of this.turn?.finish() || []) this.player.say(sentence);
    this.turn = null;
    this.answering = false;
  }

  // A speaker button on every answer: reads that answer from the start.
  watchAnswers(conversation) {
    const add = (turn) => {
      if (turn.querySelector(":scope > .speak-answer")) return;
      const button = el("button", { type: "button", class: "icon-button speak-answer", "aria-label": "Read this answer aloud", title: "Read aloud" }, icon("speaker"));
      button.addEventListener("click", () => {
        this.player.stop("replaced");
        const found = new Sentences();
        for (const sentence of [...found.feed(readable(turn)), ...found.finish()]) this.player.say(sentence);
      });
      turn.append(button);
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
