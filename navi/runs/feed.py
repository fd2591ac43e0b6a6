"""Session metadata changes, pushed to every open connection as `session_updated` frames.

The session store calls `changed()` whenever a session is created, renamed, pinned, given another
profile, imported or deleted — by a route, the naming worker or a tool — and every connected page
updates its list from the frame, whichever session its socket follows. The frame belongs to no
run, so it has no `run_id` or `seq`. `publish()` delivers other such frames (`schedule_run`, when
a scheduled run starts, waits for an approval or ends) to one owner's connections. With a shared
bus (PostgreSQL) both reach the connections of every worker: each change and frame is broadcast,
and each worker reads the session from the shared database to build its frame.

`revoked()` says that a user's sign-in or token was revoked (a sign-out, the user removed): the
connections that follow it (`on_revoked`, navi/api/sockets.py) check their credentials again, on
every worker; `navi users remove` announces it on PostgreSQL with `revoked_note` (navi/runs/pg.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import structlog

from navi.protocol import SessionUpdated
from navi.sessions.store import SessionChange, SessionStore

log = structlog.stdlib.get_logger(__name__)

Deliver = Callable[[dict[str, Any]], None]
Revoked = Callable[[str], None]


def revoked_note(owner: str) -> dict[str, Any]:
    """What is broadcast when a sign-in or token of `owner` was revoked."""
    return {"k": "revoked", "o": owner}


class SessionFeed:
    """`broadcast`: where this process's changes and frames also go, for the connections of other
    workers (`Bus.feed`); what other workers broadcast arrives through `remote`."""

    def __init__(
        self, sessions: SessionStore, broadcast: Callable[[dict[str, Any]], None] | None = None
    ) -> None:
        self.sessions = sessions
        self.broadcast = broadcast
        self._clients: dict[Deliver, str | None] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        # The newest change of each session whose frame is being built: an older one still reading
        # the session when a newer change (a deletion) was delivered must not follow it with a
        # stale frame. A number from one counter, so a later change never takes an older one's.
        self._newest: dict[str, int] = {}
        self._count = 0
        self._revoked: list[Revoked] = []
        sessions.on_change(self.changed)

    def on_revoked(self, listener: Revoked) -> None:
        """Call `listener(owner)` whenever a sign-in or token of `owner` was revoked, here or on
        another worker."""
        self._revoked.append(listener)

    def revoked(self, owner: str) -> None:
        """A sign-in or token of `owner` was revoked: tell the listeners of every worker."""
        if self.broadcast is not None:
            self.broadcast(revoked_note(owner))
        self._tell_revoked(owner)

    def _tell_revoked(self, owner: str) -> None:
        for listener in list(self._revoked):
            try:
                listener(owner)
            except Exception as exc:  # one listener's failure is not the others'
                log.warning("feed.revoked_listener_failed", error=str(exc))

    def join(self, deliver: Deliver, owner: str | None = None) -> None:
        """Deliver every change (of `owner`'s sessions; None: all) to this client."""
        self._clients[deliver] = owner

    def leave(self, deliver: Deliver) -> None:
        self._clients.pop(deliver, None)

    def publish(self, frame: dict[str, Any], owner: str, *, here_only: bool = False) -> None:
        """Deliver a frame that belongs to no run (`schedule_run`) to `owner`'s connections, on
        every worker."""
        if self.broadcast is not None and not here_only:
            self.broadcast({"k": "frame", "o": owner, "f": frame})
        for deliver, wants in list(self._clients.items()):
            if wants is None or wants == owner:
                deliver(dict(frame))

    def changed(self, change: SessionChange) -> None:
        if self.broadcast is not None:
            self.broadcast({"k": "change", "s": change.session_id, "d": change.deleted})
        self._changed(change)

    def _changed(self, change: SessionChange) -> None:
        if not self._clients:
            return
        self._count += 1
        self._newest[change.session_id] = self._count
        task = asyncio.get_running_loop().create_task(self._publish(change, self._count))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def remote(self, note: dict[str, Any]) -> None:
        """What another worker broadcast: a change of a session, a frame for an owner, or a
        revocation (`navi users remove` announces one too)."""
        if note.get("k") == "revoked" and isinstance(note.get("o"), str):
            self._tell_revoked(note["o"])
        elif note.get("k") == "change":
            self._changed(SessionChange(str(note["s"]), deleted=bool(note.get("d"))))
        elif note.get("k") == "frame" and isinstance(note.get("f"), dict):
            self.publish(note["f"], str(note.get("o")), here_only=True)

    async def _publish(self, change: SessionChange, number: int) -> None:
        try:
            frame = await self._frame(change)
            if frame is None or self._newest.get(change.session_id) != number:
                return  # gone, or a newer change of this session delivers the newer state
            owner, update = frame
            for deliver, wants in list(self._clients.items()):
                if wants is None or owner is None or wants == owner:
                    deliver(dict(update))
        finally:
            if self._newest.get(change.session_id) == number:
                del self._newest[change.session_id]

    async def _frame(self, change: SessionChange) -> tuple[str | None, dict[str, Any]] | None:
        """The frame for a change and the owner it goes to (None: all, for a deletion); None when
        the session is gone since."""
        owner = None
        if change.deleted:
            update = SessionUpdated(session_id=change.session_id, deleted=True)
        else:
            session = await self.sessions.get(change.session_id, display=False)
            if session is None:  # deleted since: its own change follows
                return None
            owner = session.owner
            update = SessionUpdated(
                session_id=change.session_id,
                name=session.name,
                profile_id=session.profile_id,
                pinned=session.pinned,
                folder=session.folder,
                archived=session.archived,
                temporary=session.temporary,
                deleted=False,
            )
        return owner, update.frame()
