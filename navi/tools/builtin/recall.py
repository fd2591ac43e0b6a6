"""`recall`: read the whole text of a message shown shortened in the model's context.

Long tool results, and long messages older than the recent turns, reach the model as a head and a
tail around a note with a key (`msg_<message id>`, see `navi.sessions.keys`). The display history
keeps every message whole; with the key the model reads any part of it, as much as it needs.

A key `session_<session id>` (as `memory_search` gives them for earlier conversations) reads that
session's newest compression summary, introduced by the session's name and dates. A key
`doc_<chunk id>` (as `search_documents` and the excerpts of the user's documents give them) reads
that passage of the owner's document with its neighbours, under its citation.

Keys resolve for the run's owner only: a message of any of the owner's sessions, the current one
first; another owner's key gets "no such key", never the text. A subagent's own messages are stored
nowhere, so the run keeps their full texts in memory (`RunContext.full_texts`), looked at first.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from navi import runctx
from navi.documents.base import Hit
from navi.documents.retrieval import chunk_of
from navi.memory.earlier import SESSION_KEY, recollection
from navi.sessions.keys import message_ids
from navi.sessions.models import is_session_id
from navi.sessions.store import SessionStore
from navi.tools.base import Tool, ToolResult

DEFAULT_LENGTH = 8_000
MAX_LENGTH = 40_000


class RecallTool(Tool):
    name = "recall"
    description = (
        "Full text of a message shortened in your context: `key` is in its '[… characters omitted "
        "…]' note; `offset` and `length` (characters) select a part."
    )
    parameters = {
        "type": "object",
        "properties": {
            "key": {"type": "string", "minLength": 1},
            "offset": {"type": "integer", "minimum": 0},
            "length": {"type": "integer", "minimum": 1, "maximum": MAX_LENGTH},
        },
        "required": ["key"],
        "additionalProperties": False,
    }
    timeout = 15.0

    def __init__(self, sessions: SessionStore) -> None:
        self.sessions = sessions
        # A passage of an owner's documents by chunk id (wired when Navi keeps documents).
        self.passage: Callable[[str, int], Awaitable[tuple[Hit, str] | None]] | None = None

    async def _lookup(self, ctx: runctx.RunContext, key: str) -> tuple[str, str] | None:
        """(message id, full text) for `key`, or None when the owner has no such message. A
        `session_<id>` key names the summary of one of the owner's sessions (memory_search gives
        them for earlier conversations)."""
        name = key.strip().strip("\"'`")
        chunk = chunk_of(name)
        if chunk is not None and self.passage is not None:
            passage = await self.passage(ctx.owner, chunk)
            return None if passage is None else (name, f"[{passage[0].citation()}]\n{passage[1]}")
        if name.startswith(SESSION_KEY) and is_session_id(name[len(SESSION_KEY) :]):
            if name in ctx.full_texts:
                return name, ctx.full_texts[name]
            session = await self.sessions.get(name[len(SESSION_KEY) :], owner=ctx.owner, display=False)
            text = recollection(session) if session is not None else None
            return None if text is None else (name, text)
        candidates = message_ids(key)
        for message_id in candidates:
            if message_id in ctx.full_texts:
                return message_id, ctx.full_texts[message_id]
        # The stored session the run works for (a subagent's parent), preferred among the owner's.
        prefer = ctx.root_session if is_session_id(ctx.root_session) else None
        for message_id in candidates:
            found = await self.sessions.find_message(message_id, owner=ctx.owner, prefer=prefer)
            if found is not None:
                return message_id, found.content or ""
        return None

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        ctx = runctx.require()
        key = params["key"]
        found = await self._lookup(ctx, key)
        if found is None:
            shown = key if len(key) <= 80 else f"{key[:80]}…"
            return ToolResult.fail(
                f"no such key '{shown}': nothing is stored under it. Use a key exactly as a "
                "'[… characters omitted …]' note in your context gives it."
            )
        message_id, text = found
        ctx.full_texts[message_id] = text  # further parts in this run are read from memory
        if not text:
            return ToolResult.ok("[the message under this key has no text]")
        offset = params.get("offset", 0)
        length = params.get("length", DEFAULT_LENGTH)
        if offset >= len(text):
            return ToolResult.fail(f"offset {offset} is past the end (the text has {len(text)} characters)")
        part = text[offset : offset + length]
        end = offset + len(part)
        more = (
            f" {len(text) - end} characters follow; call recall with offset {end} for more."
            if end < len(text)
            else ""
        )
        return ToolResult.ok(f"[characters {offset}–{end} of {len(text)}.{more}]\n{part}")
