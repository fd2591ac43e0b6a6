"""One run: the frames it published, the clients following it, and how it ended.

A run publishes typed events (`StreamStart`, the agent's events), each stamped with the run's
`run_id` and a sequence number, and keeps them until it ends, so a client that connects mid-run — a
reloaded page — first receives the turn's frames so far and then the live ones. Each event is
turned into its JSON frame once, as it is published, for the edges (sockets, the bus between
workers); followers in this process (background jobs, schedules, notifications) subscribe with
`typed=True` and read the events themselves, matching on their class.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, cast

from pydantic import MISSING

from navi.agent.events import said_by_user
from navi.llm.messages import Message
from navi.protocol import ErrorEvent, RunEvent, StreamEnd, UserMessage

E = TypeVar("E", bound=RunEvent)

MAX_BACKLOG = 20_000  # frames queued for one slow client before it is dropped

_RUN_ID = re.compile(r"[0-9a-f]{16}")


def is_run_id(value: str) -> bool:
    """Run ids are 16 lowercase hex digits; anything else is refused before it reaches a query."""
    return bool(_RUN_ID.fullmatch(value))


class RunActive(RuntimeError):
    def __init__(self, session_id: str) -> None:
        super().__init__(f"a run is already in progress in session {session_id}; wait for it or stop it")


def user_message(message: Message) -> UserMessage:
    """What `stream_start` says about the user's message: enough for another window to draw it."""
    return said_by_user(message)


@dataclass(eq=False)
class Subscriber:
    """Where a run delivers frames for one client: straight into that client's outbox.

    The subscriber itself, put in the outbox, marks the end of its run's frames (the client then
    lets go of the run: `close`). A client that falls `MAX_BACKLOG` frames behind is dropped
    (`dropped` is set and the marker sent) rather than letting its queue grow without end.
    """

    queue: asyncio.Queue[Any] = field(default_factory=asyncio.Queue)
    dropped: bool = False
    typed: bool = False  # handed the events (followers in this process), not their JSON frames
    run_id: str = ""  # the run it follows
    # How it lets go of its run (set by the run it subscribed to; `close` calls it once).
    leave: Callable[[Subscriber], None] | None = field(default=None, repr=False)

    def put(self, frame: dict[str, Any] | RunEvent) -> None:
        if self.dropped:
            return
        if self.queue.qsize() >= MAX_BACKLOG:
            self.dropped = True
            self.queue.put_nowait(self)
            return
        self.queue.put_nowait(frame)

    def end(self) -> None:
        if not self.dropped:
            self.queue.put_nowait(self)

    def close(self) -> None:
        """Stop following: the run delivers nothing more here (once; again does nothing)."""
        leave, self.leave = self.leave, None
        if leave is not None:
            leave(self)


class Followable(Protocol):
    """A run a client follows, wherever it runs: one of this process (`AgentRun`) or of another
    worker (`RemoteRun`, navi/runs/remote.py). `subscribe` delivers its frames after `since` into
    `queue` (the events themselves with `typed`), then the live ones, then the subscriber itself
    as the end marker."""

    session_id: str
    run_id: str

    def subscribe(
        self, since: int = 0, queue: asyncio.Queue[Any] | None = None, *, typed: bool = False
    ) -> Subscriber: ...

    def unsubscribe(self, sub: Subscriber) -> None: ...


@dataclass(eq=False)
class AgentRun:
    session_id: str
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:16])
    stop_event: asyncio.Event = field(default_factory=asyncio.Event)
    frames: list[dict[str, Any]] = field(default_factory=list)  # as sent: JSON-ready
    events: list[RunEvent] = field(default_factory=list)  # the same, as published
    subscribers: set[Subscriber] = field(default_factory=set)
    task: asyncio.Task[None] | None = None
    result: StreamEnd | ErrorEvent | None = None  # the turn's answer, or the error it ended with
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    answered: bool = False  # stream_end is out: only post-turn work is left
    leased: bool = False  # it holds its session's lease
    # Set once the turn's outcome is known (its answer, an error, or the end of the run): a caller
    # waiting for the answer need not wait for post-turn work.
    settled: asyncio.Event = field(default_factory=asyncio.Event)
    # Where every frame also goes, for followers in other processes (`Bus.published`).
    sink: Callable[[AgentRun, dict[str, Any]], None] | None = None
    # Told of every frame as it is sent (metrics: `Telemetry.frames`).
    watch: Callable[[dict[str, Any]], None] | None = None
    # An edit's or a regeneration's branch point, named by `stream_start` (`parent_id`; None: a new
    # first message); MISSING for a turn that goes on the active branch.
    branch: str | MISSING | None = MISSING
    # What the run is for, for notifications: a page's message ("answer"), a schedule
    # ("reminder"), a background job ("job"), a channel's message ("channel": it answers there), a
    # program waiting on the answer ("api": the OpenAI-compatible API, the MCP server).
    purpose: str = "answer"

    def publish(self, event: E) -> E:
        """Stamp `event` with the run's id and its number, send it, and return it as stamped."""
        stamped = cast(E, event.model_copy(update={"run_id": self.run_id, "seq": len(self.frames) + 1}))
        frame = stamped.frame()
        self.frames.append(frame)
        self.events.append(stamped)
        for sub in list(self.subscribers):
            sub.put(stamped if sub.typed else frame)
        if self.watch is not None:
            self.watch(frame)
        if self.sink is not None:
            self.sink(self, frame)
        return stamped

    def subscribe(
        self, since: int = 0, queue: asyncio.Queue[Any] | None = None, *, typed: bool = False
    ) -> Subscriber:
        sub = Subscriber(queue, typed=typed) if queue is not None else Subscriber(typed=typed)
        sub.run_id, sub.leave = self.run_id, self.unsubscribe
        for item in (self.events if typed else self.frames)[since:]:
            sub.put(item)
        if self.finished.is_set():
            sub.end()
        else:
            self.subscribers.add(sub)
        return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        self.subscribers.discard(sub)

    def close(self) -> None:
        """The run's frames are over: every follower lets go of it."""
        self.finished.set()
        self.settled.set()
        for sub in list(self.subscribers):
            sub.end()
        self.subscribers.clear()
