"""The run manager: at most one agent run per session, broadcast to every connected client.

`stream_start` carries the user's message, so every window on the session can draw it, and
acknowledges it: it goes out only once the engine has committed the message, so a message a client
saw acknowledged survives a crash (kill -9, power loss) of the server. Each frame is kept until the
run ends (`run.py`), so a client that connects mid-run replays it. A run does not depend on any client: it
goes on when all of them leave, and its messages are saved as they complete. Stop is the run's
stop event; a run task is never cancelled. When a run ends it is removed, with its frames.

Once a run has answered (`stream_end`), what is left is post-turn work (a summary, naming). A new
message does not wait for it: starting the next run stops the answered one, whose post-turn work
is abandoned at once, and the new run begins when the old one has let go of the session.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from functools import partial
from typing import Any

import structlog

from navi.agent.engine import Agent
from navi.agent.events import ErrorEvent, StreamEnd, StreamStopped
from navi.agent.said import signed
from navi.agent.turns import (
    DEFAULT_OPTIONS,
    Continue,
    FromQueue,
    NewMessage,
    Research,
    Retry,
    RunControl,
    Turn,
    TurnOptions,
    as_turn,
)
from navi.llm.errors import LLMError
from navi.llm.messages import Message
from navi.protocol import RunEvent, StreamStart
from navi.runs import rows
from navi.runs.bus import Bus, Control, LocalBus
from navi.runs.control import RunControls
from navi.runs.feed import SessionFeed
from navi.runs.follow import Followers
from navi.runs.heartbeat import Heartbeat
from navi.runs.leases import Lease, LeaseKind, Leases, MemoryLeases, SqlLeases, sleep_beat
from navi.runs.lost import lost_error, record_lost
from navi.runs.queue import MemoryQueue, MessageQueue, NothingQueued, Queued
from navi.runs.queueing import Queueing
from navi.runs.run import AgentRun, RunActive, user_message
from navi.sessions.store import SessionNotFound
from navi.telemetry import Telemetry

log = structlog.stdlib.get_logger(__name__)
MAX_KEPT_RUNS = 200  # ended runs kept for a reconnect at most, the oldest let go first

HANDOVER_SECONDS = 10.0  # how long a start waits for another worker's answered turn to let go
PRUNE_BEATS = 25  # old run frames are pruned every this many heartbeats


class RunManager(RunControls, Queueing):
    """`leases`: where a session's lease is taken before a run starts in it — a database row
    (`SqlLeases`) every process on the database sees, or this process's memory (the default).
    `bus`: what carries frames and control messages to other processes (`LocalBus`: nothing;
    `PgBus`: PostgreSQL rows and NOTIFY). `telemetry`: where turns, frames and takeovers are
    counted and turns traced (by default an unexported one of its own)."""

    def __init__(
        self,
        agent: Agent,
        leases: Leases | None = None,
        bus: Bus | None = None,
        telemetry: Telemetry | None = None,
        queue: MessageQueue | None = None,
        keep_seconds: float = 300.0,
    ) -> None:
        self.agent = agent
        # Ended runs of this process, their frames replayed to a client that reconnects after the
        # end of a turn it followed (`ended_run`), for this long after they ended.
        self.keep_seconds = keep_seconds
        self._kept: dict[str, tuple[AgentRun, float]] = {}
        self.queue: MessageQueue = queue or MemoryQueue()  # messages sent while a turn runs
        self.telemetry = telemetry or Telemetry()
        self.leases: Leases = leases or MemoryLeases()
        self.bus: Bus = bus or LocalBus()
        # session_updated frames for every connection (of every worker, through a shared bus)
        self.feed = SessionFeed(agent.sessions, self.bus.feed if self.bus.shared else None)
        self.followers = Followers(self.leases, self.bus)
        self._runs: dict[str, AgentRun] = {}
        self._keeper: asyncio.Task[None] | None = None
        self._heartbeat: Heartbeat | None = None
        self._opened = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._closing = False
        # Told (session id, the run's purpose, event) of every event of the runs driven here:
        # notifications (navi/push/notifier.py). An observer returns at once and never raises.
        self.observers: list[Callable[[str, str, RunEvent], None]] = []

    def _keep_ended(self, run: AgentRun) -> None:
        now = asyncio.get_running_loop().time()
        for run_id, (_, ended) in list(self._kept.items()):  # oldest first
            if now - ended < self.keep_seconds and len(self._kept) < MAX_KEPT_RUNS:
                break
            del self._kept[run_id]
        if self.keep_seconds > 0:
            self._kept[run.run_id] = (run, now)

    def _background(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- this worker among others ----------------------------------------------------------------
    async def open(self) -> None:
        """Join the other processes: listen for what they send this worker, look after this
        worker's leases (renew them; clean up after workers that are gone, whose unanswered turns
        fail with `worker_lost`) — once at once, so a Navi started again after a crash finds the
        sessions its predecessor held free."""
        await self.bus.open(self)
        self._opened = True
        await self._tend()
        if self.bus.shared and isinstance(self.leases, SqlLeases):  # renewed however busy the loop is
            self._heartbeat = Heartbeat(self.leases.db.url, self.leases.worker, self.leases.seconds)
            self._heartbeat.start()
        self._keeper = asyncio.create_task(self._keep())

    async def _keep(self) -> None:
        beats = 0
        while True:
            await sleep_beat(self.leases)
            await self._tend()
            beats += 1
            if beats % PRUNE_BEATS == 0:
                try:
                    await self.bus.prune()
                except Exception as exc:
                    log.warning("runs.prune_failed", error=str(exc))

    async def _tend(self) -> None:
        try:
            leased = [run for run in self._runs.values() if run.leased]
            held = await self.leases.renew()
            for run in leased:
                if (
                    run.run_id not in held
                    and self._runs.get(run.session_id) is run
                    and not run.finished.is_set()
                ):
                    # Declared lost by another worker (this one stalled past its lease): the turn
                    # was ended for it, and the session may have a new one. Stop, write nothing more.
                    log.warning("runs.lease_lost", session_id=run.session_id, run_id=run.run_id)
                    run.stop_event.set()
            for lease in await self.leases.expired():
                await self._recover(lease)
        except Exception as exc:  # a database hiccup: the next beat tries again
            log.warning("runs.leases_unreachable", error=str(exc))

    async def _recover(self, lease: Lease) -> bool:
        """Free the session of a run whose worker is gone (once, whoever gets there first): a
        turn it had not answered is recorded as failed with `worker_lost` (Retry offers it), and
        whoever follows the run gets that error as its last frame."""
        if not await self.leases.take(lease):
            return False
        log.warning("runs.worker_lost", session_id=lease.session_id, run_id=lease.run_id, worker=lease.worker)
        self.telemetry.metrics.lease_takeovers.labels(kind=lease.kind).inc()
        if lease.kind == "turn":
            if not lease.answered:
                with contextlib.suppress(SessionNotFound):
                    await record_lost(self.agent.sessions, lease.session_id)
            # An answered turn's followers had its answer: its frames just end.
            await self.bus.lost(lease, None if lease.answered else lost_error().frame())
            self._background(self._next(lease.session_id))  # what waited behind it runs now
        return True

    async def _take(
        self, session_id: str, run_id: str, kind: LeaseKind, replacing: str | None = None
    ) -> None:
        """Take the session's lease for `run_id`, or raise `RunActive`. A lease left by a worker
        that is gone is recovered first; another worker's answered turn is stopped (its post-turn
        work abandoned, as a new message does here) and its lease waited for."""
        for _ in range(3):  # the holder may let go between the two looks: look again
            if await self.leases.acquire(session_id, run_id, kind, replacing=replacing) is not None:
                return
            holder = await self.leases.holder(session_id)
            if holder is None:
                continue
            if holder.worker == self.leases.worker:
                if holder.run_id in {r.run_id for r in self._runs.values()}:
                    break  # a run of this worker holds it
                replacing = holder.run_id  # a run of this worker that ended and is letting go
            elif await self._recover(holder):
                replacing = None
            elif holder.answered and await self.bus.send(
                holder.worker, Control("stop", session_id, holder.run_id)
            ):
                deadline = asyncio.get_running_loop().time() + HANDOVER_SECONDS
                while asyncio.get_running_loop().time() < deadline:
                    await asyncio.sleep(0.02)
                    if await self.leases.acquire(session_id, run_id, kind) is not None:
                        return
                break
            else:
                break
        raise RunActive(session_id)

    async def start(
        self, session_id: str, turn: Turn | str, options: TurnOptions = DEFAULT_OPTIONS
    ) -> AgentRun:
        """Start a run of `turn` (navi/agent/turns.py; a string is a new message). Returns
        immediately; raises `RunActive` if the session has a run that has not answered yet.

        A run that has already answered does not count as busy: it is stopped, and the new run
        starts once it has finished. A `Retry`'s `stream_start` names the stored message and
        carries `retry: true`; a `Continue`'s carries `continues` and no message. A `FromQueue` turn
        runs the first message waiting in the session's queue, taken from it once the session is
        this run's (`NothingQueued` when none waits by then). `options.branch` is named in
        `stream_start`; `options.purpose` is told to the observers with its frames.
        """
        turn = as_turn(turn)
        previous = self._runs.get(session_id)
        if previous is not None and not previous.answered:
            raise RunActive(session_id)
        run = AgentRun(
            session_id=session_id,
            watch=self.telemetry.frames(),
            branch=options.branch,
            purpose=options.purpose,
        )
        self._runs[session_id] = run  # held here while the lease is taken: a second start is busy
        try:
            await self._take(session_id, run.run_id, "turn", previous.run_id if previous else None)
        except BaseException:
            self._give_back(session_id, run, previous)
            raise
        run.leased = True
        if isinstance(turn, FromQueue):  # the session is this run's: nobody else takes from its queue now
            item = await self._first_queued(session_id, run, previous)
            turn = NewMessage(item.content, item.images, item.files, item.sender, item.message_id)
        if previous is not None:
            previous.stop_event.set()
        if self.bus.shared:
            run.sink = self.bus.published
            self.bus.started(run)
        run.task = asyncio.create_task(self._observed(run, self._drive(run, turn, options, previous)))
        self.followers.started(run)
        return run

    async def _first_queued(self, session_id: str, run: AgentRun, previous: AgentRun | None) -> Queued:
        """Take the first message waiting in the session, for `run` (which holds the session)."""
        for waiting in await self.queue.waiting(session_id):
            item = await self.queue.take(session_id, waiting.message_id)
            if item is not None:  # else cancelled in between: the next one
                return item
        await self._release(run)
        self._give_back(session_id, run, previous)
        run.close()
        raise NothingQueued(session_id)

    async def start_next(self, session_id: str) -> AgentRun | None:
        """Run the first message waiting in the session's queue, unless a turn runs (whose end
        runs it) or none waits."""
        if self._closing or not await self.queue.waiting(session_id):
            return None
        try:
            return await self.start(session_id, FromQueue())
        except (RunActive, NothingQueued):
            return None

    async def _next(self, session_id: str) -> None:
        try:
            await self.start_next(session_id)
        except Exception:  # the queue waits for the next turn's end, or the next message
            log.exception("runs.queue_not_started", session_id=session_id)

    async def append(self, session_id: str, messages: Sequence[Message]) -> None:
        """Store messages in the session without answering them (`"respond": false`), holding the
        session's slot (`holding`): rows written mid-turn would land between the turn's own."""

        await self.holding(
            session_id, lambda: rows.append_unanswered(self.agent.sessions, session_id, messages)
        )

    async def holding(self, session_id: str, action: Callable[[], Awaitable[Any]]) -> None:
        """Run `action` (a change to the session's rows) while no turn runs in the session.

        Refused with `RunActive` while a turn is answering. An answered run's post-turn work is
        stopped first, as a new message does, since a summary rewrites the context it read before.
        While `action` runs, the session's slot is held, so no turn starts in between.
        """
        previous = self._runs.get(session_id)
        if previous is not None and not previous.answered:
            raise RunActive(session_id)
        holder = AgentRun(session_id=session_id)
        self._runs[session_id] = holder
        try:
            await self._take(session_id, holder.run_id, "store", previous.run_id if previous else None)
        except BaseException:
            self._give_back(session_id, holder, previous)
            raise
        try:
            if previous is not None:
                previous.stop_event.set()
                await previous.finished.wait()
            await action()
        finally:
            await self._release(holder)
            if self._runs.get(session_id) is holder:
                del self._runs[session_id]
            holder.finished.set()
            holder.settled.set()

    def _give_back(self, session_id: str, run: AgentRun, previous: AgentRun | None) -> None:
        """A start that could not take the lease leaves the session as it found it."""
        if self._runs.get(session_id) is run:
            if previous is not None and not previous.finished.is_set():
                self._runs[session_id] = previous
            else:
                del self._runs[session_id]

    async def _release(self, run: AgentRun) -> None:
        try:
            await self.leases.release(run.session_id, run.run_id)
        except Exception as exc:  # it expires on its own once this worker stops renewing it
            log.warning("runs.lease_not_released", session_id=run.session_id, error=str(exc))

    async def _observed(self, run: AgentRun, drive: Coroutine[Any, Any, None]) -> None:
        """`drive`, the run counted as running and traced as one turn."""
        with self.telemetry.turn(run.session_id, run.run_id) as span:
            await drive
            self.telemetry.turn_ended(span, run.result)

    async def _drive(
        self, run: AgentRun, turn: Turn, options: TurnOptions, previous: AgentRun | None
    ) -> None:
        """Drive the engine's turn, announcing it first as its kind is announced."""
        try:
            on_stored = None
            match turn:
                case NewMessage():  # published once the message is committed
                    user = signed(
                        Message.user(
                            turn.content, images=list(turn.images), metadata={"files": list(turn.files)}
                        ),
                        turn.sender,
                    )
                    user.id = turn.message_id
                    start = StreamStart(message=user_message(user), parent_id=run.branch)

                    def on_stored() -> None:
                        run.publish(start)

                case Research(content=content, message_id=message_id):  # like a message: once committed
                    asked = Message.user(content)
                    asked.id = message_id
                    start = StreamStart(message=user_message(asked), parent_id=run.branch)

                    def on_stored() -> None:
                        run.publish(start)

                case Retry():
                    failed = await rows.retried_message(self.agent.sessions, run.session_id)
                    run.publish(StreamStart(retry=True, message=failed, parent_id=run.branch))
                case Continue(answer_id=answer_id):  # nothing to store first: acknowledged at once
                    run.publish(StreamStart(message=None, continues=answer_id))
            if previous is not None:
                await previous.finished.wait()
            control = RunControl(
                stop_event=run.stop_event,
                on_stored=on_stored,
                steering=partial(self.queue.take_steering, run.session_id),  # holds no run
            )
            stream = self.agent.run_stream(run.session_id, turn, options, control)
            async for unstamped in stream:
                event = run.publish(unstamped)
                if isinstance(event, StreamEnd) or (isinstance(event, ErrorEvent) and run.result is None):
                    run.result = event
                over = isinstance(event, StreamEnd | StreamStopped)
                if over:  # for the user: a new message stops what is left (post-turn work, a
                    run.answered = True  # stopped turn's last writes) and starts once it is done
                self._observe(run, event)
                if over:
                    self._background(self._answered(run))  # the turn goes on meanwhile
                    self._background(self._next(run.session_id))  # what waits runs now
                if run.result is not None:
                    run.settled.set()
        except SessionNotFound:
            self._end_with(
                run,
                ErrorEvent(message=f"session {run.session_id} no longer exists", code="session_not_found"),
            )
        except LLMError as exc:
            self._end_with(run, ErrorEvent.of(exc))
        except Exception as exc:  # the run must always end with a frame and free its slot
            log.exception("run.crashed", session_id=run.session_id)
            self._end_with(run, ErrorEvent(message=f"internal error: {type(exc).__name__}: {exc}"))
        finally:
            # Gone from here at once; the lease follows, after the run's last frame is out to other
            # workers. A start meanwhile takes it over (`_take`: a lease of this worker that no run
            # of it holds).
            if self._runs.get(run.session_id) is run:
                del self._runs[run.session_id]
            run.close()
            self._keep_ended(run)
            if run.sink is not None:
                with contextlib.suppress(Exception):  # followers elsewhere: the lease's expiry ends it
                    await self.bus.ended(run)
            await self._release(run)
            if not run.answered:  # ended without an answer: what waits runs all the same
                self._background(self._next(run.session_id))

    def _observe(self, run: AgentRun, event: RunEvent) -> None:
        for observer in self.observers:
            try:
                observer(run.session_id, run.purpose, event)
            except Exception:
                log.exception("runs.observer_failed", session_id=run.session_id)

    async def _answered(self, run: AgentRun) -> None:
        try:
            await self.leases.answered(run.session_id, run.run_id)
        except Exception as exc:  # other workers take it as still answering: busy a little longer
            log.warning("runs.lease_not_marked", session_id=run.session_id, error=str(exc))

    def _end_with(self, run: AgentRun, error: ErrorEvent) -> None:
        """A run that ended on an exception: its error is its result too (a REST caller waiting
        for the answer gets the error, not an empty "stopped")."""
        event = run.publish(error)
        self._observe(run, event)
        if run.result is None:
            run.result = event

    async def shutdown(self, grace: float = 10.0) -> None:
        """Stop every run cooperatively and wait for them to save what they have (each lets go of
        its lease as it ends); stop looking after the leases. Queued messages stay queued."""
        self._closing = True
        if self._keeper is not None:
            self._keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._keeper
            self._keeper = None
        if self._heartbeat is not None:
            await asyncio.to_thread(self._heartbeat.stop)
            self._heartbeat = None
        for run in list(self._runs.values()):
            run.stop_event.set()
        tasks = [r.task for r in self._runs.values() if r.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=grace)
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=grace)
        await self.followers.close()
        if self._opened:
            self._opened = False
            await self.bus.close()
