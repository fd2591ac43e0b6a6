"""The session store on memory, SQLite and PostgreSQL, for tests that run once on each."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from navi.sessions.memory_store import InMemorySessionStore
from navi.sessions.store import SessionStore
from navi.storage.database import postgres_url, sqlite_url
from navi.storage.sessions import SqlSessionStore

STORES = ["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def url_of(kind: str, tmp_path: Path, request: pytest.FixtureRequest, *, empty: bool = False) -> str:
    """The database URL of an SQL kind ("sqlite": a file in `tmp_path`; "postgres": the suite's
    throwaway cluster, at the newest schema unless `empty`, for a test that migrates it itself)."""
    if kind == "sqlite":
        return sqlite_url(tmp_path / "navi.db")
    return postgres_url(request.getfixturevalue("pg_empty_url" if empty else "pg_url"))


@asynccontextmanager
async def opened_store(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[SessionStore]:
    store: SessionStore = (
        InMemorySessionStore() if kind == "memory" else SqlSessionStore.at(url_of(kind, tmp_path, request))
    )
    await store.open()
    try:
        yield store
    finally:
        await store.aclose()
