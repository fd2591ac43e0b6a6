// One WebSocket per open session. Reconnects with backoff after a drop and asks only for the frames
// it has not seen (`?since=<last seq>`), so a turn carries on where it was.

export class SessionSocket {
  constructor(sessionId, { onFrame, onOpen, onStatus, onGone }) {
    this.sessionId = sessionId;
    this.onFrame = onFrame;
    this.onOpen = onOpen;
    this.onStatus = onStatus;
    this.onGone = onGone;
    this.ws = null;
    this.closed = false;
    this.lastSeq = 0;
    this.inTurn = false;
    this.retries = 0;
    this.timer = 0;
    this.connect();
  }

  url() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const since = this.inTurn && this.lastSeq ? `?since=${this.lastSeq}` : "";
    return `${scheme}://${location.host}/ws/sessions/${encodeURIComponent(this.sessionId)}${since}`;
  }

  connect() {
    const ws = new WebSocket(this.url());
    this.ws = ws;
    ws.onopen = () => {
      const reconnected = this.retries > 0;
      this.retries = 0;
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
      if (frame.seq !== undefined) {
        if (frame.type === "stream_start") this.inTurn = true;
        else if (frame.seq <= this.lastSeq && this.inTurn) return; // already seen
        this.lastSeq = frame.seq;
      }
      if (["stream_end", "stream_stopped"].includes(frame.type) || (frame.type === "error" && frame.seq)) {
        this.inTurn = false;
        this.lastSeq = 0;
      }
      this.onFrame(frame);
    };
    ws.onclose = (event) => {
      if (this.ws !== ws || this.closed) return;
      if (event.code === 4004) {
        this.onGone?.();
        return;
      }
      this.onStatus?.("reconnecting");
      const delay = Math.min(8000, 250 * 2 ** this.retries++);
      this.timer = setTimeout(() => this.connect(), delay);
    };
  }

  // Resolves once the socket is open (at once when it is), fails after `ms`.
  whenOpen(ms = 8000) {
    if (this.ready) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const started = Date.now();
      const poll = () => {
        if (this.ready) resolve();
        else if (this.closed || Date.now() - started > ms) reject(new Error("Could not reach Navi; check that it is running."));
        else setTimeout(poll, 50);
      };
      poll();
    });
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
    clearTimeout(this.timer);
    this.ws?.close();
  }
}
