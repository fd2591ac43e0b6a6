"""The composition root owns the database: opened and migrated once, shared by both stores, disposed
once; read-only runtimes create nothing; configuration it cannot use is a `SetupError`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from navi.compose import SetupError, build_runtime
from navi.llm.messages import Message
from navi.memory.in_memory import InMemoryMemoryStore
from navi.sessions.memory_store import InMemorySessionStore
from navi.storage import migrate
from navi.storage.database import Database
from navi.storage.sessions import SqlSessionStore


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def test_one_database_migrated_once_shared_and_disposed_once(
    kind: str, make_settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    # The database first: the first PostgreSQL test of a run migrates the template it copies.
    url = request.getfixturevalue("pg_url") if kind == "postgres" else ""
    upgrades: list[str] = []
    real = migrate.upgrade

    async def counted(db: Database, revision: str = "head") -> None:
        upgrades.append(revision)
        await real(db, revision)

    monkeypatch.setattr(migrate, "upgrade", counted)  # every caller goes through the module
    rt = await build_runtime(make_settings(tools_dir=str(tmp_path / "tools"), database_url=url))
    assert upgrades == ["head"]  # once for the runtime, not once per store
    assert await migrate.current_revision(rt.db) == migrate.HEAD  # type: ignore[arg-type]
    assert rt.db is not None
    assert isinstance(rt.sessions, SqlSessionStore)
    assert rt.sessions.db is rt.db and rt.memory.db is rt.db  # type: ignore[attr-defined]
    session = await rt.sessions.create("secretary", name="Shared")
    await rt.memory.upsert_fact("pets", "cat", "Miso")
    # Closing a store leaves the database it was given alone: the other store still uses it.
    await rt.sessions.aclose()
    assert [f.value for f in await rt.memory.get_all_facts()] == ["Miso"]
    await rt.memory.aclose()
    got = await rt.sessions.get(session.id)
    assert got is not None and got.name == "Shared"
    await rt.aclose()
    assert rt.db.closed
    with pytest.raises(RuntimeError, match="disposed"):
        await rt.sessions.list()
    assert (tmp_path / "navi.db").exists() == (kind == "sqlite")


async def test_handed_in_session_store_and_sql_memory(make_settings, tmp_path: Path) -> None:
    """Tests hand in an in-memory session store; memory still gets the runtime's own database."""
    rt = await build_runtime(
        make_settings(tools_dir=str(tmp_path / "tools")), sessions=InMemorySessionStore()
    )
    try:
        assert rt.db is not None
        session = await rt.sessions.create("secretary")
        await rt.sessions.append(session.id, display=[Message.user("hi")], context=[Message.user("hi")])
        assert (await rt.sessions.list())[0].message_count == 1
        await rt.memory.upsert_fact("location", "home_city", "Oslo")
        assert (await rt.memory.search_facts("oslo"))[0].key == "home_city"
    finally:
        await rt.aclose()
    assert rt.db.closed


async def test_both_stores_handed_in_open_no_database(make_settings, tmp_path: Path) -> None:
    rt = await build_runtime(
        make_settings(tools_dir=str(tmp_path / "tools")),
        sessions=InMemorySessionStore(),
        memory=InMemoryMemoryStore(),
    )
    await rt.aclose()
    assert rt.db is None
    assert not (tmp_path / "navi.db").exists()


async def test_read_only_runtime_creates_nothing(make_settings, tmp_path: Path) -> None:
    settings = make_settings(db_path=str(tmp_path / "data" / "navi.db"), tools_dir=str(tmp_path / "tools"))
    rt = await build_runtime(settings, create_database=False, seed_tools=False)
    try:
        assert rt.db is None
        assert await rt.sessions.list() == [] and await rt.memory.get_all_facts() == []
    finally:
        await rt.aclose()
    assert os.listdir(tmp_path) == []

    writer = await build_runtime(settings, seed_tools=False)  # a command that writes creates it
    await writer.sessions.create("secretary", name="Kept")
    await writer.aclose()
    reader = await build_runtime(settings, create_database=False, seed_tools=False)
    try:
        assert [s.name for s in await reader.sessions.list()] == ["Kept"]
    finally:
        await reader.aclose()
    assert not (tmp_path / "tools").exists()


async def test_unusable_configuration_is_one_line_naming_the_setting(make_settings, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(SetupError) as err:
        await build_runtime(make_settings(db_path=str(blocker / "navi.db")))
    assert str(err.value) == (
        f"cannot open the database at {blocker / 'navi.db'}: {blocker} is a file, not a folder"
        " — set DB_PATH to a writable file"
    )
    with pytest.raises(SetupError) as err:
        await build_runtime(make_settings(tools_dir=str(blocker)))
    assert err.value.problem == f"cannot use the tools folder {blocker}: it is a file, not a folder"
    assert err.value.fix == "set TOOLS_DIR to a folder Navi can write"
