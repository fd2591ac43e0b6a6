// Signing in to a site from the page (docs/tools.md#browser): a socket to /ws/browser/viewer shows
// pictures of Navi's own headless browser; a click on the picture is sent as a click at that point
// of the page, and keys typed while the picture has focus are sent too (printable ones as text, a
// few at once; Enter, Tab, arrows… as keys). Save keeps the cookies as the named sign-in, Cancel
// keeps nothing. What is typed is sent and forgotten: it is kept in no variable beyond the short
// batch, shown nowhere and never logged. The page's address and title are the server's text: set
// as text only.

const KEYS = new Set(["Enter", "Tab", "Backspace", "Delete", "Escape", "ArrowUp", "ArrowDown", "ArrowLeft",
  "ArrowRight", "Home", "End", "PageUp", "PageDown"]);
const BATCH_MS = 150; // typed characters wait this long for the next before they are sent

export class SigninViewer {
  constructor({ root, say, onSaved }) {
    const $ = (id) => root.querySelector(`#${id}`);
    this.form = $("viewer-form");
    this.section = $("viewer");
    this.screen = $("viewer-screen");
    this.address = $("viewer-address");
    this.say = say; // (message, kind) → the panel's status line
    this.onSaved = onSaved; // (name) → the list of sign-ins is read again
    this.ws = null;
    this.size = { width: 1280, height: 800 };
    this.typed = "";
    this.timer = null;
    this.form.addEventListener("submit", (event) => { event.preventDefault(); this.start(); });
    $("viewer-save").addEventListener("click", () => this.send({ type: "viewer_save" }));
    $("viewer-cancel").addEventListener("click", () => { this.send({ type: "viewer_cancel" }); this.stop(); });
    this.screen.addEventListener("click", (event) => this.click(event));
    this.screen.addEventListener("keydown", (event) => this.key(event));
    this.screen.addEventListener("wheel", (event) => {
      event.preventDefault();
      this.flush();
      this.send({ type: "viewer_scroll", dy: Math.max(-5000, Math.min(5000, event.deltaY)) });
    }, { passive: false });
  }

  start() {
    const f = this.form.elements;
    const name = f.name.value.trim();
    const url = f.url.value.trim();
    this.stop();
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const ws = new WebSocket(`${scheme}://${location.host}/ws/browser/viewer`);
    this.ws = ws;
    this.say(`Opening ${url} in Navi's browser…`);
    ws.addEventListener("open", () => this.send({ type: "viewer_start", name, url }));
    ws.addEventListener("message", (event) => this.frame(JSON.parse(event.data), name));
    ws.addEventListener("close", () => { if (this.ws === ws) this.stop(); });
  }

  frame(frame, name) {
    if (frame.type === "viewer_frame") {
      this.size = { width: frame.width, height: frame.height };
      this.screen.src = frame.image;
      this.address.textContent = `${frame.title || "(untitled)"} — ${frame.url}`;
      if (this.section.hidden) {
        this.section.hidden = false;
        this.form.hidden = true;
        this.say("");
        this.screen.focus();
      }
    } else if (frame.type === "viewer_saved") {
      this.say(`Saved the sign-in ${frame.name}${frame.sites.length ? ` (${frame.sites.join(", ")})` : ""}.`);
      this.stop();
      this.onSaved(frame.name);
    } else if (frame.type === "viewer_error") {
      this.say(`The sign-in ${name}: ${frame.message}`, "error");
    }
  }

  send(frame) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(frame));
  }

  click(event) {
    this.flush();
    const box = this.screen.getBoundingClientRect();
    const x = ((event.clientX - box.left) / box.width) * this.size.width;
    const y = ((event.clientY - box.top) / box.height) * this.size.height;
    this.send({ type: "viewer_click", x: Math.max(0, Math.min(this.size.width, x)), y: Math.max(0, Math.min(this.size.height, y)) });
    this.screen.focus();
  }

  key(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key.length === 1) {
      event.preventDefault();
      this.typed += event.key;
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.flush(), BATCH_MS);
    } else if (KEYS.has(event.key)) {
      event.preventDefault();
      this.flush();
      this.send({ type: "viewer_key", key: event.key });
    }
  }

  flush() {
    clearTimeout(this.timer);
    if (this.typed) this.send({ type: "viewer_text", text: this.typed });
    this.typed = "";
  }

  stop() {
    this.flush();
    const ws = this.ws;
    this.ws = null;
    if (ws && ws.readyState <= WebSocket.OPEN) ws.close();
    this.section.hidden = true;
    this.form.hidden = false;
    this.screen.removeAttribute("src");
    this.address.textContent = "";
  }
}
