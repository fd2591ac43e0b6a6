"""`memory_search`, `remember` and `memory_forget`: the agent's hands on long-term memory.

`remember` stores a fact at once, through the same decision as extraction (a new value for the
same category and key replaces the old one, which becomes history); `memory_forget` (the
reference's name; `forget`, its name for a while, still reaches it) retires facts. Both
act for the run's owner only, and `remember` stores only what the person said in their own words
in this conversation (`navi.memory.extractor.stated`): a web page or a file the assistant read
cannot plant a memory by asking to be remembered. After a change the summary is rewritten in
the background (`on_change`, wired by the composition root).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from navi import runctx
from navi.memory.base import Fact, MemoryStore
from navi.memory.earlier import search_summaries
from navi.memory.extractor import own_words, stated
from navi.sessions.store import SessionStore
from navi.tools.base import Tool, ToolResult

OnChange = Callable[[str], None]
EARLIER_LIMIT = 3  # summaries of earlier sessions shown beside the facts


def _owner() -> str:
    ctx = runctx.current()
    return ctx.owner if ctx else "local"


def _line(fact: Fact) -> str:
    return f"- {fact.line()}  (updated {fact.updated_at:%Y-%m-%d})" + (
        "" if fact.current else " [former value]"
    )


class MemorySearchTool(Tool):
    name = "memory_search"
    description = (
        "Search the facts remembered about the user (`history`: former values too) and the "
        "summaries of earlier conversations."
    )
    parameters = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50},
            "history": {"type": "boolean"},
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    timeout = 15.0

    def __init__(self, memory: MemoryStore, sessions: SessionStore | None = None) -> None:
        self.memory = memory
        self.sessions = sessions  # earlier sessions' summaries are searched too when given

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        ctx = runctx.current()
        owner = ctx.owner if ctx else "local"
        facts = await self.memory.search_facts(
            params["query"],
            owner=owner,
            limit=params.get("limit", 15),
            history=params.get("history", False),
        )
        earlier = []
        if self.sessions is not None:
            earlier = await search_summaries(
                self.sessions,
                params["query"],
                owner=owner,
                limit=EARLIER_LIMIT,
                exclude=ctx.root_session if ctx else None,
            )
        if not facts and not earlier:
            return ToolResult.ok(f"Nothing remembered about “{params['query']}”.")
        parts = []
        if facts:
            parts.append(f"{len(facts)} remembered fact(s):\n" + "\n".join(_line(f) for f in facts))
        if earlier:
            parts.append(
                f"{len(earlier)} earlier conversation(s) (their summaries):\n"
                + "\n".join(r.line() for r in earlier)
            )
        return ToolResult.ok("\n\n".join(parts))


class RememberTool(Tool):
    name = "remember"
    description = "Store a lasting fact about the user now, in their words; a new value replaces the old."
    parameters = {
        "type": "object",
        "properties": {
            "category": {"type": "string", "minLength": 1, "maxLength": 64},
            "key": {"type": "string", "minLength": 1, "maxLength": 128},
            "value": {"type": "string", "minLength": 1, "maxLength": 300},
        },
        "required": ["category", "key", "value"],
        "additionalProperties": False,
    }
    timeout = 15.0

    def __init__(self, memory: MemoryStore, sessions: SessionStore) -> None:
        self.memory = memory
        self.sessions = sessions
        self.on_change: OnChange | None = None

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        ctx = runctx.current()
        if ctx is None:
            return ToolResult.fail("remember works only inside a conversation")
        session = await self.sessions.get(ctx.root_session, owner=ctx.owner)
        if session is None:
            return ToolResult.fail("remember works only inside a stored conversation")
        said = await asyncio.to_thread(own_words, session)
        if not stated(params["value"], said):
            return ToolResult.fail(
                "the value must be in the user's own words from this conversation; "
                "store only what the user said about themselves"
            )
        try:
            fact, outcome = await self.memory.upsert_fact(
                params["category"],
                params["key"],
                params["value"],
                owner=ctx.owner,
                session_id=session.id,
                source="remembered",
            )
        except ValueError as exc:
            return ToolResult.fail(str(exc))
        if outcome == "confirmed":
            return ToolResult.ok(f"Already remembered: {fact.line()}")
        if self.on_change is not None:
            self.on_change(ctx.owner)
        if outcome == "updated":
            before = await self.memory.fact_history(fact.id, owner=ctx.owner)
            was = f" (was: {before[0].value})" if before else ""
            return ToolResult.ok(f"Remembered: {fact.line()}{was}")
        return ToolResult.ok(f"Remembered: {fact.line()}")


class ForgetTool(Tool):
    name = "memory_forget"
    former_name = "forget"  # calls by it still arrive (sessions and fixtures of that time)
    description = "Forget remembered facts with this `key` (in `category`, if given)."
    parameters = {
        "type": "object",
        "properties": {
            "key": {"type": "string", "minLength": 1},
            "category": {"type": "string", "minLength": 1},
        },
        "required": ["key"],
        "additionalProperties": False,
    }
    timeout = 15.0

    def __init__(self, memory: MemoryStore) -> None:
        self.memory = memory
        self.on_change: OnChange | None = None

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        owner = _owner()
        retired = await self.memory.retire_facts(params["key"], params.get("category"), owner=owner)
        where = f" in {params['category']}" if params.get("category") else ""
        if not retired:
            return ToolResult.fail(f"no remembered fact with the key '{params['key']}'{where}")
        if self.on_change is not None:
            self.on_change(owner)
        return ToolResult.ok(f"Forgot {len(retired)} fact(s): " + "; ".join(f.line() for f in retired))
