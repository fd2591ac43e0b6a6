"""Messages sent while a turn runs, kept until they run: the queue of each session.

A message sent while a turn runs is not refused. Its sender chooses: `"queue"` (the default) runs
it as the next turn once the running one ends, in the order sent; `"steer"` hands it to the running
turn's next model call as the user's words (a steering message the turn ends before using runs
like a queued one). Until then it is a row here, under the id it will be stored with, shown as
queued by every client, and can be edited or cancelled.

`SqlQueue` keeps the rows in `queued_messages` (migration 0017), so every worker on the database
sees the same queue: the worker that runs the turn takes the steering messages, whichever worker
ends a turn starts the next queued one, and a reloaded page lists what still waits.
`MemoryQueue` is the same for one process without a database (tests).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal, Protocol

from sqlalchemy import Connection, and_, delete, func, insert, select, update

from navi.llm.attached import AttachedFile
from navi.protocol import Sender
from navi.storage.database import Database
from navi.storage.schema import queued_messages

Mode = Literal["queue", "steer"]
MODES: tuple[Mode, ...] = ("queue", "steer")
MAX_WAITING = 50  # messages waiting in one session; more is refused (`queue_full`)


class QueueFull(RuntimeError):
    def __init__(self, session_id: str) -> None:
        super().__init__(
            f"{MAX_WAITING} messages already wait in session {session_id}; wait for the turn to end"
        )


class NothingQueued(RuntimeError):
    def __init__(self, session_id: str) -> None:
        super().__init__(f"no message waits in session {session_id}")


@dataclass(frozen=True)
class Queued:
    """A message waiting in a session: `message_id` is the id it is stored under when it runs."""

    message_id: str
    session_id: str
    mode: Mode
    content: str
    images: list[str] = field(default_factory=list)
    files: list[AttachedFile] = field(default_factory=list)
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    sender: Sender | None = None  # its name, location and metadata, stored with it when it runs

    def view(self, position: int) -> dict[str, Any]:
        """What `GET /sessions/{id}/queue` lists (images are counted, not sent back)."""
        return {
            "message_id": self.message_id,
            "mode": self.mode,
            "content": self.content,
            "position": position,
            "files": [f.name for f in self.files],
            "images": len(self.images),
            "created_at": self.created_at.isoformat(),
        }


class MessageQueue(Protocol):
    async def add(self, item: Queued) -> int:
        """Put `item` at the end of its session's queue; its position there (from 1). Raises
        `QueueFull` past `MAX_WAITING`."""
        ...

    async def waiting(self, session_id: str) -> list[Queued]:
        """The session's waiting messages, in the order they were sent."""
        ...

    async def edit(self, session_id: str, message_id: str, content: str) -> Queued | None:
        """New text for a waiting message; None when it no longer waits."""
        ...

    async def take(self, session_id: str, message_id: str) -> Queued | None:
        """Remove a waiting message and return it (None: it no longer waits) — once: of two
        callers, one gets it."""
        ...

    async def take_steering(self, session_id: str) -> list[Queued]:
        """Remove and return the session's steering messages, in order."""
        ...


class MemoryQueue:
    """Queues of one process, in memory."""

    def __init__(self) -> None:
        self._items: dict[str, list[Queued]] = {}

    async def add(self, item: Queued) -> int:
        items = self._items.setdefault(item.session_id, [])
        if len(items) >= MAX_WAITING:
            raise QueueFull(item.session_id)
        items.append(item)
        return len(items)

    async def waiting(self, session_id: str) -> list[Queued]:
        return list(self._items.get(session_id, []))

    async def edit(self, session_id: str, message_id: str, content: str) -> Queued | None:
        items = self._items.get(session_id, [])
        for i, item in enumerate(items):
            if item.message_id == message_id:
                items[i] = replace(item, content=content)
                return items[i]
        return None

    async def take(self, session_id: str, message_id: str) -> Queued | None:
        items = self._items.get(session_id, [])
        for i, item in enumerate(items):
            if item.message_id == message_id:
                return items.pop(i)
        return None

    async def take_steering(self, session_id: str) -> list[Queued]:
        items = self._items.get(session_id, [])
        steering = [i for i in items if i.mode == "steer"]
        self._items[session_id] = [i for i in items if i.mode != "steer"]
        return steering


def _item(row: Any) -> Queued:
    return Queued(
        message_id=row.message_id,
        session_id=row.session_id,
        mode=row.mode,
        content=row.content,
        images=json.loads(row.images),
        files=[AttachedFile.from_json(f) for f in json.loads(row.files)],
        created_at=row.created_at,
        sender=Sender.model_validate_json(row.sender) if row.sender else None,
    )


class SqlQueue:
    """Queues as rows of `queued_messages`, on SQLite or PostgreSQL."""

    def __init__(self, db: Database, now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.db = db
        self.now = now

    async def add(self, item: Queued) -> int:
        table = queued_messages.c
        row = {
            "message_id": item.message_id,
            "session_id": item.session_id,
            "mode": item.mode,
            "content": item.content,
            "images": json.dumps(item.images),
            "files": json.dumps([f.as_json() for f in item.files]),  # {name, path} objects
            "created_at": self.now(),
            "sender": item.sender.model_dump_json(exclude_none=True) if item.sender else None,
        }
        count = select(func.count()).where(table.session_id == item.session_id)

        def put(conn: Connection) -> int:
            before = int(conn.execute(count).scalar_one())
            if before >= MAX_WAITING:
                raise QueueFull(item.session_id)
            conn.execute(insert(queued_messages).values(**row))
            return before + 1

        return await self.db.write(put)

    async def waiting(self, session_id: str) -> list[Queued]:
        table = queued_messages.c
        query = select(queued_messages).where(table.session_id == session_id).order_by(table.id)
        return await self.db.read(lambda conn: [_item(r) for r in conn.execute(query)])

    async def edit(self, session_id: str, message_id: str, content: str) -> Queued | None:
        table = queued_messages.c
        which = and_(table.session_id == session_id, table.message_id == message_id)

        def change(conn: Connection) -> Queued | None:
            if not conn.execute(update(queued_messages).where(which).values(content=content)).rowcount:
                return None
            row = conn.execute(select(queued_messages).where(which)).first()
            return None if row is None else _item(row)

        return await self.db.write(change)

    async def take(self, session_id: str, message_id: str) -> Queued | None:
        table = queued_messages.c
        which = and_(table.session_id == session_id, table.message_id == message_id)
        statement = delete(queued_messages).where(which).returning(*queued_messages.c)

        def pop(conn: Connection) -> Queued | None:
            row = conn.execute(statement).first()
            return None if row is None else _item(row)

        return await self.db.write(pop)

    async def take_steering(self, session_id: str) -> list[Queued]:
        table = queued_messages.c
        which = and_(table.session_id == session_id, table.mode == "steer")

        def pop(conn: Connection) -> list[Queued]:
            rows = list(conn.execute(select(queued_messages).where(which).order_by(table.id)))
            if rows:
                conn.execute(delete(queued_messages).where(table.id.in_([r.id for r in rows])))
            return [_item(r) for r in rows]

        return await self.db.write(pop)
