"""`migrate.HEAD`, which lets a start skip Alembic on a database already up to date, is the newest
migration; an up-to-date database is left alone, an older one is brought up to it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Connection, insert, inspect, select, text

from navi.storage import migrate
from navi.storage.database import Database, sqlite_url
from navi.storage.schema import memory_facts
from tests.helpers.session_stores import url_of


def test_head_is_the_newest_migration() -> None:
    assert migrate.head() == migrate.HEAD, "a new migration: set migrate.HEAD to its revision"


async def test_a_database_at_head_is_recognised_and_an_older_one_upgraded(tmp_path: Path) -> None:
    db = Database(sqlite_url(tmp_path / "navi.db"))
    try:
        assert await db.read(migrate._stamped) is None  # a new file: no version table yet
        await migrate.upgrade(db, "0014")
        assert await db.read(migrate._stamped) == "0014"
        await migrate.upgrade(db)
        assert await migrate.current_revision(db) == migrate.HEAD
        await migrate.upgrade(db)  # nothing to do
        assert await migrate.current_revision(db) == migrate.HEAD
    finally:
        await db.dispose()


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def test_a_facts_vector_moves_to_the_last_column_and_is_kept(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Migration 0040: the stored vector, about 4 KB, leaves the middle of the row (where SQLite put
    every column after it on overflow pages) for its end; each fact keeps its own."""
    db = Database(url_of(kind, tmp_path, request, empty=True))
    try:
        await migrate.upgrade(db, "0039")
        now = datetime(2026, 1, 2, tzinfo=UTC)
        rows = [
            {
                "owner": "local",
                "category": "pets",
                "key": f"pet_{n}",
                "value": f"Rex {n}",
                "created_at": now,
                "updated_at": now,
                "confirmations": 1,
                "source": "added",
                "embedding": vector,
            }
            for n, vector in enumerate(["m|" + "A" * 4000, None, "m|BBBB"])
        ]
        await db.write(lambda c: c.execute(insert(memory_facts), rows))
        await migrate.upgrade(db)

        def columns(conn: Connection) -> list[str]:
            return [c["name"] for c in inspect(conn).get_columns("memory_facts")]

        assert (await db.read(columns))[-1] == "embedding"
        stored = await db.read(
            lambda c: c.execute(
                select(memory_facts.c.key, memory_facts.c.embedding, memory_facts.c.retired_at).order_by(
                    memory_facts.c.id
                )
            ).all()
        )
        assert [tuple(r) for r in stored] == [
            ("pet_0", "m|" + "A" * 4000, None),
            ("pet_1", None, None),
            ("pet_2", "m|BBBB", None),
        ]
        hits = await db.read(lambda c: c.execute(text(FTS_CHECK[db.dialect])).scalar())
        assert hits == 3  # the full-text index is untouched
    finally:
        await db.dispose()


FTS_CHECK = {
    "sqlite": "SELECT count(*) FROM memory_facts_fts WHERE memory_facts_fts MATCH 'rex'",
    "postgresql": "SELECT count(*) FROM memory_facts WHERE search @@ to_tsquery('english', 'rex')",
}
