"""Settings → the database: its URL, how it is described, and opening it migrated.

Every entry point opens the database here: the runtime (`runtime.py`), the store-only commands
(`stores.py`), `navi users` and `navi channels`; `navi doctor` and `navi serve` probe it first.
Whatever makes it unusable is a `SetupError` naming the setting to fix.
"""

from __future__ import annotations

import asyncio

from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

from navi.compose.problems import SetupError, absolute, file_problem, reason
from navi.config import Settings
from navi.storage import migrate
from navi.storage.database import Database, postgres_url, sqlite_url

DB_FIX = "set DB_PATH to a writable file"
PG_FIX = "check DATABASE_URL and that PostgreSQL is running"
DB_ERRORS = (OSError, TimeoutError, SQLAlchemyError)


def database_url(settings: Settings) -> str:
    return postgres_url(settings.database_url) if settings.database_url else sqlite_url(settings.db_path)


def describe_database(settings: Settings) -> str:
    if settings.database_url:
        return make_url(settings.database_url).render_as_string(hide_password=True)
    return f"SQLite at {absolute(settings.db_path)}"


def _unusable(settings: Settings, exc: BaseException) -> SetupError:
    if settings.database_url:
        where = describe_database(settings)
        return SetupError(f"cannot reach the database at {where}: {reason(exc)}", PG_FIX)
    return SetupError(f"cannot open the database at {absolute(settings.db_path)}: {reason(exc)}", DB_FIX)


def check_db_path(settings: Settings) -> None:
    """Raise `SetupError` when DB_PATH (SQLite only) cannot be created or written."""
    if settings.database_url:
        return
    problem = file_problem(settings.db_path)
    if problem:
        raise SetupError(f"cannot open the database at {absolute(settings.db_path)}: {problem}", DB_FIX)


async def open_database(
    settings: Settings, *, create: bool = True, connect_timeout: float = 10.0
) -> Database | None:
    """The database, migrated to the current schema; the caller disposes it.

    Without `create`, a SQLite file that does not exist yet is not made: None comes back instead.
    Whatever makes the database unusable is raised as a `SetupError` naming the setting to fix.
    """
    if not settings.database_url:
        path = absolute(settings.db_path)
        if not create and not path.exists():
            return None
        check_db_path(settings)
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # a new folder: the owner's only
        except OSError as exc:
            raise _unusable(settings, exc) from None
    db = Database(database_url(settings), connect_timeout=connect_timeout)
    try:
        await migrate.upgrade(db)
    except DB_ERRORS as exc:
        await db.dispose()
        raise _unusable(settings, exc) from None
    return db


async def probe_database(settings: Settings, *, connect_timeout: float) -> str:
    """Say whether the database would open, creating nothing; raise `SetupError` when it would not."""
    check_db_path(settings)
    if not settings.database_url and not absolute(settings.db_path).exists():
        return f"no database at {absolute(settings.db_path)} yet; `navi serve` creates it"
    db = Database(database_url(settings), connect_timeout=connect_timeout)
    try:
        await asyncio.wait_for(db.ping(), connect_timeout + 1)
    except DB_ERRORS as exc:
        raise _unusable(settings, exc) from None
    finally:
        await db.dispose()
    return f"{describe_database(settings)} opens"
