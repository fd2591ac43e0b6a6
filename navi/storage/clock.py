"""The database's own clock, for rows several processes (maybe on several machines) compare."""

from __future__ import annotations

from sqlalchemy import Float, cast, func, literal_column
from sqlalchemy.sql.elements import ColumnElement


def db_now(dialect: str) -> ColumnElement[float]:
    """The database's clock in seconds since the epoch: `clock_timestamp()` on PostgreSQL (the
    moment of the statement, not of its transaction), `julianday('now')` on SQLite."""
    if dialect == "sqlite":
        return cast(literal_column("(julianday('now') - 2440587.5) * 86400.0"), Float)
    return cast(func.extract("epoch", func.clock_timestamp()), Float)
