"""Sending a message to a session whether or not a turn runs there: it runs at once, or waits.

`Queueing` is the part of `RunManager` (navi/runs/manager.py) that decides: with no turn going the
message starts one; while one runs it waits in the session's queue (navi/runs/queue.py), to run
when the turn ends (`"queue"`) or to reach the turn's next model call (`"steer"`). Every connection
of the session's owner, on every worker, hears of it (`queued`, `queue_cancelled` through the
session feed); the message leaves the queue with its `stream_start` or `steered` run frame.
"""

from __future__ import annotations

from dataclasses import dataclass

from navi.agent.engine import Agent
from navi.agent.turns import DEFAULT_OPTIONS, NewMessage, Turn, TurnOptions
from navi.llm.messages import new_id
from navi.protocol import QueueCancelled, QueueMode
from navi.protocol import Queued as QueuedFrame
from navi.runs.feed import SessionFeed
from navi.runs.queue import MessageQueue, Queued
from navi.runs.run import AgentRun, RunActive


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
    agent: Agent
    queue: MessageQueue
    feed: SessionFeed

    async def start(
        self, session_id: str, turn: Turn | str, options: TurnOptions = DEFAULT_OPTIONS
    ) -> AgentRun:
        raise NotImplementedError  # RunManager.start

    async def start_next(self, session_id: str) -> AgentRun | None:
        raise NotImplementedError  # RunManager.start_next

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
                return Sent(run=await self.start(session_id, message, options))
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

    async def edit_queued(self, session_id: str, owner: str, message_id: str, content: str) -> Queued:
        """New text for a waiting message (`NotQueued` when it no longer waits)."""
        item = await self.queue.edit(session_id, message_id, content)
        if item is None:
            raise NotQueued(message_id)
        waiting = [w.message_id for w in await self.queue.waiting(session_id)]
        if message_id in waiting:
            self._announce(item, waiting.index(message_id) + 1, owner)
        return item

    async def cancel_queued(self, session_id: str, owner: str, message_id: str) -> Queued:
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
            files=[f.get("name", "") for f in item.files],
            images=len(item.images),
        )
        self.feed.publish(frame.frame(), owner)
