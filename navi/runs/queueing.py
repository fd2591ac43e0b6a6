"""Sending a message to a session whether or not a turn runs there: it runs at once, or waits.

`Queueing` decides, for the run manager (navi/runs/manager.py, which lends it its `start`): with no
turn going the message starts one; while one runs it waits in the session's queue
(navi/runs/queue.py), to run when the turn ends (`"queue"`, `next`) or to reach the turn's next
model call (`"steer"`). Every connection
of the session's owner, on every worker, hears of it (`queued`, `queue_cancelled` through the
session feed); the message leaves the queue with its `stream_start` or `steered` run frame.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import structlog

from navi.agent.turns import DEFAULT_OPTIONS, FromQueue, NewMessage, Turn, TurnOptions
from navi.llm.messages import new_id
from navi.protocol import QueueCancelled, QueueMode
from navi.protocol import Queued as QueuedFrame
from navi.runs.feed import SessionFeed
from navi.runs.queue import MessageQueue, NothingQueued, Queued
from navi.runs.run import AgentRun, RunActive

log = structlog.stdlib.get_logger(__name__)

Start = Callable[[str, Turn, TurnOptions], Awaitable[AgentRun]]


class NotQueued(LookupError):
    def __init__(self, message_id: str) -> None:
        super().__init__(f"message {message_id} no longer waits: it ran, steered, or was cancelled")


@dataclass(frozen=True)
class Sent:
    """Where a sent message went: a run that answers it now, or its place in the queue."""

    run: AgentRun | None = None
    queued: Queued | None = None
    position: int = 0


class Queueing:
    """`queue`: where messages wait; `feed`: where the owner's connections hear of them; `start`:
    how a turn starts (`RunManager.start`, `RunActive` while one runs); `background`: where the
    next waiting message is started without the caller waiting for it."""

    def __init__(
        self,
        queue: MessageQueue,
        feed: SessionFeed,
        start: Start,
        background: Callable[[Coroutine[Any, Any, None]], None],
    ) -> None:
        self.queue = queue
        self.feed = feed
        self._start = start
        self._background = background
        self.closing = False  # shutting down: nothing waiting starts any more

    async def start_next(self, session_id: str) -> AgentRun | None:
        """Run the first message waiting in the session's queue, unless a turn runs (whose end
        runs it) or none waits."""
        if self.closing or not await self.queue.waiting(session_id):
            return None
        try:
            return await self._start(session_id, FromQueue(), DEFAULT_OPTIONS)
        except (RunActive, NothingQueued):
            return None

    async def first(self, session_id: str) -> Queued | None:
        """Take the first message waiting in the session (for a run that holds it), if any."""
        for waiting in await self.queue.waiting(session_id):
            item = await self.queue.take(session_id, waiting.message_id)
            if item is not None:  # else cancelled in between: the next one
                return item
        return None

    def next(self, session_id: str) -> None:
        """A turn of the session ended (or let go of it): what waits there runs, in the background."""
        self._background(self._next(session_id))

    async def _next(self, session_id: str) -> None:
        try:
            await self.start_next(session_id)
        except Exception:  # the queue waits for the next turn's end, or the next message
            log.exception("runs.queue_not_started", session_id=session_id)

    async def send(
        self,
        session_id: str,
        owner: str,
        message: NewMessage | str,
        *,
        mode: QueueMode = "queue",
        options: TurnOptions = DEFAULT_OPTIONS,
    ) -> Sent:
        """Answer the message now, or queue it behind the running turn (and what waits already).
        Raises `QueueFull` when too many wait."""
        message = NewMessage(message) if isinstance(message, str) else message
        if not await self.queue.waiting(session_id):
            try:
                return Sent(run=await self._start(session_id, message, options))
            except RunActive:
                pass
        item = Queued(
            new_id(),
            session_id,
            mode,
            message.content,
            list(message.images),
            list(message.files),
            sender=message.sender,
        )
        position = await self.queue.add(item)
        self._announce(item, position, owner)
        # The turn may have ended between the start refused above and the row written: run it then.
        started = await self.start_next(session_id)
        return Sent(run=started, queued=item, position=position)

    async def edit(self, session_id: str, owner: str, message_id: str, content: str) -> Queued:
        """New text for a waiting message (`NotQueued` when it no longer waits)."""
        item = await self.queue.edit(session_id, message_id, content)
        if item is None:
            raise NotQueued(message_id)
        waiting = [w.message_id for w in await self.queue.waiting(session_id)]
        if message_id in waiting:
            self._announce(item, waiting.index(message_id) + 1, owner)
        return item

    async def cancel(self, session_id: str, owner: str, message_id: str) -> Queued:
        """Cancel a waiting message (`NotQueued` when it no longer waits)."""
        item = await self.queue.take(session_id, message_id)
        if item is None:
            raise NotQueued(message_id)
        frame = QueueCancelled(session_id=session_id, message_id=message_id).frame()
        self.feed.publish(frame, owner)
        return item

    def _announce(self, item: Queued, position: int, owner: str) -> None:
        frame = QueuedFrame(
            session_id=item.session_id,
            message_id=item.message_id,
            position=position,
            mode=item.mode,
            content=item.content,
            files=[f.name for f in item.files],
            images=len(item.images),
        )
        self.feed.publish(frame.frame(), owner)
