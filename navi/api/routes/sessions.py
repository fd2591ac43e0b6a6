"""Session resources: archives (export / import)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Body, HTTPException, Query
from pydantic import BaseModel

from navi.api.deps import RuntimeDep, SessionDep
from navi.llm.messages import Message
from navi.sessions.archive import ArchiveError, import_archive
from navi.sessions.windows import window

router = APIRouter(prefix="/sessions", tags=["sessions"])


class Imported(BaseModel):
    session_id: str
    messages: int


@router.get("/{session_id}/export", summary="Export a session as session-archive/v1 JSON")
async def export_session(session: SessionDep, runtime: RuntimeDep) -> dict[str, Any]:
    return runtime.export_archive(session)


@router.post(
    "/import", status_code=201, response_model=Imported, summary="Import a session-archive/v1 document"
)
async def import_session(runtime: RuntimeDep, archive: dict[str, Any] = Body(...)) -> Imported:
    try:
        session = import_archive(archive)
    except ArchiveError as exc:
        raise HTTPException(status_code=422, detail=str(exc)) from None
    await runtime.sessions.insert(session)
    return Imported(session_id=session.id, messages=len(session.messages))


class Window(BaseModel):
    messages: list[Message]
    total: int
    summary_prepended: bool


@router.get("/{session_id}/messages", response_model=Window, summary="A window of the display history")
async def history_window(
    session: SessionDep,
    last: Annotated[int | None, Query(ge=0, description="Only the last N messages")] = None,
    since: Annotated[datetime | None, Query(description="Messages at or after this time (ISO 8601)")] = None,
    until: Annotated[datetime | None, Query(description="Messages at or before this time (ISO 8601)")] = None,
    token_budget: Annotated[
        int | None, Query(ge=0, description="Newest messages that fit this many tokens")
    ] = None,
) -> Window:
    summary = session.summary_message
    chosen = window(
        session.messages, last_n=last, since=since, until=until, token_budget=token_budget, summary=summary
    )
    prepended = bool(chosen) and summary is not None and chosen[0] is summary
    return Window(messages=chosen, total=len(session.messages), summary_prepended=prepended)
