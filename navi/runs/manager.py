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

`RunManager` starts runs (`start`, `holding`) and owns the parts that do the rest, each with its
own small interface, which callers use directly:

- `slots` (`slots.py`): which run holds each session — this process's runs and the leases every
  process sees; `slots.busy()` is the one answer to "is this session busy?".
- `followers` (`follow.py`): `follow()`, the one way to read a run's frames wherever it runs;
  `watch()`, a session's runs for a page's socket.
- `controls` (`control.py`): stop, approvals, waiting for a run, wherever it runs.
- `queueing` (`queueing.py`): a message sent now or queued behind the running turn; edit, cancel.
- `driver` (`drive.py`): one turn driven in its task, from its announcement to its lease's release.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

from navi.agent.engine import Agent
from navi.agent.turns import DEFAULT_OPTIONS, FromQueue, NewMessage, Turn, TurnOptions, as_turn
from navi.llm.messages import Message
from navi.mcp.elicitation import Elicitations
from navi.runs import rows
from navi.runs.bus import Bus, LocalBus
from navi.runs.control import Controls
from navi.runs.drive import Driver, Observer
from navi.runs.feed import SessionFeed
from navi.runs.follow import Followers
from navi.runs.leases import Leases, MemoryLeases
from navi.runs.queue import MemoryQueue, MessageQueue, NothingQueued
from navi.runs.queueing import Queueing
from navi.runs.run import AgentRun, RunActive
from navi.runs.slots import Slots
from navi.telemetry import Telemetry


@dataclass(frozen=True)
class Heard:
    """What the bus tells this process (`bus.Handlers`), handed to the part it concerns."""

    followers: Followers
    controls: Controls
    feed: SessionFeed

    def remote_started(self, session_id: str, run_id: str, worker: str) -> None:
        self.followers.remote_started(session_id, run_id, worker)

    def remote_frame(self, run_id: str, seq: int, frame: dict[str, Any] | None, end: bool) -> None:
        self.followers.remote_frame(run_id, seq, frame, end)

    def resync(self) -> None:
        self.followers.resync()

    def control(self, message: dict[str, Any]) -> None:
        self.controls.received(message)

    def feed_note(self, note: dict[str, Any]) -> None:
        self.feed.remote(note)


class RunManager:
    """`leases`: where a session's lease is taken before a run starts in it — a database row
    (`SqlLeases`) every process on the database sees, or this process's memory (the default).
    `bus`: what carries frames and control messages to other processes (`LocalBus`: nothing;
    `PgBus`: PostgreSQL rows and NOTIFY). `telemetry`: where turns, frames and takeovers are
    counted and turns traced (by default an unexported one of its own). `queue`: where messages
    sent while a turn runs wait. `keep_seconds`: how long an ended run's frames are replayed to a
    client that reconnects after the end of a turn it followed. `elicitations`: where this
    process's runs wait for answers to MCP servers' questions (answered through any worker)."""

    def __init__(
        self,
        agent: Agent,
        leases: Leases | None = None,
        bus: Bus | None = None,
        telemetry: Telemetry | None = None,
        queue: MessageQueue | None = None,
        keep_seconds: float = 300.0,
        elicitations: Elicitations | None = None,
    ) -> None:
        self.agent = agent
        self.telemetry = telemetry or Telemetry()
        self.bus: Bus = bus or LocalBus()
        self.queue: MessageQueue = queue or MemoryQueue()  # messages sent while a turn runs
        # session_updated frames for every connection (of every worker, through a shared bus)
        self.feed = SessionFeed(agent.sessions, self.bus.feed if self.bus.shared else None)
        self.slots = Slots(leases or MemoryLeases(), self.bus, agent.sessions, self.telemetry, keep_seconds)
        self.followers = Followers(self.slots, self.bus)
        self.controls = Controls(self.slots, self.bus, agent.approvals, elicitations)
        self.queueing = Queueing(self.queue, self.feed, self.start, self._background)
        self.slots.freed = self.queueing.next
        # Told (session id, the run's purpose, event) of every event of the runs driven here.
        self.observers: list[Observer] = []
        self.driver = Driver(
            agent=agent,
            slots=self.slots,
            bus=self.bus,
            queue=self.queue,
            telemetry=self.telemetry,
            next=self.queueing.next,  # what waits runs when a turn has answered or ended
            background=self._background,
            observers=self.observers,
        )
        self._tasks: set[asyncio.Task[None]] = set()
        self._opened = False

    def _background(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def open(self) -> None:
        """Join the other processes: listen for what they send this worker, look after this
        worker's leases (renew them; clean up after workers that are gone, whose unanswered turns
        fail with `worker_lost`)."""
        await self.bus.open(Heard(self.followers, self.controls, self.feed))
        self._opened = True
        await self.slots.open()

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
        previous = self.slots.get(session_id)
        if previous is not None and not previous.answered:
            raise RunActive(session_id)
        run = AgentRun(
            session_id=session_id,
            watch=self.telemetry.frames(),
            branch=options.branch,
            purpose=options.purpose,
        )
        await self.slots.take(run, "turn", previous)
        if isinstance(turn, FromQueue):  # the session is this run's: nobody else takes from its queue now
            item = await self.queueing.first(session_id)
            if item is None:
                await self.slots.release(run)
                self.slots.give_back(run, previous)
                run.close()
                raise NothingQueued(session_id)
            turn = NewMessage(item.content, item.images, item.files, item.sender, item.message_id)
        if previous is not None:
            previous.stop_event.set()
        if self.bus.shared:
            run.sink = self.bus.published
            self.bus.started(run)
        run.task = asyncio.create_task(self.driver.drive(run, turn, options, previous))
        self.followers.started(run)
        return run

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
        previous = self.slots.get(session_id)
        if previous is not None and not previous.answered:
            raise RunActive(session_id)
        holder = AgentRun(session_id=session_id)
        await self.slots.take(holder, "store", previous)
        try:
            if previous is not None:
                previous.stop_event.set()
                await previous.finished.wait()
            await action()
        finally:
            await self.slots.release(holder)
            self.slots.ended(holder, keep=False)
            holder.finished.set()
            holder.settled.set()

    async def shutdown(self, grace: float = 10.0) -> None:
        """Stop every run cooperatively and wait for them to save what they have (each lets go of
        its lease as it ends); stop looking after the leases. Queued messages stay queued."""
        self.queueing.closing = True
        await self.slots.close()
        runs = list(self.slots.here.values())
        for run in runs:
            run.stop_event.set()
        tasks = [r.task for r in runs if r.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=grace)
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=grace)
        await self.followers.close()
        if self._opened:
            self._opened = False
            await self.bus.close()
