"""Apply Alembic migrations to the configured database at start-up."""

from __future__ import annotations

from importlib import resources

from alembic import command
from alembic.config import Config
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine


def _config(connection: Connection) -> Config:
    config = Config()
    config.set_main_option("script_location", str(resources.files("navi.storage").joinpath("migrations")))
    config.attributes["connection"] = connection
    return config


async def upgrade(engine: AsyncEngine, revision: str = "head") -> None:
    """Bring the schema to `revision` (idempotent; safe to call on every start)."""
    async with engine.begin() as conn:
        await conn.run_sync(lambda sync_conn: command.upgrade(_config(sync_conn), revision))


async def current_revision(engine: AsyncEngine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    async with engine.connect() as conn:
        return await conn.run_sync(
            lambda sync_conn: MigrationContext.configure(sync_conn).get_current_revision()
        )
