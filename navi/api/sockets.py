"""Open WebSockets and the credentials they were let in with: a socket whose browser signed out, or
whose user was removed, is closed with code 4401 (`CLOSE_SIGNED_OUT`), however long it has been open.

A socket's handshake is checked like any request (navi/api/security.py), and its scope carries how
to check the same credentials again (`navi.api.identity.recheck_of`). From then on:

- Before the socket acts on a frame from its client it checks them again, so nothing sent with a
  revoked sign-in or a removed user's token runs a turn, a tool or an approval — on any worker,
  whatever the database (websocket.py).
- A sign-out (`POST /logout`) or a user's removal (`navi users remove`, on PostgreSQL) is announced
  (`SessionFeed.revoked`; NOTIFY on the feed's channel reaches every worker): each worker checks
  its sockets at once and closes those no longer let in (a proxy's removal ends the sockets it
  opened for the users it named, too).
- Every `every` seconds (`NAVI_SOCKET_RECHECK_SECONDS`, 5) every open socket is checked: what no
  announcement tells — `navi users remove` beside a SQLite Navi runs in another process; a sign-in
  that expired; an announcement missed while the listening connection was down — closes it
  within that time.

Sockets let in by the same credentials share one check per round (the credential's digest names
them, never the credential itself), and a check is one indexed read at most: the owner's token is
compared in memory, a sign-in and a user's token are rows.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass

import structlog

from navi.api.identity import Recheck

log = structlog.stdlib.get_logger(__name__)

CLOSE_SIGNED_OUT = 4401  # the sign-in was revoked or the user removed: sign in again, don't reconnect
SIGNED_OUT = "signed out: this sign-in or user no longer exists"
RECHECK_SECONDS = 5.0


@dataclass(eq=False)
class Watched:
    """One open socket: whose it is, its credentials' check, and how to close it (signed out)."""

    user: str
    credential: str
    recheck: Recheck
    close: Callable[[], None]


class OpenSockets:
    """This process's open WebSockets, checked again on announcements and every `every` seconds."""

    def __init__(self, every: float = RECHECK_SECONDS) -> None:
        self.every = every
        self._open: set[Watched] = set()
        self._tasks: set[asyncio.Task[int]] = set()
        self._loop: asyncio.Task[None] | None = None

    def add(self, user: str, recheck: Recheck, credential: str, close: Callable[[], None]) -> Watched:
        watched = Watched(user, credential, recheck, close)
        self._open.add(watched)
        return watched

    def discard(self, watched: Watched) -> None:
        self._open.discard(watched)

    def revoked(self, user: str) -> None:
        """A sign-in or a token of `user` was revoked: check the sockets now — all of them, not
        only `user`'s: a proxy's removal ends the sockets it opened for the users it named, and a
        round costs one check per credential, like the periodic one."""
        if not self._open:
            return
        task = asyncio.get_running_loop().create_task(self.check())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def check(self, user: str | None = None) -> int:
        """Check the sockets of `user` (None: all) again, one check per credential, and close
        those no longer let in; how many were closed. A check that fails (the database is
        unreachable) closes nothing: the next round tries again, and frames are checked anyway."""
        groups: dict[tuple[str, str], list[Watched]] = {}
        for watched in list(self._open):
            if user is None or watched.user == user:
                groups.setdefault((watched.user, watched.credential), []).append(watched)
        closed = 0
        for sockets in groups.values():
            try:
                still = await sockets[0].recheck()
            except Exception as exc:
                log.warning("ws.recheck_failed", user=sockets[0].user, error=str(exc))
                continue
            if still:
                continue
            for watched in sockets:
                if watched in self._open:
                    self._open.discard(watched)
                    watched.close()
                    closed += 1
        if closed:
            log.info("ws.signed_out", user=user, closed=closed)
        return closed

    def start(self) -> None:
        self._loop = asyncio.get_running_loop().create_task(self._every())

    async def stop(self) -> None:
        for task in [self._loop, *self._tasks]:
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        self._loop = None

    async def _every(self) -> None:
        while True:
            await asyncio.sleep(self.every)
            try:
                await self.check()
            except Exception as exc:  # never the end of the rounds
                log.warning("ws.recheck_failed", error=str(exc))
