"""`search_conversations`: the model finds what was said in the user's other sessions.

The search is the session store's (navi/sessions/search.py), scoped to the run's owner: a run
never finds another user's messages.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from navi import runctx
from navi.sessions.search import SearchQuery, marked, terms
from navi.sessions.store import SessionStore
from navi.tools.base import Tool, ToolResult

MAX_RESULTS = 20


def _day(value: str | None, name: str) -> date | None:
    if not value:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"`{name}` must be a day as YYYY-MM-DD, not {value[:40]!r}") from None


class SearchConversationsTool(Tool):
    name = "search_conversations"
    description = "Find words in all the user's conversations with you; from/to: YYYY-MM-DD."
    parameters = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 1000},
            "from": {"type": "string"},
            "to": {"type": "string"},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS},
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    timeout = 15.0

    def __init__(self, sessions: SessionStore) -> None:
        self.sessions = sessions

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        ctx = runctx.require()
        words = terms(params["query"])
        if not words:
            return ToolResult.fail("the query has no words to search for (letters or digits)")
        try:
            first, last = _day(params.get("from"), "from"), _day(params.get("to"), "to")
        except ValueError as exc:
            return ToolResult.fail(str(exc))
        query = SearchQuery(
            words,
            since=datetime.combine(first, time(), tzinfo=UTC) if first else None,
            until=datetime.combine(last + timedelta(days=1), time(), tzinfo=UTC)
            if last and last < date.max
            else None,
            limit=params.get("limit", 10),
        )
        hits = await self.sessions.search(query, owner=ctx.owner)
        if not hits:
            return ToolResult.ok(f"No message in the user's conversations has all of: {' '.join(words)}.")
        lines = []
        for hit in hits:
            where = (
                "this conversation"
                if hit.session_id == ctx.root_session
                else f"“{hit.session_name or 'Untitled'}”"
            )
            lines.append(f"- {hit.created_at:%Y-%m-%d} · {where} · {hit.role}: {marked(hit)}")
        return ToolResult.ok(f"{len(hits)} message(s), best match first:\n" + "\n".join(lines))
