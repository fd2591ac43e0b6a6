"""Apply Alembic migrations to the configured database at start-up."""

from __future__ import annotations

from importlib import resources

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, text

from navi.storage.database import Database

MIGRATION_LOCK = 0x4E415649  # "NAVI": the advisory lock PostgreSQL migrations take


def _location() -> str:
    return str(resources.files("navi.storage").joinpath("migrations"))


def head() -> str:
    """The newest revision the migrations bring a database to."""
    config = Config()
    config.set_main_option("script_location", _location())
    found = ScriptDirectory.from_config(config).get_current_head()
    assert found is not None
    return found


def _config(connection: Connection, revision: str) -> None:
    if connection.dialect.name == "postgresql":
        # Several processes starting at once on one database (workers, hosts): one migrates, the
        # others wait for it and then find nothing to do. (SQLite's BEGIN IMMEDIATE does the same.)
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
    config = Config()
    config.set_main_option("script_location", _location())
    config.attributes["connection"] = connection
    command.upgrade(config, revision)


async def upgrade(db: Database, revision: str = "head") -> None:
    """Bring the schema to `revision` (idempotent; safe on every start, and from several processes
    at once)."""
    await db.write(lambda conn: _config(conn, revision))


async def current_revision(db: Database) -> str | None:
    return await db.read(lambda conn: MigrationContext.configure(conn).get_current_revision())
