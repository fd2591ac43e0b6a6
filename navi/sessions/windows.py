"""Windows of history: the last N messages, a time range, or what fits a token budget.

A window never starts inside a tool exchange (a result without the call that asked for it), and
when a token-budget window had to leave older messages out, the session's latest summary can be
put in front so the reader still knows what came before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from navi.llm.messages import Message
from navi.llm.tokens import estimate_message_tokens
from navi.sessions.models import as_utc


def _drop_orphan_results(messages: list[Message]) -> list[Message]:
    start = 0
    while start < len(messages) and messages[start].role == "tool":
        start += 1
    return messages[start:]


def window(
    messages: Sequence[Message],
    *,
    last_n: int | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    token_budget: int | None = None,
    summary: Message | None = None,
    count_tokens: Callable[[Message], int] = estimate_message_tokens,
) -> list[Message]:
    """Select part of `messages` (oldest first). Filters combine: time range, then last N, then budget."""
    if last_n is not None and last_n < 0:
        raise ValueError("last_n must be zero or more")
    if token_budget is not None and token_budget < 0:
        raise ValueError("token_budget must be zero or more")
    selected = list(messages)
    if since is not None:
        lo = as_utc(since)
        selected = [m for m in selected if as_utc(m.created_at) >= lo]
    if until is not None:
        hi = as_utc(until)
        selected = [m for m in selected if as_utc(m.created_at) <= hi]
    if last_n is not None:
        selected = selected[len(selected) - last_n :] if last_n else []
    if token_budget is None:
        return _drop_orphan_results(selected)
    cut = len(selected) < len(messages)
    kept: list[Message] = []
    budget = token_budget
    for msg in reversed(selected):
        cost = count_tokens(msg)
        if cost > budget:
            cut = True
            break
        kept.append(msg)
        budget -= cost
    kept.reverse()
    kept = _drop_orphan_results(kept)
    if summary is not None and (cut or len(kept) < len(selected)):
        # Make room for the summary by dropping the oldest kept messages if needed.
        room = token_budget - count_tokens(summary)
        while kept and sum(count_tokens(m) for m in kept) > room:
            kept.pop(0)
        kept = _drop_orphan_results(kept)
        if room >= 0:
            return [summary, *kept]
    return kept
