"""What a user's conversations cost: the stored answers' usage summed per conversation and overall.

Every assistant message Navi stores from a model call (an answer, a step that called tools)
carries in its metadata the call's `usage` (prompt, completion and total tokens), `model`,
`ttft_ms`, `duration_ms` and, when the model has a price, `cost` (navi/agent/loop.py). A report
sums them over the display history (every branch: a regenerated answer was paid for too), for one
owner, optionally between two moments. `Tally` does the sums for every store: the SQL store feeds it
the rows of one query (navi/storage/usage.py), the in-memory store its sessions.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field


class UsageTotals(BaseModel):
    """Sums over assistant messages that carry a model call's usage."""

    messages: int = Field(
        default=0, description="Assistant messages with usage (answers and tool-calling steps)"
    )
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cost: float | None = Field(
        default=None, description="USD, summed over the messages that have a cost; null when none has one"
    )
    priced_messages: int = Field(default=0, description="How many of the messages have a cost")
    estimated: bool = Field(default=False, description="Some counts are Navi's estimate, not the server's")

    def add(self, meta: Mapping[str, Any]) -> bool:
        """Count one message's metadata; False (nothing counted) when it has no usage."""
        usage = meta.get("usage")
        if not isinstance(usage, Mapping):
            return False
        prompt, completion = _int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens"))
        total = usage.get("total_tokens")
        self.messages += 1
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        self.total_tokens += _int(total) if isinstance(total, int) else prompt + completion
        self.estimated = self.estimated or usage.get("estimated") is True
        cost = meta.get("cost")
        if isinstance(cost, int | float) and not isinstance(cost, bool):
            self.cost = round((self.cost or 0.0) + cost, 8)
            self.priced_messages += 1
        return True


class ConversationUsage(UsageTotals):
    session_id: str
    name: str | None = None


class UsageReport(BaseModel):
    """`GET /usage`: one user's totals, overall and per conversation (most tokens first)."""

    user: str
    since: datetime | None = None
    until: datetime | None = None
    total: UsageTotals = Field(default_factory=UsageTotals)
    conversations: list[ConversationUsage] = Field(default_factory=list)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


class Tally:
    """A report built one stored message at a time."""

    def __init__(self, user: str, since: datetime | None = None, until: datetime | None = None) -> None:
        self.report = UsageReport(user=user, since=since, until=until)
        self._by_session: dict[str, ConversationUsage] = {}

    def within(self, created_at: datetime) -> bool:
        """Whether a message written at `created_at` counts (since ≤ it < until)."""
        report = self.report
        return (report.since is None or created_at >= report.since) and (
            report.until is None or created_at < report.until
        )

    def add(self, session_id: str, name: str | None, meta: Mapping[str, Any]) -> None:
        conversation = self._by_session.get(session_id)
        if conversation is None:
            conversation = ConversationUsage(session_id=session_id, name=name)
        if conversation.add(meta):
            self._by_session[session_id] = conversation
            self.report.total.add(meta)

    def done(self) -> UsageReport:
        self.report.conversations = sorted(
            self._by_session.values(), key=lambda c: (-c.total_tokens, c.session_id)
        )
        return self.report
