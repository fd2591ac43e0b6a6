"""Runs across workers and machines through PostgreSQL: rows for what must last, NOTIFY to wake.

- **Frames.** Every frame of a run of this worker is appended to `run_events` (`run_id`, `seq`)
  and announced on the run's channel (`navi_r_<run id>`) with NOTIFY, in the same statement, so an
  announcement is never ahead of its row. Only workers that follow the run listen there: its own
  worker never reads its own frames back. One writer task per worker, on its own
  asyncpg connection, sends what has queued up as one statement — one round trip for any number of
  frames of any number of runs; with `synchronous_commit` off for it (a frame is a replay copy,
  not data: the messages themselves are stored by the session store). An announcement carries the
  frame unless it is too large for NOTIFY (8,000 bytes), then readers fetch the row, and when
  the frame was published (`t`, wall-clock seconds), so a follower measures how late it arrived
  (`lag`: the NOTIFY lag metric).
- **Following.** This worker LISTENs, on one dedicated connection, on the channels of the sessions
  its connections follow, where a run starting elsewhere is announced (`start`), and on the channel
  of each run it follows: its frames, then its end (a row with no frame). `RemoteRun` listens
  first, then reads what came before from the table.
- **Control.** Stop and an approval's answer go by NOTIFY to the channel of the worker that runs
  the turn (`navi_w_…`, named after its lease). Waiting approvals are rows of `run_approvals`,
  written and deleted in order with the frames that ask and answer them; any worker answers one
  by deleting its row (once: the first answer counts) and telling its worker. MCP servers'
  questions (`elicitation_required`) are rows of `run_elicitations` the same way; an answer, which
  can be larger than NOTIFY carries, is stored in the row (once) and the run's worker is told to
  take it from there (`pg_batch.py`: the one statement that writes them with the frames).
- **Pruning.** A run's rows are deleted `keep_seconds` after it ended.

If the listening connection drops, it is opened again and every followed run re-reads its rows,
so nothing announced meanwhile is lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import time
from collections.abc import Callable
from typing import Any

import asyncpg
import structlog
from sqlalchemy import Connection, and_, delete, func, select, text, update
from sqlalchemy.engine import make_url

from navi.runs.bus import Control, Handlers
from navi.runs.leases import Lease
from navi.runs.pg_batch import WRITE, Batch, Row
from navi.runs.run import AgentRun
from navi.storage.database import Database
from navi.storage.schema import run_approvals, run_elicitations, run_events

log = structlog.stdlib.get_logger(__name__)

VIEW = ("call_id", "tool", "args", "reason", "always_scope", "is_subagent")  # as GET …/approvals lists it
MAX_PAYLOAD = 7_900  # NOTIFY's limit is 8,000 bytes
BATCH = 1_000  # at most this many queued items per statement
FOREVER = 86_400.0  # rows of a run that never ended are deleted after a day at the latest

FEED = "navi_feed"  # session changes, owners' frames and revocations, for every worker


async def announce(db: Database, note: dict[str, Any]) -> None:
    """Broadcast `note` to the feeds of every worker on `db`, from a process that runs none (the
    CLI: `navi users remove` announces the user's revocation, so their sockets close at once)."""
    payload = json.dumps(note)
    await db.write(lambda conn: conn.execute(text("SELECT pg_notify(:c, :p)"), {"c": FEED, "p": payload}))


SESSION_PREFIX = "navi_s_"  # a session's runs start: `start` announcements
RUN_PREFIX = "navi_r_"  # a run's frames and end, for the workers that follow it


def session_channel(session_id: str) -> str:
    return f"{SESSION_PREFIX}{session_id}"


def run_channel(run_id: str) -> str:
    return f"{RUN_PREFIX}{run_id}"


def worker_channel(worker: str) -> str:
    return f"navi_w_{hashlib.sha256(worker.encode()).hexdigest()[:24]}"


def asyncpg_dsn(db: Database) -> str:
    """The database's URL as asyncpg takes it (`postgresql://…`, no SQLAlchemy driver name)."""
    return make_url(db.url).set(drivername="postgresql").render_as_string(hide_password=False)


class PgBus:
    shared = True

    def __init__(
        self,
        db: Database,
        worker: str,
        *,
        keep_seconds: float = 300.0,
        lag: Callable[[float], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.db = db
        self.worker = worker
        self.keep_seconds = keep_seconds
        self.lag = lag  # told how late each frame of a followed run arrived, in seconds
        self.clock = clock
        self.channel = worker_channel(worker)
        self._dsn = asyncpg_dsn(db)
        self._handlers: Handlers | None = None
        self._queue: list[Row | Callable[[Batch], None]] = []
        self._wake = asyncio.Event()
        self._writer: asyncio.Task[None] | None = None
        self._listener: asyncpg.Connection | None = None
        self._writing: asyncpg.Connection | None = None  # the writer's connection
        self.close_wait = 10.0  # seconds a close waits for what is queued to be written
        self._listening: dict[str, int] = {}  # channel → how many want it
        self._reconnect: asyncio.Task[None] | None = None
        self._closed = False
        # One command at a time on the listening connection (asyncpg runs no two at once), and a
        # channel is listened to before `watch` returns.
        self._listen_lock = asyncio.Lock()

    # --- lifecycle -----------------------------------------------------------------------------------
    async def open(self, handlers: Handlers) -> None:
        self._handlers = handlers
        self._closed = False
        await self._listen_connection()
        for channel in (self.channel, FEED):
            self._listening[channel] = 1
            await self._add(channel)
        self._writer = asyncio.create_task(self._write_loop())

    async def close(self) -> None:
        """Write what is queued, then close both connections."""
        self._closed = True
        if self._writer is not None:
            self._wake.set()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._writer, self.close_wait)
            self._writer = None
        if self._reconnect is not None:
            # Awaited, so that a connection it was making is closed below and not left to the
            # garbage collector.
            self._reconnect.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reconnect
            self._reconnect = None
        if self._listener is not None:
            with contextlib.suppress(Exception):
                await self._listener.close(timeout=5)
            self._listener = None

    # --- frames of this worker's runs --------------------------------------------------------------------
    def _put(self, item: Row | Callable[[Batch], None]) -> None:
        self._queue.append(item)
        self._wake.set()

    def published(self, run: AgentRun, frame: dict[str, Any]) -> None:
        self._put(self._frame_item(run.session_id, run.run_id, int(frame["seq"]), frame))
        kind = frame.get("type")
        if kind == "approval_required":
            key = (run.session_id, str(frame.get("call_id", "")))
            view = {k: frame.get(k) for k in VIEW}
            text_view = json.dumps(view)
            self._put(lambda b: b.ask(b.asked, key, (run.run_id, self.worker, text_view)))
        elif kind == "approval_resolved":
            key = (run.session_id, str(frame.get("call_id", "")))
            self._put(lambda b: b.settle(b.asked, b.answered, key))
        elif kind == "elicitation_required":
            key = (run.session_id, str(frame.get("elicitation_id", "")))
            shown = json.dumps({k: v for k, v in frame.items() if k not in ("type", "run_id", "seq")})
            self._put(lambda b: b.ask(b.questions, key, (run.run_id, self.worker, shown)))
        elif kind == "elicitation_resolved":
            key = (run.session_id, str(frame.get("elicitation_id", "")))
            self._put(lambda b: b.settle(b.questions, b.settled, key))

    def _frame_item(self, session_id: str, run_id: str, seq: int, frame: dict[str, Any] | None) -> Row:
        """A frame's row and announcement, as the writer queues them (a tuple: this is per frame)."""
        body = None if frame is None else json.dumps(frame)
        head = f'{{"r": {json.dumps(run_id)}, "q": {int(seq)}, "t": {self.clock():.6f}'
        if body is None:
            payload = f'{head}, "end": true}}'
        elif len(body) + len(head) < MAX_PAYLOAD:
            payload = f'{head}, "f": {body}}}'
        else:  # too large to announce: followers read its row
            payload = f"{head}}}"
        return (run_id, seq, session_id, body, run_channel(run_id), payload)

    def feed(self, note: dict[str, Any]) -> None:
        payload = json.dumps({**note, "w": self.worker})
        if len(payload) >= MAX_PAYLOAD:  # an owner's frame too large to announce: not expected
            log.warning("runs.feed_too_large", size=len(payload))
            return

        def add(b: Batch) -> None:
            b.notes[0].append(FEED)
            b.notes[1].append(payload)

        self._put(add)

    def started(self, run: AgentRun) -> None:
        payload = json.dumps({"k": "start", "r": run.run_id, "w": self.worker})
        channel = session_channel(run.session_id)

        def add(b: Batch) -> None:
            b.notes[0].append(channel)
            b.notes[1].append(payload)

        self._put(add)

    async def ended(self, run: AgentRun) -> None:
        await self._end(run.session_id, run.run_id, len(run.frames) + 1)

    async def _end(self, session_id: str, run_id: str, seq: int) -> None:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._put(self._frame_item(session_id, run_id, seq, None))
        self._put(lambda b: b.done.append(done))
        await done

    async def _write_loop(self) -> None:
        try:
            await self._write_batches()
        finally:  # cancelled (a close that waited too long) or failed: its connection goes too
            if self._writing is not None and not self._writing.is_closed():
                self._writing.terminate()
            self._writing = None

    async def _write_batches(self) -> None:
        conn: asyncpg.Connection | None = None
        pause = 0.1
        while True:
            if not self._queue:
                if self._closed:
                    break
                self._wake.clear()
                await self._wake.wait()
                continue
            items, self._queue = self._queue[:BATCH], self._queue[BATCH:]
            batch = Batch()
            for item in items:
                if type(item) is tuple:
                    batch.add_row(item)
                else:
                    item(batch)  # type: ignore[operator]
            while True:
                try:
                    if conn is None or conn.is_closed():
                        conn = self._writing = await asyncpg.connect(self._dsn)
                        await conn.execute("SET synchronous_commit TO off")
                    await conn.fetchval(WRITE, *batch.args())
                    pause = 0.1
                    break
                except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
                    log.warning("runs.events_not_written", error=str(exc), retry_in=pause)
                    if conn is not None:
                        with contextlib.suppress(Exception):
                            conn.terminate()
                    conn = None
                    if self._closed:
                        break
                    await asyncio.sleep(pause)
                    pause = min(pause * 2, 5.0)
            for future in batch.done:
                if not future.done():
                    future.set_result(None)
        if conn is not None:
            await conn.close()

    # --- following runs of other workers ------------------------------------------------------------------
    async def watch(self, session_id: str) -> None:
        await self._listen(session_channel(session_id))

    async def unwatch(self, session_id: str) -> None:
        await self._unlisten(session_channel(session_id))

    async def follow(self, run_id: str) -> None:
        await self._listen(run_channel(run_id))

    async def unfollow(self, run_id: str) -> None:
        await self._unlisten(run_channel(run_id))

    async def _listen(self, channel: str) -> None:
        self._listening[channel] = self._listening.get(channel, 0) + 1
        if self._listening[channel] == 1:
            await self._add(channel)

    async def _unlisten(self, channel: str) -> None:
        left = self._listening.get(channel, 0) - 1
        if left > 0:
            self._listening[channel] = left
            return
        self._listening.pop(channel, None)
        async with self._listen_lock:
            if (
                self._listener is not None
                and not self._listener.is_closed()
                and channel not in self._listening
            ):
                with contextlib.suppress(Exception):
                    await self._listener.remove_listener(channel, self._notified)

    async def _add(self, channel: str) -> None:
        async with self._listen_lock:
            if self._listener is None or self._listener.is_closed() or channel not in self._listening:
                return
            try:
                await self._listener.add_listener(channel, self._notified)
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
                log.warning("runs.listen_failed", error=str(exc))
                self._lost_listener()

    async def _listen_connection(self) -> None:
        conn = await asyncpg.connect(self._dsn)
        conn.add_termination_listener(lambda _conn: self._lost_listener())
        self._listener = conn

    def _lost_listener(self) -> None:
        if self._closed or (self._reconnect is not None and not self._reconnect.done()):
            return
        self._reconnect = asyncio.get_running_loop().create_task(self._listen_again())

    async def _listen_again(self) -> None:
        pause = 0.1
        while not self._closed:
            try:
                async with self._listen_lock:
                    if self._listener is not None:
                        self._listener.terminate()
                    await self._listen_connection()
                    assert self._listener is not None
                    for channel in list(self._listening):
                        await self._listener.add_listener(channel, self._notified)
                break
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
                log.warning("runs.listen_failed", error=str(exc), retry_in=pause)
                await asyncio.sleep(pause)
                pause = min(pause * 2, 5.0)
        if self._handlers is not None:
            self._handlers.resync()

    def _notified(self, _conn: object, _pid: int, channel: str, payload: str) -> None:
        handlers = self._handlers
        if handlers is None:
            return
        try:
            note = json.loads(payload)
            if channel == self.channel:
                handlers.control(note)
            elif channel == FEED:
                if note.get("w") != self.worker:
                    handlers.feed_note(note)
            elif channel.startswith(SESSION_PREFIX):
                handlers.remote_started(channel.removeprefix(SESSION_PREFIX), note["r"], note["w"])
            else:  # a run this worker follows (never its own: nobody here listens to those)
                end = bool(note.get("end"))
                sent = note.get("t")
                if self.lag is not None and not end and isinstance(sent, int | float):
                    self.lag(max(0.0, self.clock() - sent))  # clocks of two machines may differ
                handlers.remote_frame(note["r"], int(note["q"]), note.get("f"), end)
        except Exception as exc:  # one bad announcement must not stop the others
            log.warning("runs.bad_announcement", channel=channel, error=str(exc))

    async def fetch(self, run_id: str, after: int) -> list[tuple[int, dict[str, Any] | None]]:
        table = run_events.c
        query = (
            select(table.seq, table.frame)
            .where(and_(table.run_id == run_id, table.seq > after))
            .order_by(table.seq)
        )
        rows = await self.db.read(lambda conn: list(conn.execute(query)))
        return [(row.seq, None if row.frame is None else json.loads(row.frame)) for row in rows]

    async def kept(self, run_id: str) -> str | None:
        table = run_events.c
        query = select(table.session_id).where(and_(table.run_id == run_id, table.seq == 1))
        return await self.db.read(lambda conn: conn.execute(query).scalar_one_or_none())

    # --- control and approvals -------------------------------------------------------------------------
    async def send(self, worker: str, control: Control) -> bool:
        payload = json.dumps(control.payload())
        channel = worker_channel(worker)
        await self.db.write(
            lambda conn: conn.execute(text("SELECT pg_notify(:c, :p)"), {"c": channel, "p": payload})
        )
        return True

    async def waiting(self, session_id: str) -> list[dict[str, Any]]:
        table = run_approvals.c
        query = select(table.view).where(table.session_id == session_id).order_by(table.created_at)
        rows = await self.db.read(lambda conn: list(conn.execute(query).scalars()))
        return [json.loads(view) for view in rows]

    async def claim(self, session_id: str, call_id: str) -> str | None:
        table = run_approvals.c
        statement = (
            delete(run_approvals)
            .where(and_(table.session_id == session_id, table.call_id == call_id))
            .returning(table.worker)
        )
        return await self.db.write(lambda conn: conn.execute(statement).scalar())

    # --- MCP servers' questions (elicitations) -----------------------------------------------------
    async def questions(self, session_id: str) -> list[dict[str, Any]]:
        table = run_elicitations.c
        query = (
            select(table.view)
            .where(and_(table.session_id == session_id, table.answer.is_(None)))
            .order_by(table.created_at)
        )
        rows = await self.db.read(lambda conn: list(conn.execute(query).scalars()))
        return [json.loads(view) for view in rows]

    async def question(self, session_id: str, elicitation_id: str) -> dict[str, Any] | None:
        table = run_elicitations.c
        query = select(table.view).where(
            and_(
                table.session_id == session_id, table.elicitation_id == elicitation_id, table.answer.is_(None)
            )
        )
        view = await self.db.read(lambda conn: conn.execute(query).scalar_one_or_none())
        return None if view is None else dict(json.loads(view))

    async def answer_question(
        self, session_id: str, elicitation_id: str, answer: dict[str, Any]
    ) -> str | None:
        table = run_elicitations.c
        statement = (
            update(run_elicitations)
            .where(
                and_(
                    table.session_id == session_id,
                    table.elicitation_id == elicitation_id,
                    table.answer.is_(None),
                )
            )
            .values(answer=json.dumps(answer))
            .returning(table.worker)
        )
        return await self.db.write(lambda conn: conn.execute(statement).scalar())

    async def take_answer(self, session_id: str, elicitation_id: str) -> dict[str, Any] | None:
        table = run_elicitations.c
        statement = (
            delete(run_elicitations)
            .where(and_(table.session_id == session_id, table.elicitation_id == elicitation_id))
            .returning(table.answer)
        )
        answer = await self.db.write(lambda conn: conn.execute(statement).scalar())
        return None if answer is None else dict(json.loads(answer))

    # --- a worker that is gone -------------------------------------------------------------------------
    async def lost(self, lease: Lease, frame: dict[str, Any] | None) -> None:
        table = run_events.c

        def last(conn: Connection) -> int:
            conn.execute(delete(run_approvals).where(run_approvals.c.run_id == lease.run_id))
            conn.execute(delete(run_elicitations).where(run_elicitations.c.run_id == lease.run_id))
            found = conn.execute(select(func.max(table.seq)).where(table.run_id == lease.run_id)).scalar()
            return int(found or 0)

        seq = await self.db.write(last)
        if frame is not None:
            seq += 1
            frame = {**frame, "run_id": lease.run_id, "seq": seq}
            self._put(self._frame_item(lease.session_id, lease.run_id, seq, frame))
        await self._end(lease.session_id, lease.run_id, seq + 1)

    async def prune(self) -> None:
        keep, forever = self.keep_seconds, max(self.keep_seconds, FOREVER)

        def prune(conn: Connection) -> None:
            # Both halves read a partial index: the ends of runs, and the starts of runs that never
            # got an end (their worker died and nobody was there to end them).
            conn.execute(
                text(
                    "DELETE FROM run_events WHERE run_id IN (SELECT run_id FROM run_events WHERE "
                    "(frame IS NULL AND at < extract(epoch FROM clock_timestamp()) - :keep) OR "
                    "(seq = 1 AND at < extract(epoch FROM clock_timestamp()) - :forever))"
                ),
                {"keep": keep, "forever": forever},
            )

        await self.db.write(prune)
