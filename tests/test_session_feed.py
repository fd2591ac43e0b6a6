"""The session feed delivers each session's newest state last: a frame built from a read that
started before a later change (a rename, a deletion) is not delivered after that change's frame."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from navi.runs.feed import SessionFeed
from navi.sessions.store import SessionChange


@dataclass
class Row:
    owner: str
    name: str
    profile_id: str = "default"
    pinned: bool = False
    folder: str | None = None
    archived: bool = False
    temporary: bool = False


class SlowSessions:
    """Enough of a session store for the feed: `get` waits until the test lets that read finish,
    and returns the row as it was when the read began (a read of the database before a write)."""

    def __init__(self) -> None:
        self.rows: dict[str, Row] = {}
        self.gates: list[asyncio.Event] = []

    def on_change(self, listener: Callable[[SessionChange], None]) -> None:
        self.listener = listener

    async def get(self, session_id: str, display: bool = True) -> Row | None:
        seen = self.rows.get(session_id)
        snapshot = None if seen is None else replace(seen)
        gate = asyncio.Event()
        self.gates.append(gate)
        await gate.wait()
        return snapshot


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_deletion_is_the_last_frame_even_when_an_earlier_read_ends_after_it() -> None:
    sessions = SlowSessions()
    feed = SessionFeed(sessions)  # type: ignore[arg-type]
    frames: list[dict[str, Any]] = []
    feed.join(frames.append, "ann")
    sessions.rows["s1"] = Row("ann", "Bergen, packed")

    feed.changed(SessionChange("s1"))  # a rename: its read of the session starts…
    await settle()
    del sessions.rows["s1"]
    feed.changed(SessionChange("s1", deleted=True))  # …and the session is deleted meanwhile
    await settle()
    sessions.gates[0].set()  # the rename's read, from before the deletion, answers last
    await settle()

    assert [(f["session_id"], f["deleted"]) for f in frames] == [("s1", True)]


async def test_two_renames_in_a_row_deliver_the_second_name_last() -> None:
    sessions = SlowSessions()
    feed = SessionFeed(sessions)  # type: ignore[arg-type]
    frames: list[dict[str, Any]] = []
    feed.join(frames.append, "ann")
    sessions.rows["s1"] = Row("ann", "First")
    feed.changed(SessionChange("s1"))
    await settle()
    sessions.rows["s1"] = Row("ann", "Second")
    feed.changed(SessionChange("s1"))
    await settle()
    sessions.gates[1].set()
    await settle()
    sessions.gates[0].set()
    await settle()

    assert [f["name"] for f in frames] == ["Second"]
    # Later changes of the same session are delivered again (the bookkeeping is cleared).
    sessions.rows["s1"] = Row("ann", "Third")
    feed.changed(SessionChange("s1"))
    await settle()
    sessions.gates[2].set()
    await settle()
    assert [f["name"] for f in frames] == ["Second", "Third"]
    assert feed._newest == {}


async def test_other_owners_and_other_sessions_are_not_held_back() -> None:
    sessions = SlowSessions()
    feed = SessionFeed(sessions)  # type: ignore[arg-type]
    ann: list[dict[str, Any]] = []
    bob: list[dict[str, Any]] = []
    feed.join(ann.append, "ann")
    feed.join(bob.append, "bob")
    sessions.rows["a"] = Row("ann", "Ann's")
    sessions.rows["b"] = Row("bob", "Bob's")
    feed.changed(SessionChange("a"))
    feed.changed(SessionChange("b"))
    await settle()
    for gate in sessions.gates:
        gate.set()
    await settle()
    assert [f["name"] for f in ann] == ["Ann's"]
    assert [f["name"] for f in bob] == ["Bob's"]
