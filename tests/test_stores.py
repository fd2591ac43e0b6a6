"""Every store built in one place (`navi.storage.stores.build_stores`): all on the one database, or
all in memory without one, with stores handed in used as they are."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from navi.memory.in_memory import InMemoryMemoryStore
from navi.schedules import Schedule
from navi.sessions.memory_store import InMemorySessionStore
from navi.storage import migrate
from navi.storage.database import Database, sqlite_url
from navi.storage.stores import Stores, build_stores


def _schedule(owner: str) -> Schedule:
    return Schedule.model_validate(
        {
            "owner": owner,
            "title": "t",
            "prompt": "p",
            "profile_id": "secretary",
            "kind": "interval",
            "every_seconds": 60,
            "next_run_at": datetime(2026, 1, 5, 9, tzinfo=UTC),
        }
    )


async def _write_each(stores: Stores) -> str:
    session = await stores.sessions.create("secretary", owner="alice", name="Kept")
    await stores.memory.upsert_fact("pets", "cat", "Miso", owner="alice")
    await stores.schedules.create(_schedule("alice"))
    await stores.users.add("alice")
    await stores.grants.grant("alice", "terminal", "ls")
    return session.id


async def _read_each(stores: Stores, session_id: str) -> list[object]:
    session = await stores.sessions.get(session_id, owner="alice")
    return [
        session.name if session else None,
        [f.value for f in await stores.memory.get_all_facts(owner="alice")],
        [s.owner for s in await stores.schedules.list(owner="alice")],
        [u.name for u in await stores.users.list()],
        await stores.grants.is_granted("alice", "terminal", "ls"),
    ]


async def test_every_store_keeps_its_data_in_the_one_database(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "navi.db")
    db = Database(url)
    await migrate.upgrade(db)
    try:
        session_id = await _write_each(build_stores(db, files_dir=str(tmp_path / "files")))
    finally:
        await db.dispose()
    again = Database(url)  # a new process, as it were: only what the database kept is there
    try:
        kept = await _read_each(build_stores(again, files_dir=str(tmp_path / "files")), session_id)
    finally:
        await again.dispose()
    assert kept == ["Kept", ["Miso"], ["alice"], ["alice"], True]


async def test_without_a_database_every_store_is_in_memory(tmp_path: Path) -> None:
    stores = build_stores(None, files_dir=str(tmp_path / "files"))
    session_id = await _write_each(stores)
    assert await _read_each(stores, session_id) == ["Kept", ["Miso"], ["alice"], ["alice"], True]
    fresh = build_stores(None, files_dir=str(tmp_path / "files"))
    assert await _read_each(fresh, session_id) == [None, [], [], [], False]


async def test_stores_handed_in_are_used_as_they_are(tmp_path: Path) -> None:
    sessions, memory = InMemorySessionStore(), InMemoryMemoryStore()
    db = Database(sqlite_url(tmp_path / "navi.db"))
    await migrate.upgrade(db)
    try:
        stores = build_stores(db, files_dir=str(tmp_path / "files"), sessions=sessions, memory=memory)
        assert stores.sessions is sessions and stores.memory is memory
        await stores.users.add("bob")  # the others are still the database's
        assert [u.name for u in await build_stores(db, files_dir="f").users.list()] == ["bob"]
    finally:
        await db.dispose()
    stores = build_stores(None, files_dir=str(tmp_path / "files"), sessions=sessions, memory=memory)
    assert stores.sessions is sessions and stores.memory is memory


async def test_documents_are_on_the_database_only(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "navi.db")
    db = Database(url)
    await migrate.upgrade(db)
    try:
        documents = build_stores(db, files_dir=str(tmp_path / "files")).documents
        assert documents is not None
        shelf = await documents.create_collection("alice", "Shelf")
        await documents.add_document("alice", shelf.id, "a.txt", data=b"kept")
    finally:
        await db.dispose()
    again = Database(url)
    try:
        documents = build_stores(again, files_dir=str(tmp_path / "files")).documents
        assert documents is not None
        (doc,) = await documents.list_documents("alice")
        assert await documents.document_bytes("alice", doc.id) == b"kept"
    finally:
        await again.dispose()
    assert build_stores(None, files_dir=str(tmp_path / "files")).documents is None
