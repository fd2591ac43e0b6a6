"""`GET /usage` on the database: one owner's stored answers summed (navi/sessions/usage.py).

One read: the owner's assistant rows of the display history whose JSON mentions `usage` (a LIKE
that skips the others without parsing them), within the dates, streamed off the cursor and summed
in Python, so memory stays flat however long the history. The sums are not done in SQL: the
message's metadata is JSON text, read by different functions on SQLite and PostgreSQL, and the
sums follow `Tally`'s rules (an estimate flagged, a cost counted only where there is one) in one
place for every store.
"""

from __future__ import annotations

import json
from datetime import datetime

from sqlalchemy import Connection, select

from navi.sessions.models import as_utc
from navi.sessions.usage import Tally, UsageReport
from navi.storage.schema import session_messages, sessions


def usage(conn: Connection, owner: str, since: datetime | None, until: datetime | None) -> UsageReport:
    since, until = (as_utc(when) if when is not None else None for when in (since, until))
    query = (
        select(session_messages.c.session_id, sessions.c.name, session_messages.c.data)
        .join(sessions, sessions.c.id == session_messages.c.session_id)
        .where(
            sessions.c.owner == owner,
            session_messages.c.role == "assistant",
            session_messages.c.data.contains('"usage"', autoescape=True),
        )
    )
    if since is not None:
        query = query.where(session_messages.c.created_at >= since)
    if until is not None:
        query = query.where(session_messages.c.created_at < until)
    tally = Tally(owner, since, until)
    for session_id, name, data in conn.execute(query):
        meta = json.loads(data).get("metadata")
        if isinstance(meta, dict):
            tally.add(session_id, name, meta)
    return tally.done()
