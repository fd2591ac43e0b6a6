// One WebSocket per open session. Reconnects with backoff after a drop and asks only for the frames
// it has not seen of the run it followed (`?since=<last seq>&run=<its id>`), so a turn carries on
// where it was, and a run that started while it was away is replayed whole. Closed by Navi with
// 4004 (the session is gone) or 4401 (signed out, the user removed) it does not reconnect.
// It tells Navi whether the person can see the page (a `visibility` frame on open, on every change
// and every 30 s): while a page of theirs is in view, Navi pushes no notification.

const VISIBILITY_SECONDS = 30;

export class SessionSocket {
  constructor(sessionId, { onFrame, onOpen, onStatus, onGone, onSignedOut }) {
    this.sessionId = sessionId;
    this.onFrame = onFrame;
    this.onOpen = onOpen;
    this.onStatus = onStatus;
    this.onGone = onGone;
    // Closed with 4401: no reconnect. By default the page is loaded again: Navi answers with the
    // sign-in page, and tells the browser to drop a cookie that no longer signs anybody in.
    this.onSignedOut = onSignedOut || (() => window.location.assign("/"));
    this.ws = null;
    this.closed = false;
    this.lastSeq = 0; // of the latest run seen; kept after its end, as the run may still send frames
    this.lastRun = ""; // that run's id
    this.retries = 0;
    this.timer = 0;
    this.waiters = [];
    this.reportVisibility = () => {
      if (this.ready) this.ws.send(JSON.stringify({ type: "visibility", visible: document.visibilityState === "visible" }));
    };
    document.addEventListener("visibilitychange", this.reportVisibility);
    this.beat = setInterval(this.reportVisibility, VISIBILITY_SECONDS * 1000);
    this.connect();
  }

  url() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const since = this.lastSeq ? `?since=${this.lastSeq}&run=${encodeURIComponent(this.lastRun)}` : "";
    return `${scheme}://${location.host}/ws/sessions/${encodeURIComponent(this.sessionId)}${since}`;
  }

  connect() {
    const ws = new WebSocket(this.url());
    this.ws = ws;
    ws.onopen = () => {
      const reconnected = this.retries > 0;
      this.retries = 0;
      this.reportVisibility();
      for (const { resolve } of this.waiters.splice(0)) resolve();
      this.onStatus?.("open");
      this.onOpen?.({ reconnected });
    };
    ws.onmessage = (event) => {
      let frame;
      try {
        frame = JSON.parse(event.data);
      } catch {
        return;
      }
      // A run's frames are numbered from 1 (its stream_start); skip any seen before a reconnect.
      if (frame.seq !== undefined) {
        const sameRun = frame.run_id === undefined || frame.run_id === this.lastRun;
        if (sameRun && frame.type !== "stream_start" && frame.seq <= this.lastSeq) return;
        this.lastSeq = frame.seq;
        if (frame.run_id !== undefined) this.lastRun = frame.run_id;
      }
      this.onFrame(frame);
    };
    ws.onclose = (event) => {
      if (this.ws !== ws || this.closed) return;
      if (event.code === 4004) {
        this.fail(new Error("This conversation no longer exists."));
        this.onGone?.();
        return;
      }
      if (event.code === 4401) { // signed out (here or in another window), or the user was removed
        this.closed = true;
        this.fail(new Error("Signed out: sign in again."));
        this.onSignedOut?.();
        return;
      }
      this.onStatus?.("reconnecting");
      const delay = Math.min(4000, 250 * 2 ** this.retries++);
      this.timer = setTimeout(() => this.connect(), delay);
    };
  }

  // Resolves once the socket is open (at once when it is); fails when it is closed, or after `ms`
  // (0: no time limit).
  whenOpen(ms = 8000) {
    if (this.ready) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = ms ? setTimeout(() => reject(new Error("Could not reach Navi; check that it is running.")), ms) : 0;
      this.waiters.push({
        resolve: () => { clearTimeout(timer); resolve(); },
        reject: (error) => { clearTimeout(timer); reject(error); },
      });
    });
  }

  fail(error) {
    for (const { reject } of this.waiters.splice(0)) reject(error);
  }

  get ready() {
    return this.ws?.readyState === WebSocket.OPEN;
  }

  send(frame) {
    if (!this.ready) throw new Error("Not connected to Navi yet; try again in a moment.");
    this.ws.send(JSON.stringify(frame));
  }

  close() {
    this.closed = true;
    document.removeEventListener("visibilitychange", this.reportVisibility);
    clearInterval(this.beat);
    this.fail(new Error("The conversation was closed."));
    clearTimeout(this.timer);
    this.ws?.close();
  }
}
