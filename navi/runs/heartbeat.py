"""This worker's leases renewed from a thread of its own, on a database connection of its own.

The run manager renews them on its event loop too, but that loop can be late — hundreds of streams
on a busy machine — and a live worker whose lease expires has its turns declared lost by another.
So the heartbeat does not depend on the loop: as long as the process runs, its leases stay fresh;
a process that is gone (killed, its machine down) or stopped whole (SIGSTOP, a frozen VM) stops
renewing and loses them.
"""

from __future__ import annotations

import asyncio
import threading

import structlog

from navi.runs.leases import BEAT, SqlLeases
from navi.storage.database import Database

log = structlog.stdlib.get_logger(__name__)


class Heartbeat:
    def __init__(self, url: str, worker: str, seconds: float) -> None:
        self.url = url
        self.worker = worker
        self.seconds = seconds
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self._beat()), name="navi-leases", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    async def _beat(self) -> None:
        db = Database(self.url, pool_size=1)
        leases = SqlLeases(db, worker=self.worker, seconds=self.seconds)
        try:
            while not self._stop.is_set():
                try:
                    await leases.renew()
                except Exception as exc:  # the next beat tries again
                    log.warning("runs.heartbeat_failed", error=str(exc))
                await asyncio.to_thread(self._stop.wait, max(0.05, self.seconds * BEAT))
        finally:
            await db.dispose()
