"""Long-term memory: facts (list, search, forget), the summary, and running extraction now."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query
from pydantic import BaseModel

from navi.api.deps import CurrentUser, RuntimeDep
from navi.api.errors import NotFound
from navi.api.routing import api_router
from navi.memory.base import Fact

router = api_router(prefix="/memory", tags=["memory"])
MAX_FACT_ID = 2**31 - 1  # the id column is a 32-bit integer on PostgreSQL; larger ids cannot exist


class Summary(BaseModel):
    summary: str | None


class Extraction(BaseModel):
    sessions: int
    facts: int
    failed: list[str]


@router.get("/facts", response_model=list[Fact], summary="Remembered facts, or those matching ?q=")
async def facts(
    runtime: RuntimeDep,
    user: CurrentUser,
    q: Annotated[str | None, Query(max_length=500, description="Search words (any may match)")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
) -> list[Fact]:
    if q:
        return await runtime.memory.search_facts(q, owner=user, limit=limit)
    return await runtime.memory.get_all_facts(owner=user, limit=limit)


@router.delete("/facts/{fact_id}", summary="Forget one fact")
async def forget(
    fact_id: Annotated[int, Path(ge=1, le=MAX_FACT_ID, description="The fact's id")],
    runtime: RuntimeDep,
    user: CurrentUser,
) -> dict[str, bool]:
    if not await runtime.memory.delete_fact_by_id(fact_id, owner=user):
        raise NotFound(f"no fact {fact_id}")
    await runtime.extractor.refresh_summary(user)
    return {"ok": True}


@router.get("/summary", response_model=Summary, summary="The summary injected into every conversation")
async def summary(runtime: RuntimeDep, user: CurrentUser) -> Summary:
    return Summary(summary=await runtime.memory.get_summary(owner=user))


@router.post("/extract", response_model=Extraction, summary="Read idle sessions for facts now")
async def extract(runtime: RuntimeDep, user: CurrentUser) -> Extraction:
    report = await runtime.extractor.run_pending(owner=user)
    return Extraction(sessions=report.sessions, facts=report.facts, failed=report.failed)
