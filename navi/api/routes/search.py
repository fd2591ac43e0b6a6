"""`GET /search`: the requesting user's messages across all their sessions (navi/sessions/search.py)."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Annotated

from fastapi import Query

from navi.api.deps import CurrentUser, RuntimeDep
from navi.api.errors import BadRequest
from navi.api.routing import api_router
from navi.sessions.search import MAX_LIMIT, SearchHit, SearchQuery, terms

router = api_router(tags=["search"])


def _day(day: date) -> datetime:
    return datetime.combine(day, time(), tzinfo=UTC)


@router.get("/search", response_model=list[SearchHit], summary="Search the messages of all your sessions")
async def search(
    runtime: RuntimeDep,
    user: CurrentUser,
    q: Annotated[
        str,
        Query(
            min_length=1,
            max_length=1000,
            description="Words, all of which a message must have; the last also matches the start of a "
            "word. Anything but letters and digits separates words (no query syntax).",
        ),
    ],
    from_: Annotated[
        date | None, Query(alias="from", description="Messages on or after this day (UTC), YYYY-MM-DD")
    ] = None,
    to: Annotated[date | None, Query(description="Messages on or before this day (UTC), YYYY-MM-DD")] = None,
    profile: Annotated[str | None, Query(max_length=64, description="Only sessions in this profile")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 20,
) -> list[SearchHit]:
    """Best matches first, each with its session's id and name, the message's id and time, and a
    snippet with `highlights`: (start, end) offsets of the matched words in it."""
    if from_ is not None and to is not None and from_ > to:
        raise BadRequest("`from` is after `to`")
    query = SearchQuery(
        terms(q),
        since=_day(from_) if from_ else None,
        until=_day(to + timedelta(days=1)) if to and to < date.max else None,
        profile=profile or None,
        limit=limit,
    )
    return await runtime.sessions.search(query, owner=user)
