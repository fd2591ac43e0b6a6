"""A dict-backed store for tests. Copies on the way in and out, like a database would."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from navi.llm.messages import Message, utcnow
from navi.sessions import tree
from navi.sessions.models import DEFAULT_OWNER, Session, SessionInfo, new_session_id
from navi.sessions.search import SearchHit, SearchQuery, score, searchable_text, snippet
from navi.sessions.store import SessionExists, SessionNotFound, SessionStore
from navi.sessions.usage import Tally, UsageReport


class InMemorySessionStore(SessionStore):
    def __init__(self, files_dir: str | None = None) -> None:
        super().__init__(files_dir)
        self._sessions: dict[str, Session] = {}
        self._lock = asyncio.Lock()

    def _find(self, session_id: str, owner: str | None) -> Session | None:
        session = self._sessions.get(session_id)
        if session is None or (owner is not None and session.owner != owner):
            return None
        return session

    def _require(self, session_id: str) -> Session:
        session = self._sessions.get(session_id)
        if session is None:
            raise SessionNotFound(session_id)
        return session

    async def _create(
        self,
        profile_id: str,
        *,
        owner: str = DEFAULT_OWNER,
        name: str | None = None,
        session_id: str | None = None,
        temporary: bool = False,
    ) -> Session:
        if session_id is not None and session_id in self._sessions:
            raise SessionExists(session_id)
        session = Session(
            id=session_id or new_session_id(),
            profile_id=profile_id,
            owner=owner,
            name=name,
            temporary=temporary,
        )
        self._sessions[session.id] = session
        return session.model_copy(deep=True)

    async def usage(
        self, *, owner: str, since: datetime | None = None, until: datetime | None = None
    ) -> UsageReport:
        """(Every branch's answers: the stored session's `messages` are all of them.)"""
        tally = Tally(owner, since, until)
        for session in list(self._sessions.values()):
            if session.owner == owner:
                for message in session.messages:
                    if message.role == "assistant" and tally.within(message.created_at):
                        tally.add(session.id, session.name, message.metadata.as_json())
        return tally.done()

    async def get(
        self, session_id: str, *, owner: str | None = None, display: bool = True, branch: str | None = None
    ) -> Session | None:
        """(The stored session's `messages` are every display message, in the order written.)"""
        session = self._find(session_id, owner)
        if session is None:
            return None
        copy = session.model_copy(deep=True)
        copy.message_count = len(session.messages)
        by_id = {m.id: m for m in copy.messages}
        path = tree.path_ids(copy.parents, copy.active_leaf, branch)
        on_path = set(path)
        copy.others = [m for m in copy.messages if m.id not in on_path]
        copy.messages = [by_id[i] for i in path]
        if not display:
            copy.parents = {}
            copy.messages = []
            copy.others = []
            copy.planning_logs = []
            copy.analysis = {}
            copy.custom = {}
        return copy

    async def find_message(self, message_id: str, *, owner: str, prefer: str | None = None) -> Message | None:
        owned = [s for s in self._sessions.values() if s.owner == owner]
        owned.sort(key=lambda s: (s.id != prefer, -s.last_active.timestamp()))
        for session in owned:
            for msg in session.messages:
                if msg.id == message_id:
                    return msg.model_copy(deep=True)
        return None

    async def _search(self, query: SearchQuery, owner: str) -> list[SearchHit]:
        """A scan of every owned message: enough for tests and small stores."""
        found: list[tuple[float, Session, Message, str]] = []
        for session in self._sessions.values():
            if session.owner != owner or session.temporary:  # a temporary chat is never found
                continue
            if query.profile and session.profile_id != query.profile:
                continue
            for msg in session.messages:
                body = searchable_text(msg)
                if body is None:
                    continue
                if (query.since and msg.created_at < query.since) or (
                    query.until and msg.created_at >= query.until
                ):
                    continue
                rank = score(body, query)
                if rank > 0:
                    found.append((rank, session, msg, body))
        found.sort(key=lambda f: (-f[0], -f[2].created_at.timestamp()))
        hits = []
        for _, session, msg, body in found[: query.limit]:
            text, marks = snippet(body, query)
            hits.append(
                SearchHit(
                    session_id=session.id,
                    session_name=session.name,
                    profile_id=session.profile_id,
                    message_id=msg.id,
                    role=msg.role,
                    created_at=msg.created_at,
                    snippet=text,
                    highlights=marks,
                )
            )
        return hits

    async def list(self, *, owner: str | None = None) -> list[SessionInfo]:
        found = [s for s in self._sessions.values() if owner is None or s.owner == owner]
        found.sort(key=lambda s: (not s.pinned, -s.last_active.timestamp()))
        infos = []
        for s in found:
            info = s.info()
            info.message_count = len(s.messages)
            info.text_message_count = sum(1 for m in s.messages if searchable_text(m) is not None)
            infos.append(info)
        return infos

    async def _delete(self, session_id: str, owner: str | None) -> bool:
        if self._find(session_id, owner) is None:
            return False
        del self._sessions[session_id]
        return True

    async def _set_pinned(self, session_id: str, pinned: bool, owner: str | None) -> bool:
        session = self._find(session_id, owner)
        if session is not None:
            session.pinned = pinned
        return session is not None

    async def _set_place(self, session_id: str, fields: dict[str, Any], owner: str | None) -> bool:
        session = self._find(session_id, owner)
        for key, value in fields.items() if session is not None else ():
            setattr(session, key, value)
        return session is not None

    async def _set_name(
        self, session_id: str, name: str | None, owner: str | None, *, only_unnamed: bool = False
    ) -> bool:
        session = self._find(session_id, owner)
        if session is None or (only_unnamed and session.name is not None):
            return False
        session.name = name
        return True

    async def _set_profile(self, session_id: str, profile_id: str) -> bool:
        session = self._find(session_id, None)
        if session is not None:
            session.profile_id = profile_id
        return session is not None

    async def _set_options(self, session_id: str, owner: str | None, values: dict[str, str | None]) -> bool:
        session = self._find(session_id, owner)
        if session is not None:
            for key, value in values.items():
                setattr(session, key, value)
        return session is not None

    async def _set_feedback(
        self, session_id: str, message_id: str, rating: str | None, owner: str | None
    ) -> bool:
        session = self._find(session_id, owner)
        for message in [*session.messages, *session.others] if session is not None else []:
            if message.id == message_id and message.role == "assistant":
                message.metadata["feedback"] = rating
                return True
        return False

    async def append(
        self,
        session_id: str,
        *,
        display: Sequence[Message] = (),
        context: Sequence[Message] = (),
        context_token_count: int | None = None,
    ) -> None:
        async with self._lock:
            session = self._require(session_id)
            if display:
                leaf = tree.leaf_of(session.parents, session.active_leaf)
                session.parents.update(tree.chain([m.id for m in display], leaf))
                session.active_leaf = display[-1].id
            session.messages.extend(m.model_copy(deep=True) for m in display)
            session.context.extend(m.model_copy(deep=True) for m in context)
            if context_token_count is not None:
                session.context_token_count = context_token_count
            session.last_active = utcnow()

    async def replace_context(
        self, session_id: str, context: Sequence[Message], *, context_token_count: int
    ) -> None:
        session = self._require(session_id)
        session.context = [m.model_copy(deep=True) for m in context]
        session.context_token_count = context_token_count

    async def set_context_tokens(self, session_id: str, count: int) -> None:
        self._require(session_id).context_token_count = count

    async def add_planning_log(self, session_id: str, entry: dict[str, Any]) -> None:
        self._require(session_id).planning_logs.append(dict(entry))

    async def _set_analysis(
        self, session_id: str, parts: Mapping[str, dict[str, Any]], owner: str | None
    ) -> bool:
        session = self._find(session_id, owner)
        if session is not None:
            session.analysis.update(copy.deepcopy(dict(parts)))
        return session is not None

    async def _insert(self, session: Session) -> None:
        if session.id in self._sessions:
            raise ValueError(f"session '{session.id}' already exists")
        stored = session.model_copy(deep=True)
        path = [m.id for m in stored.messages]
        stored.messages = tree.written_order([*stored.messages, *stored.others], stored.parents)
        stored.others = []
        chained = tree.chain(path)  # a path without parents: one chain (after those given, in order)
        stored.parents = {**stored.parents, **{k: v for k, v in chained.items() if k not in stored.parents}}
        stored.active_leaf = stored.active_leaf or (path[-1] if path else None)
        self._sessions[session.id] = stored

    async def _set_leaf(self, session_id: str, leaf: str, owner: str | None) -> bool:
        session = self._find(session_id, owner)
        if session is None or (leaf != tree.ROOT and leaf not in session.parents):
            return False
        session.active_leaf = leaf
        return True
