"""Apply Alembic migrations to the configured database at start-up.

A database already at `HEAD` (every start but the first after an upgrade) is recognised with one
query, without importing Alembic (about 0.2 s of every `navi` command); tests/test_migrations.py
checks `HEAD` against the migrations themselves.
"""

from __future__ import annotations

import sys
import time
from importlib import resources
from typing import TYPE_CHECKING

from sqlalchemy import Connection, text
from sqlalchemy.exc import SQLAlchemyError

from navi.storage.database import Database

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATION_LOCK = 0x4E415649  # "NAVI": the advisory lock PostgreSQL migrations take
HEAD = "0040"  # the newest revision in migrations/versions: update it with each new migration


PROGRESS_ROWS = 20_000  # a migration that works through more rows than this prints how far it is


def progress(what: str, done: int, total: int, began: float) -> None:
    """A line on standard error telling how far a long migration step is (`began`: its
    `time.monotonic()`), so an upgrade of a large database does not look hung."""
    took = time.monotonic() - began
    line = f"navi: upgrading the database: {what}: {done:,} of {total:,} ({took:.0f} s)"
    print(line, file=sys.stderr, flush=True)


def _config() -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(resources.files("navi.storage").joinpath("migrations")))
    return config


def head() -> str:
    """The newest revision the migrations bring a database to, as Alembic finds it."""
    from alembic.script import ScriptDirectory

    found = ScriptDirectory.from_config(_config()).get_current_head()
    assert found is not None
    return found


def _upgrade(connection: Connection, revision: str) -> None:
    from alembic import command

    if connection.dialect.name == "postgresql":
        # Several processes starting at once on one database (workers, hosts): one migrates, the
        # others wait for it and then find nothing to do. (SQLite's BEGIN IMMEDIATE does the same.)
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
    config = _config()
    config.attributes["connection"] = connection
    command.upgrade(config, revision)


def _stamped(connection: Connection) -> str | None:
    """The revision the database records, without Alembic; None for a database without one."""
    try:
        with connection.begin_nested():  # a missing table must not spoil PostgreSQL's transaction
            rows = connection.execute(text("SELECT version_num FROM alembic_version")).all()
    except SQLAlchemyError:
        return None
    return rows[0][0] if len(rows) == 1 else None


async def upgrade(db: Database, revision: str = "head") -> None:
    """Bring the schema to `revision` (idempotent; safe on every start, and from several processes
    at once)."""
    if revision in ("head", HEAD) and await db.read(_stamped) == HEAD:
        return
    await db.write(lambda conn: _upgrade(conn, revision))


async def current_revision(db: Database) -> str | None:
    from alembic.runtime.migration import MigrationContext

    return await db.read(lambda conn: MigrationContext.configure(conn).get_current_revision())
