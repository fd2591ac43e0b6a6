"""The documents store on each database, for the tests of the store and of what uses it: import
`url` and `store` into a test module (they are pytest fixtures, parametrized over SQLite and the
run's PostgreSQL cluster)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from navi.storage.database import postgres_url, sqlite_url
from navi.storage.documents import SqlDocumentStore

KINDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=KINDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return sqlite_url(tmp_path / "d.db")
    return postgres_url(request.getfixturevalue("pg_url"))


@pytest.fixture
async def store(url: str) -> AsyncIterator[SqlDocumentStore]:
    s = SqlDocumentStore.at(url)
    await s.open()
    try:
        yield s
    finally:
        await s.aclose()
