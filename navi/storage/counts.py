"""What BM25 weighs a user's words by on SQLite, from that user's own rows only, kept between searches.

The keyword searches SQLite ranks in Python — memory facts (`memory_sql.py`, `memory_facts`) and
documents (`document_search.py`) — weigh each word by how many of the searching user's rows there
are (N) and how many of them hold the word. (Search across conversations reads both from counts
its triggers keep: migration 0034.) Never everyone's rows, as
FTS5's own `bm25()` counts: then the order of one user's results would tell which words other
users wrote. Each table has an index on (owner, id) for this (e.g. migration 0022): a user's
rows are counted in it alone, and a word's matches are told whose they are without reading a row.

`Counts` keeps the numbers for its store, so a search does not count them again: the user's number
is counted whole on their first search and every `RECOUNT`th, and in between the rows indexed
since the last count (a few ids) are added — deletions count from the next whole count; a word's
number is counted again once the user's number has moved by more than 1% since (a word's weight
barely moves with a few more rows), so a word common in a search box's queries is counted once,
not on every keystroke. Nothing kept is another user's: what a user's search weighs by depends
on their own rows only. The user's number (`total`) is kept on PostgreSQL too (document search
weighs by it on both databases).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from typing import Any

from sqlalchemy import Connection, text

RECOUNT = 100  # searches of a user before their rows are counted whole again (deletions)
KEPT = 10_000  # users and words whose counts a store keeps between searches


def driver(conn: Connection) -> sqlite3.Connection:
    """The sqlite3 connection under `conn`, in the same transaction: the statements of a search
    go to it straight (through SQLAlchemy each would cost about as much as running it)."""
    raw = conn.connection.driver_connection
    assert isinstance(raw, sqlite3.Connection)
    return raw


class Counts:
    """A user's rows of `table` (it has an `owner` and an integer `id`, indexed together) and the
    words' counts among them, kept between searches by the store (see the module's docstring)."""

    def __init__(self, table: str) -> None:
        # The newest id, and the user's rows after id :after (all of them after -1), in the
        # (owner, id) index alone; in one statement, so both are of one snapshot.
        self._newer = f"""SELECT (SELECT coalesce(max(id), 0) FROM {table}),
            (SELECT count(*) FROM {table} WHERE owner = :owner AND id > :after)"""
        # Whether no row is another owner's, and the owner's first and last id (0, 0: none): each
        # a step down the (owner, id) index.
        self._span = f"""SELECT NOT EXISTS (SELECT 1 FROM {table} WHERE owner < :owner)
                AND NOT EXISTS (SELECT 1 FROM {table} WHERE owner > :owner),
            (SELECT coalesce(min(id), 0) FROM {table} WHERE owner = :owner),
            (SELECT coalesce(max(id), 0) FROM {table} WHERE owner = :owner)"""
        self._totals: dict[str, tuple[int, int, int]] = {}  # owner: (count, last id seen, searches)
        self._words: dict[tuple[str, str], tuple[int, int]] = {}  # (owner, word): (count, N then)
        self._lock = threading.Lock()

    def total(self, conn: Connection, owner: str) -> int:
        """The owner's rows (on SQLite or PostgreSQL)."""

        def newer(after: int) -> Any:  # (the newest id, rows after `after`)
            params = {"owner": owner, "after": after}
            if conn.dialect.name == "sqlite":
                return driver(conn).execute(self._newer, params).fetchone()
            return conn.execute(text(self._newer), params).one()

        with self._lock:
            known = self._totals.get(owner)
        if known is not None and known[2] < RECOUNT:  # top it up
            last, added = newer(known[1])
            if known[1] <= last:
                count, uses = known[0] + added, known[2] + 1
            else:  # the newest rows were deleted since: count whole
                known = None
        if known is None or known[2] >= RECOUNT:
            last, count = newer(-1)
            uses = 0
        with self._lock:
            if len(self._totals) > KEPT:
                self._totals.clear()
            self._totals[owner] = (count, last, uses)
        return int(count)

    def span(self, conn: Connection, owner: str) -> tuple[bool, int, int]:
        """Whether every row is the owner's (then counts over all rows are the owner's: cheaper
        statements give the same numbers), and the owner's first and last id. Read afresh, never
        kept: another user may write at any moment."""
        alone, first, last = driver(conn).execute(self._span, {"owner": owner}).fetchone()
        return bool(alone), int(first), int(last)

    def holding(self, owner: str, word: str, total: int, count: Callable[[], int]) -> int:
        """The owner's rows holding `word` (any key the caller counts by: an FTS5 expression, a
        stem): `count()` counts them among the owner's rows, unless a count made while the owner
        had about `total` rows (within 1%) is kept."""
        with self._lock:
            known = self._words.get((owner, word))
        if known is not None and abs(total - known[1]) * 100 <= total:
            return known[0]
        found = count()
        with self._lock:
            if len(self._words) > KEPT:
                self._words.clear()
            self._words[(owner, word)] = (found, total)
        return found
