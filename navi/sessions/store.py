"""The session store interface. Writes are incremental: a turn appends rows, never rewrites a session.

All stores (in-memory, SQLite, PostgreSQL) implement this and pass one contract test suite.
`owner=None` means "any owner"; passing an owner restricts every call to that owner's sessions.
"""

from __future__ import annotations

import asyncio
import shutil
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from navi.llm.messages import Message
from navi.sessions import tree
from navi.sessions.models import ANALYSIS_PARTS, DEFAULT_OWNER, Session, SessionInfo, is_session_id
from navi.sessions.search import SearchHit, SearchQuery
from navi.sessions.usage import Tally, UsageReport


class SessionNotFound(LookupError):
    def __init__(self, session_id: str) -> None:
        super().__init__(session_id)
        self.session_id = session_id

    def __str__(self) -> str:
        shown = self.session_id if len(self.session_id) <= 64 else f"{self.session_id[:64]}…"
        return f"no session '{shown}'"  # an id from a request is echoed, but never a 10 kB one


class SessionExists(ValueError):
    """`create` was asked for an id that a session (of any owner) already has."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session '{session_id}' already exists")
        self.session_id = session_id


@dataclass(frozen=True)
class SessionChange:
    """A session was created, renamed, pinned, given another profile, imported or deleted."""

    session_id: str
    deleted: bool = False


class SessionStore(ABC):
    """Every store calls its change listeners after a session's metadata changes, whoever changed
    it (a route, naming, a tool), so every open page can update its list (`session_updated`)."""

    def __init__(self, files_dir: str | Path | None = None) -> None:
        self.files_dir = Path(files_dir) if files_dir else None
        self._listeners: list[Callable[[SessionChange], None]] = []

    def on_change(self, listener: Callable[[SessionChange], None]) -> None:
        self._listeners.append(listener)

    def _changed(self, session_id: str, *, deleted: bool = False) -> None:
        change = SessionChange(session_id, deleted)
        for listener in list(self._listeners):
            listener(change)

    # --- lifecycle -------------------------------------------------------------------------------
    async def open(self) -> None:  # noqa: B027 - optional hook
        """Prepare storage (migrations, pools). Called once before use."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""

    # --- sessions --------------------------------------------------------------------------------
    async def create(
        self,
        profile_id: str,
        *,
        owner: str = DEFAULT_OWNER,
        name: str | None = None,
        session_id: str | None = None,
        temporary: bool = False,
    ) -> Session:
        """A new empty session; a fresh id unless the caller names one (`session_id`, a session id
        no session has yet: `SessionExists` otherwise, whoever owns it). A `temporary` one is left
        out of the list and memory extraction, and deleted when its page closes it."""
        if session_id is not None and not is_session_id(session_id):
            raise ValueError(f"not a session id: {session_id[:64]!r}")
        session = await self._create(
            profile_id, owner=owner, name=name, session_id=session_id, temporary=temporary
        )
        self._changed(session.id)
        return session

    @abstractmethod
    async def _create(
        self, profile_id: str, *, owner: str, name: str | None, session_id: str | None, temporary: bool
    ) -> Session: ...

    @abstractmethod
    async def get(
        self, session_id: str, *, owner: str | None = None, display: bool = True, branch: str | None = None
    ) -> Session | None:
        """The whole session. `display=False` skips the display buffer, planning logs, analysis and
        custom fields (the agent needs only the context), which keeps a turn's read small however
        long the session.

        `messages` is the display path to the active leaf, or with `branch` (a message id of the
        session: `BranchNotFound` otherwise) to the newest leaf below that message
        (navi/sessions/tree.py); `parents` holds every message of the tree."""

    async def set_leaf(self, session_id: str, message_id: str, *, owner: str | None = None) -> str:
        """Make the newest leaf below `message_id` the active one: the display shows its path and
        the next turn appends below it. Returns that leaf. `SessionNotFound`, `BranchNotFound`."""
        session = await self.get(session_id, owner=owner, branch=message_id)
        if session is None:
            raise SessionNotFound(session_id)
        leaf = session.messages[-1].id
        if not await self._set_leaf(session_id, leaf, owner):
            raise SessionNotFound(session_id)
        self._changed(session_id)  # every open page shows the session's new path
        return leaf

    async def branch_at(self, session_id: str, parent: str | None, *, owner: str | None = None) -> None:
        """Make `parent` itself the active leaf, so the next message appended becomes its newest
        child (None: a new first message). Edit and regenerate call this before their turn.
        `SessionNotFound`, `BranchNotFound`."""
        if parent is None:
            if not await self._set_leaf(session_id, tree.ROOT, owner):
                raise SessionNotFound(session_id)
            return
        session = await self.get(session_id, owner=owner, branch=parent)
        if session is None or not await self._set_leaf(session_id, parent, owner):
            raise SessionNotFound(session_id)

    @abstractmethod
    async def _set_leaf(self, session_id: str, leaf: str, owner: str | None) -> bool:
        """Store `leaf` (a message of the session, or `tree.ROOT`) as the active leaf; False when
        there is no such session (of `owner`) or message."""

    @abstractmethod
    async def find_message(self, message_id: str, *, owner: str, prefer: str | None = None) -> Message | None:
        """The display-history message with this id in one of `owner`'s sessions, or None.

        Recall keys name messages by id (`navi.sessions.keys`); the owner scopes the lookup, so
        another owner's message is never found. When several sessions hold the id (an archive
        imported twice), session `prefer` wins, then the most recently active.
        """

    async def search(self, query: SearchQuery, *, owner: str) -> list[SearchHit]:
        """Messages of `owner`'s sessions that have every word of `query`, best first, at most
        `query.limit` (see navi/sessions/search.py). Another owner's messages are never found, nor
        those of a temporary chat (its own owner's either)."""
        if not query.terms:
            return []
        return await self._search(query, owner)

    @abstractmethod
    async def _search(self, query: SearchQuery, owner: str) -> list[SearchHit]: ...

    async def usage(
        self, *, owner: str, since: datetime | None = None, until: datetime | None = None
    ) -> UsageReport:
        """What `owner`'s stored answers cost, per conversation and overall (navi/sessions/usage.py),
        counting the messages written since ≤ created_at < until. Stores that keep every branch
        count them all; this fallback reads each session's active path."""
        tally = Tally(owner, since, until)
        for info in await self.list(owner=owner):
            session = await self.get(info.id, owner=owner)
            for message in session.messages if session is not None else ():
                if message.role == "assistant" and tally.within(message.created_at):
                    tally.add(info.id, info.name, message.metadata.as_json())
        return tally.done()

    @abstractmethod
    async def list(self, *, owner: str | None = None) -> list[SessionInfo]:
        """Pinned sessions first, then most recently active first."""

    async def summaries(self, *, owner: str, limit: int) -> Sequence[tuple[SessionInfo, Message]]:
        """The newest compression summary of each of `owner`'s sessions that has one, at most
        `limit` sessions, most recently active first. This reads every session's context; the SQL
        stores override it with one query."""
        found: list[tuple[SessionInfo, Message]] = []
        infos = sorted(await self.list(owner=owner), key=lambda i: i.last_active, reverse=True)
        for info in infos:
            session = await self.get(info.id, owner=owner, display=False)
            summary = session.summary_message if session is not None else None
            if summary is not None:
                found.append((info, summary))
                if len(found) == limit:
                    break
        return found

    @abstractmethod
    async def _delete(self, session_id: str, owner: str | None) -> bool: ...

    async def delete(self, session_id: str, *, owner: str | None = None) -> bool:
        """Delete a session, its messages and its uploaded files."""
        if not is_session_id(session_id):
            return False
        deleted = await self._delete(session_id, owner)
        if deleted and self.files_dir is not None:
            await asyncio.to_thread(shutil.rmtree, self.files_dir / session_id, True)
        if deleted:
            self._changed(session_id, deleted=True)
        return deleted

    async def set_pinned(self, session_id: str, pinned: bool, *, owner: str | None = None) -> bool:
        return self._after(session_id, await self._set_pinned(session_id, pinned, owner))

    async def set_name(self, session_id: str, name: str | None, *, owner: str | None = None) -> bool:
        return self._after(session_id, await self._set_name(session_id, name, owner))

    async def name_if_unnamed(self, session_id: str, name: str) -> bool:
        """Give the session `name` only if it still has none, in one step: an automatic title never
        replaces one the user gave it meanwhile (a check, then a write, could)."""
        return self._after(session_id, await self._set_name(session_id, name, None, only_unnamed=True))

    async def set_profile(self, session_id: str, profile_id: str) -> bool:
        return self._after(session_id, await self._set_profile(session_id, profile_id))

    async def set_options(self, session_id: str, *, owner: str | None = None, **values: str | None) -> bool:
        """Set a conversation's own `model` ("backend:model") and/or `system_prompt` (None: none);
        False when `owner` has no such session."""
        unknown = set(values) - {"model", "system_prompt"}
        if unknown:
            raise ValueError(f"not a session option: {sorted(unknown)}")
        return self._after(session_id, await self._set_options(session_id, owner, values))

    @abstractmethod
    async def _set_options(
        self, session_id: str, owner: str | None, values: dict[str, str | None]
    ) -> bool: ...

    async def set_feedback(
        self, session_id: str, message_id: str, rating: str | None, *, owner: str | None = None
    ) -> bool:
        """Rate an answer ("up", "down"; None takes the rating back); False when the session has no
        such answer (of `owner`)."""
        return await self._set_feedback(session_id, message_id, rating, owner)

    @abstractmethod
    async def _set_feedback(
        self, session_id: str, message_id: str, rating: str | None, owner: str | None
    ) -> bool: ...

    async def set_place(
        self,
        session_id: str,
        *,
        owner: str | None = None,
        folder: str | object | None = ...,
        archived: bool | None = None,
    ) -> bool:
        """Put a session in a folder (a name; None: out of any) and/or archive it (True) or bring it
        back (False); what is not given stays. False when there is no such session (of `owner`)."""
        fields: dict[str, Any] = {} if folder is ... else {"folder": folder}
        if archived is not None:
            fields["archived"] = archived
        if not fields:
            return await self.get(session_id, owner=owner, display=False) is not None
        if not is_session_id(session_id):
            return False
        return self._after(session_id, await self._set_place(session_id, fields, owner))

    @abstractmethod
    async def _set_place(self, session_id: str, fields: dict[str, Any], owner: str | None) -> bool: ...

    async def rename_folder(self, folder: str, to: str | None, *, owner: str) -> Sequence[str]:
        """Rename `owner`'s folder `folder` to `to` (None: the folder is undone, its sessions in none;
        a folder already named `to`: the two become one): every session of `owner` in it moves,
        archived ones too, each announced like any move. The ids of those moved."""
        inside = [i.id for i in await self.list(owner=owner) if i.folder == folder]
        return [sid for sid in inside if await self.set_place(sid, owner=owner, folder=to)]

    def _after(self, session_id: str, changed: bool) -> bool:
        if changed:
            self._changed(session_id)
        return changed

    @abstractmethod
    async def _set_pinned(self, session_id: str, pinned: bool, owner: str | None) -> bool: ...

    @abstractmethod
    async def _set_name(
        self, session_id: str, name: str | None, owner: str | None, *, only_unnamed: bool = False
    ) -> bool: ...

    @abstractmethod
    async def _set_profile(self, session_id: str, profile_id: str) -> bool: ...

    # --- incremental writes ----------------------------------------------------------------------
    @abstractmethod
    async def append(
        self,
        session_id: str,
        *,
        display: Sequence[Message] = (),
        context: Sequence[Message] = (),
        context_token_count: int | None = None,
    ) -> None:
        """Append to either or both buffers in one transaction and mark the session active.

        Raises `SessionNotFound`. Only the new rows are written.
        """

    @abstractmethod
    async def replace_context(
        self, session_id: str, context: Sequence[Message], *, context_token_count: int
    ) -> None:
        """Swap the whole context buffer (compression). The display buffer is untouched."""

    @abstractmethod
    async def set_context_tokens(self, session_id: str, count: int) -> None: ...

    @abstractmethod
    async def add_planning_log(self, session_id: str, entry: dict[str, Any]) -> None: ...

    async def set_analysis(
        self, session_id: str, parts: Mapping[str, dict[str, Any]], *, owner: str | None = None
    ) -> bool:
        """Store archive analytics (`Session.analysis`): each part replaces the one of its name and
        the others stay. False when there is no such session (of `owner`). Not a metadata change
        for listeners, and the session's `last_active` stays: nobody talked."""
        unknown = set(parts) - set(ANALYSIS_PARTS)
        if unknown:
            raise ValueError(f"not an analysis part: {', '.join(sorted(unknown))}")
        if not is_session_id(session_id):
            return False
        if not parts:
            return await self.get(session_id, owner=owner, display=False) is not None
        return await self._set_analysis(session_id, parts, owner)

    @abstractmethod
    async def _set_analysis(
        self, session_id: str, parts: Mapping[str, dict[str, Any]], owner: str | None
    ) -> bool: ...

    async def insert(self, session: Session) -> None:
        """Store a complete session as it is (archive import), its analysis and custom fields too.
        Its id must be new."""
        await self._insert(session)
        self._changed(session.id)

    @abstractmethod
    async def _insert(self, session: Session) -> None: ...
