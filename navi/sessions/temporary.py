"""Temporary chats (issue 49): sessions made with `temporary` are left out of the list and of
memory extraction, and the page that opened one deletes it when it closes it (another
conversation opened, a new one begun, the tab closed). What a page could not delete — the browser
crashed, the network was gone — is deleted here once it has been idle for `idle_hours`.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

import structlog

from navi.llm.messages import utcnow
from navi.sessions.models import as_utc
from navi.sessions.store import SessionStore

log = structlog.stdlib.get_logger(__name__)
IDLE_HOURS = 24
SWEEP_SECONDS = 600


async def sweep(store: SessionStore, *, idle_hours: float = IDLE_HOURS) -> int:
    """Delete every temporary session idle for `idle_hours`; how many were deleted."""
    cutoff = utcnow() - timedelta(hours=idle_hours)
    gone = 0
    for info in await store.list():
        if info.temporary and as_utc(info.last_active) < cutoff and await store.delete(info.id):
            gone += 1
    if gone:
        log.info("sessions.temporary_swept", sessions=gone)
    return gone


async def sweep_loop(store: SessionStore, *, idle_hours: float = IDLE_HOURS) -> None:
    while True:
        try:
            await sweep(store, idle_hours=idle_hours)
        except Exception as exc:  # a database hiccup: the next sweep tries again
            log.warning("sessions.temporary_sweep_failed", error=str(exc))
        await asyncio.sleep(SWEEP_SECONDS)
