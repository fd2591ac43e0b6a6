"""What the PostgreSQL bus's writer sends in one statement (navi/runs/pg.py): frames appended to
`run_events`, the approvals and MCP questions those frames ask (rows of `run_approvals` and
`run_elicitations`, any worker answers them) and settle (rows deleted), and the NOTIFY
announcements — in that order, so a question's row exists before any follower sees it asked."""

from __future__ import annotations

import asyncio
from typing import Any

WRITE = """
WITH ev AS (
    INSERT INTO run_events (run_id, seq, session_id, frame, at)
    SELECT r, q, s, f, extract(epoch FROM clock_timestamp())::float8
    FROM unnest($1::text[], $2::int[], $3::text[], $4::text[]) AS t(r, q, s, f)
    ON CONFLICT DO NOTHING  -- a worker declared lost that comes back: its run was ended for it
), asked AS (
    INSERT INTO run_approvals (session_id, call_id, run_id, worker, view, created_at)
    SELECT s, c, r, w, v, extract(epoch FROM clock_timestamp())::float8
    FROM unnest($5::text[], $6::text[], $7::text[], $8::text[], $9::text[]) AS t(s, c, r, w, v)
    ON CONFLICT DO NOTHING
), answered AS (
    DELETE FROM run_approvals a USING unnest($10::text[], $11::text[]) AS t(s, c)
    WHERE a.session_id = t.s AND a.call_id = t.c
), questioned AS (
    INSERT INTO run_elicitations (session_id, elicitation_id, run_id, worker, view, created_at)
    SELECT s, e, r, w, v, extract(epoch FROM clock_timestamp())::float8
    FROM unnest($12::text[], $13::text[], $14::text[], $15::text[], $16::text[]) AS t(s, e, r, w, v)
    ON CONFLICT DO NOTHING
), settled AS (
    DELETE FROM run_elicitations q USING unnest($17::text[], $18::text[]) AS t(s, e)
    WHERE q.session_id = t.s AND q.elicitation_id = t.e
)
SELECT count(pg_notify(n.c, n.p)) FROM unnest($19::text[], $20::text[]) AS n(c, p)
"""

# A frame's row and announcement: (run_id, seq, session_id, frame JSON or None, channel, payload).
Row = tuple[str, int, str, str | None, str, str]
Key = tuple[str, str]  # (session, call or question id)
Asked = dict[Key, tuple[str, str, str]]  # → (run, worker, view)


class Batch:
    """What one statement writes and announces."""

    def __init__(self) -> None:
        self.events: tuple[list[str], list[int], list[str], list[str | None]] = ([], [], [], [])
        self.asked: Asked = {}  # approvals
        self.answered: set[Key] = set()
        self.questions: Asked = {}  # MCP servers' questions (elicitations)
        self.settled: set[Key] = set()
        self.notes: tuple[list[str], list[str]] = ([], [])
        self.done: list[asyncio.Future[None]] = []

    def add_row(self, row: Row) -> None:
        run_id, seq, session_id, body, channel, payload = row
        self.events[0].append(run_id)
        self.events[1].append(seq)
        self.events[2].append(session_id)
        self.events[3].append(body)
        self.notes[0].append(channel)
        self.notes[1].append(payload)

    @staticmethod
    def ask(into: Asked, key: Key, row: tuple[str, str, str]) -> None:
        into[key] = row

    @staticmethod
    def settle(asked: Asked, gone: set[Key], key: Key) -> None:
        """Asked and settled within one batch: never written; else its row is deleted."""
        if asked.pop(key, None) is None:
            gone.add(key)

    def args(self) -> list[Any]:
        return [
            *self.events,
            *_asked_args(self.asked, self.answered),
            *_asked_args(self.questions, self.settled),
            *self.notes,
        ]


def _asked_args(asked: Asked, settled: set[Key]) -> list[list[str]]:
    rows = list(asked.items())
    gone = [key for key in settled if key not in asked]
    return [
        [k[0] for k, _ in rows],
        [k[1] for k, _ in rows],
        [v[0] for _, v in rows],
        [v[1] for _, v in rows],
        [v[2] for _, v in rows],
        [k[0] for k in gone],
        [k[1] for k in gone],
    ]
