"""`GET /usage`: what a user's conversations cost, summed from their stored answers (issue 48)."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Annotated

from fastapi import Query

from navi.api.deps import CurrentUser, RuntimeDep
from navi.api.errors import BadRequest, OwnerOnly
from navi.api.routing import api_router
from navi.sessions.models import DEFAULT_OWNER
from navi.sessions.usage import UsageReport

router = api_router(tags=["usage"])


def _day(day: date) -> datetime:
    return datetime.combine(day, time(), tzinfo=UTC)


@router.get("/usage", response_model=UsageReport, summary="Tokens and cost of your conversations")
async def usage(
    runtime: RuntimeDep,
    user: CurrentUser,
    since: Annotated[
        date | None, Query(description="Answers written on or after this day (UTC), YYYY-MM-DD")
    ] = None,
    until: Annotated[
        date | None, Query(description="Answers written on or before this day (UTC), YYYY-MM-DD")
    ] = None,
    of: Annotated[
        str | None,
        Query(alias="user", max_length=128, description="Whose usage (the owner only; default: yours)"),
    ] = None,
) -> UsageReport:
    """The assistant messages' model calls — answers and the steps that called tools, every branch —
    summed per conversation (most tokens first) and overall: messages, prompt, completion and total
    tokens, and the cost in USD where the model has a price (`LLM_PRICE_PER_MTOK`)."""
    if of is not None and of != user and user != DEFAULT_OWNER:
        raise OwnerOnly("only Navi's owner may read another user's usage")
    if since is not None and until is not None and since > until:
        raise BadRequest("`since` is after `until`")
    return await runtime.sessions.usage(
        owner=of or user,
        since=_day(since) if since else None,
        until=_day(until + timedelta(days=1)) if until and until < date.max else None,
    )
