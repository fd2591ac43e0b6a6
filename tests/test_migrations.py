"""`migrate.HEAD`, which lets a start skip Alembic on a database already up to date, is the newest
migration; an up-to-date database is left alone, an older one is brought up to it."""

from __future__ import annotations

from pathlib import Path

from navi.storage import migrate
from navi.storage.database import Database, sqlite_url


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
