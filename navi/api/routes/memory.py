"""Long-term memory: facts (list, search, add, edit, history, source, forget), the summary, and
running extraction now. Every route acts on the caller's own facts; another user's fact answers 404."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query
from pydantic import BaseModel, ConfigDict, StringConstraints

from navi.api.deps import CurrentUser, RuntimeDep
from navi.api.errors import BadRequest, NotFound
from navi.api.routing import api_router
from navi.memory.base import Fact, UpsertOutcome, clean_fact
from navi.memory.earlier import FactSource, fact_source

router = api_router(prefix="/memory", tags=["memory"])
MAX_FACT_ID = 2**31 - 1  # the id column is a 32-bit integer on PostgreSQL; larger ids cannot exist


FactId = Annotated[int, Path(ge=1, le=MAX_FACT_ID, description="The fact's id")]
Label = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64)]
Key = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=128)]
Value = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=1000)]


class NewFact(BaseModel):
    model_config = ConfigDict(extra="forbid")
    category: Label
    key: Key
    value: Value


class FactEdit(BaseModel):
    model_config = ConfigDict(extra="forbid")
    value: Value


class FactChange(BaseModel):
    fact: Fact
    # created: a new fact; updated: the old value went to the history; confirmed: the same value
    outcome: UpsertOutcome


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
    history: Annotated[bool, Query(description="With ?q=: former values too, after current ones")] = False,
) -> list[Fact]:
    if q:
        return await runtime.memory.search_facts(q, owner=user, limit=limit, history=history)
    return await runtime.memory.get_all_facts(owner=user, limit=limit)


@router.post("/facts", response_model=FactChange, summary="Add a fact (a new value replaces the old)")
async def add(body: NewFact, runtime: RuntimeDep, user: CurrentUser) -> FactChange:
    try:
        category, key, value = clean_fact(body.category, body.key, body.value)
    except ValueError as exc:  # a category or key of punctuation only
        raise BadRequest(str(exc)) from exc
    fact, outcome = await runtime.memory.upsert_fact(category, key, value, owner=user, source="added")
    if outcome != "confirmed":
        runtime.background(runtime.extractor.refresh_summary(user))
    return FactChange(fact=fact, outcome=outcome)


@router.patch("/facts/{fact_id}", response_model=FactChange, summary="Give a fact a new value")
async def edit(fact_id: FactId, body: FactEdit, runtime: RuntimeDep, user: CurrentUser) -> FactChange:
    fact = await runtime.memory.get_fact(fact_id, owner=user)
    if fact is None:
        raise NotFound(f"no fact {fact_id}")
    if not fact.current:
        raise BadRequest(f"fact {fact_id} is a former value; edit the current one ({fact.replaced_by})")
    changed = await runtime.memory.edit_fact(fact_id, body.value, owner=user)
    if changed is None:  # forgotten between the two reads
        raise NotFound(f"no fact {fact_id}")
    if changed[1] != "confirmed":
        runtime.background(runtime.extractor.refresh_summary(user))
    return FactChange(fact=changed[0], outcome=changed[1])


@router.get("/facts/{fact_id}/history", response_model=list[Fact], summary="A fact's former values")
async def fact_history(fact_id: FactId, runtime: RuntimeDep, user: CurrentUser) -> list[Fact]:
    if await runtime.memory.get_fact(fact_id, owner=user) is None:
        raise NotFound(f"no fact {fact_id}")
    return await runtime.memory.fact_history(fact_id, owner=user)


@router.get(
    "/facts/{fact_id}/source",
    response_model=FactSource | None,
    summary="Where a fact came from: its session and message",
)
async def source(fact_id: FactId, runtime: RuntimeDep, user: CurrentUser) -> FactSource | None:
    """The session the fact was said in and the person's message there that holds its value
    (`message_id` null when none does); null for a fact added by hand or whose session is gone."""
    fact = await runtime.memory.get_fact(fact_id, owner=user)
    if fact is None:
        raise NotFound(f"no fact {fact_id}")
    return await fact_source(runtime.sessions, fact, owner=user)


@router.delete("/facts/{fact_id}", summary="Delete one fact and its history")
async def forget(fact_id: FactId, runtime: RuntimeDep, user: CurrentUser) -> dict[str, bool]:
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
