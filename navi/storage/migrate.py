"""Apply Alembic migrations to the configured database at start-up."""

from __future__ import annotations

from importlib import resources

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection

from navi.storage.database import Database


def _config(connection: Connection, revision: str) -> None:
    config = Config()
    config.set_main_option("script_location", str(resources.files("navi.storage").joinpath("migrations")))
    config.attributes["connection"] = connection
    command.upgrade(config, revision)


async def upgrade(db: Database, revision: str = "head") -> None:
    """Bring the schema to `revision` (idempotent; safe on every start, and from several processes)."""
    await db.write(lambda conn: _config(conn, revision))


async def current_revision(db: Database) -> str | None:
    return await db.read(lambda conn: MigrationContext.configure(conn).get_current_revision())
