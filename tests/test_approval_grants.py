"""One contract for remembered "always allow" answers, three stores: in memory, SQLite, PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from navi.agent.grants import GrantStore, InMemoryGrantStore
from navi.storage import migrate
from navi.storage.database import Database, postgres_url, sqlite_url
from navi.storage.grants import SqlGrantStore

STORES = ["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=STORES)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[GrantStore]:
    if request.param == "memory":
        yield InMemoryGrantStore()
        return
    if request.param == "sqlite":
        db = Database(sqlite_url(tmp_path / "grants.db"))
    else:
        db = Database(postgres_url(request.getfixturevalue("pg_url")))
    await migrate.upgrade(db)  # the migrations create the table, as on every start
    try:
        yield SqlGrantStore(db)
    finally:
        await db.dispose()


async def test_grant_check_list_and_revoke(store: GrantStore) -> None:
    assert not await store.is_granted("local", "terminal", "ls")
    await store.grant("local", "terminal", "ls")
    await store.grant("local", "terminal", "ls")  # twice is once
    await store.grant("local", "http_request", "")
    assert await store.is_granted("local", "terminal", "ls")
    assert not await store.is_granted("local", "terminal", "rm")  # per program
    assert not await store.is_granted("local", "terminal", "")  # a program is not the whole tool
    assert [(g.tool, g.subject) for g in await store.grants("local")] == [
        ("http_request", ""),
        ("terminal", "ls"),
    ]
    assert await store.revoke("local", "terminal", "ls")
    assert not await store.revoke("local", "terminal", "ls")
    assert not await store.is_granted("local", "terminal", "ls")


async def test_grants_belong_to_their_owner(store: GrantStore) -> None:
    await store.grant("alice", "code_exec", "")
    assert await store.is_granted("alice", "code_exec", "")
    assert not await store.is_granted("bob", "code_exec", "")
    assert await store.grants("bob") == []
    assert not await store.revoke("bob", "code_exec", "")
    assert await store.is_granted("alice", "code_exec", "")


async def test_concurrent_grants_of_one_answer_are_one_row(store: GrantStore) -> None:
    await asyncio.gather(*(store.grant("local", "terminal", "df") for _ in range(8)))
    assert [(g.owner, g.tool, g.subject) for g in await store.grants("local")] == [
        ("local", "terminal", "df")
    ]
