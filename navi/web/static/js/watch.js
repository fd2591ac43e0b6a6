// How the page hears of scheduled runs. With a session open, its WebSocket carries every
// `schedule_run` frame of the user (whichever session the run is in). The draft view (#/) has no
// socket, so while none is open this polls: GET /sessions (the list and its unread badges) and
// GET /schedules every POLL_MS; a schedule whose `last_run_at` moved, or whose latest run was
// still going, is read whole (GET /schedules/{id}) and its runs that started or ended since the
// page loaded become the same events a frame makes. A run started by "Run now" does not move
// `last_run_at`: this page's own click marks its schedule as going, and a session that turns
// unread (a run from the CLI or another window ended) has every schedule read once. Each run's
// status is reported once, however it arrived (frame or poll).

export const POLL_MS = 4000;
const REPORTED = new Set(["ok", "error", "skipped", "waiting_approval"]);
const GOING = new Set(["running", "waiting_approval"]);

export class ScheduleWatch {
  constructor({ api, onEvent, onSessions, onSchedules }) {
    this.api = api;
    this.onEvent = onEvent; // a schedule_run event, once per run and status
    this.onSessions = onSessions; // GET /sessions answered (the poll's)
    this.onSchedules = onSchedules; // GET /schedules answered (the poll's)
    this.since = Date.now() - 5000; // runs older than the page are history, not news
    this.lastRun = new Map(); // schedule id → last_run_at at the previous poll
    this.going = new Set(); // schedules whose latest run had not ended at the previous poll
    this.seen = new Set(); // `${schedule_run_id}:${status}` already reported
    this.unread = null; // ids of the sessions unread at the previous poll (null: not polled yet)
    this.timer = 0;
    this.polling = false;
  }

  // A frame or a polled run: report it unless this run's status was reported already.
  event(event) {
    if (!REPORTED.has(event.status) && event.status !== "running") return;
    const key = `${event.schedule_run_id}:${event.status}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.onEvent(event);
  }

  // A socket is open (frames come through it): no poll. None is open: poll.
  setSocketOpen(open) {
    clearTimeout(this.timer);
    this.polling = !open;
    if (this.polling) this.timer = setTimeout(() => this.poll(), POLL_MS);
  }

  async poll() {
    if (!this.polling) return;
    try {
      const [sessions, schedules] = await Promise.all([this.api.sessions(), this.api.schedules()]);
      this.onSessions(sessions);
      this.onSchedules(schedules);
      const unread = new Set(sessions.filter((s) => s.unread).map((s) => s.id));
      const newlyUnread = this.unread !== null && [...unread].some((id) => !this.unread.has(id));
      this.unread = unread;
      await this.check(schedules, newlyUnread);
    } catch { /* Navi restarting or the network gone: the next poll tries again */ }
    if (this.polling) {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.poll(), POLL_MS);
    }
  }

  // This page started a run of this schedule (Run now): follow it until it ends.
  started(scheduleId) {
    this.going.add(scheduleId);
  }

  async check(schedules, all = false) {
    const moved = schedules.filter((s) => all || this.going.has(s.id)
      || (s.last_run_at && s.last_run_at !== this.lastRun.get(s.id)));
    this.lastRun = new Map(schedules.map((s) => [s.id, s.last_run_at]));
    const details = await Promise.all(moved.map((s) => this.api.schedule(s.id).catch(() => null)));
    for (const detail of details) {
      if (!detail) continue;
      this.going.delete(detail.id);
      for (const run of [...detail.runs].reverse()) { // oldest first, as they happened
        if (GOING.has(run.status)) this.going.add(detail.id);
        const when = Date.parse(run.finished_at || run.started_at || run.due_at);
        if (!(when >= this.since) || !REPORTED.has(run.status)) continue;
        this.event({ type: "schedule_run", schedule_id: detail.id, schedule_run_id: run.id, session_id: run.session_id,
          status: run.status, title: detail.title, manual: run.manual, preview: run.preview, error: run.error });
        // (no `unread` here: the same poll's GET /sessions has already drawn the badges as they are)
      }
    }
  }
}
