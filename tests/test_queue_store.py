"""The queue of messages sent while a turn runs (navi/runs/queue.py), the same in memory, on SQLite
and on PostgreSQL: order, positions, edits, takes once, steering taken apart, the limit."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Connection, text

from navi.llm.attached import AttachedFile
from navi.protocol import Sender
from navi.runs.queue import MAX_WAITING, MemoryQueue, MessageQueue, Queued, QueueFull, SqlQueue
from navi.storage import migrate
from navi.storage.database import Database
from navi.storage.sessions import SqlSessionStore
from tests.helpers.session_stores import url_of


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def queue(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[MessageQueue, list[str]]]:
    if request.param == "memory":
        yield MemoryQueue(), ["s1", "s2"]
        return
    db = Database(url_of(request.param, tmp_path, request))
    await migrate.upgrade(db)
    store = SqlSessionStore(db)
    sessions = [(await store.create("secretary")).id for _ in range(2)]
    try:
        yield SqlQueue(db), sessions
    finally:
        await db.dispose()


SESSION = "0a1b2c3d-0000-4000-8000-000000000020"


def item(session_id: str, message_id: str, content: str, mode: str = "queue") -> Queued:
    return Queued(message_id, session_id, mode, content, [], [AttachedFile(name="a.txt", path="/x/a.txt")])  # type: ignore[arg-type]


async def test_messages_wait_in_order_and_leave_once(queue: tuple[MessageQueue, list[str]]) -> None:
    q, (s1, s2) = queue
    assert await q.add(item(s1, "m1", "one")) == 1
    assert await q.add(item(s1, "m2", "two", "steer")) == 2
    assert await q.add(item(s2, "m9", "elsewhere")) == 1  # each session has its own queue
    assert await q.add(item(s1, "m3", "three")) == 3
    assert [w.message_id for w in await q.waiting(s1)] == ["m1", "m2", "m3"]
    assert (await q.waiting(s1))[0].files == [AttachedFile(name="a.txt", path="/x/a.txt")]

    edited = await q.edit(s1, "m3", "three, edited")
    assert edited is not None and edited.content == "three, edited"
    assert await q.edit(s2, "m3", "not this session's") is None
    assert await q.edit(s1, "nope", "x") is None

    steering = await q.take_steering(s1)
    assert [(w.message_id, w.content) for w in steering] == [("m2", "two")]
    assert await q.take_steering(s1) == []

    taken = await q.take(s1, "m1")
    assert taken is not None and taken.content == "one"
    assert await q.take(s1, "m1") is None  # once
    assert [(w.message_id, w.content) for w in await q.waiting(s1)] == [("m3", "three, edited")]
    assert [w.message_id for w in await q.waiting(s2)] == ["m9"]


async def test_a_session_holds_at_most_max_waiting(queue: tuple[MessageQueue, list[str]]) -> None:
    q, (s1, _s2) = queue
    for i in range(MAX_WAITING):
        await q.add(item(s1, f"m{i}", str(i)))
    with pytest.raises(QueueFull):
        await q.add(item(s1, "one-too-many", "x"))
    assert len(await q.waiting(s1)) == MAX_WAITING


async def test_a_waiting_message_keeps_its_name_location_and_metadata(
    queue: tuple[MessageQueue, list[str]],
) -> None:
    """Migration 0021's `sender`: what a client said about a message that waits is stored with it
    when it runs, whichever worker takes it."""
    q, (s1, _s2) = queue
    said = Sender(name="alice", location="Paris", metadata={"device": "phone", "n": [1, 2]})
    await q.add(Queued("m1", s1, "queue", "hello", [], [], sender=said))
    await q.add(item(s1, "m2", "nobody said who"))
    first, second = await q.waiting(s1)
    assert first.sender == said and second.sender is None
    taken = await q.take(s1, "m1")
    assert taken is not None and taken.sender == said


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def test_migration_0021_keeps_rows_written_before_it(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A session and a waiting message stored at 0019 read as before: no system prompt of their
    own, nobody named; a message that waits after it keeps its sender."""
    db = Database(url_of(kind, tmp_path, request, empty=True))
    try:
        await migrate.upgrade(db, "0020")
        now = datetime.now(UTC)

        def old_rows(conn: Connection) -> None:
            conn.execute(
                text(
                    "INSERT INTO sessions (id, owner, profile_id, pinned, context_token_count, display_count,"
                    " context_count, planning_count, context_rev, created_at, last_active)"
                    " VALUES (:id, 'local', 'secretary', false, 0, 0, 0, 0, 0, :now, :now)"
                ),
                {"id": SESSION, "now": now},
            )
            conn.execute(
                text(
                    "INSERT INTO queued_messages"
                    " (message_id, session_id, mode, content, images, files, created_at)"
                    " VALUES ('m1', :id, 'queue', 'from before', '[]', '[]', :now)"
                ),
                {"id": SESSION, "now": now},
            )

        await db.write(old_rows)
        await migrate.upgrade(db)
        assert await migrate.current_revision(db) == migrate.head()
        session = await SqlSessionStore(db).get(SESSION)
        assert session is not None and session.system_prompt is None
        queue = SqlQueue(db)
        (before,) = await queue.waiting(SESSION)
        assert (before.content, before.sender) == ("from before", None)
        await queue.add(Queued("m2", SESSION, "queue", "after", [], [], sender=Sender(name="alice")))
        assert [w.sender for w in await queue.waiting(SESSION)] == [None, Sender(name="alice")]
    finally:
        await db.dispose()
