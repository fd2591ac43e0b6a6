"""Session resources: archives (export / import)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, HTTPException
from pydantic import BaseModel

from navi.api.deps import RuntimeDep, SessionDep
from navi.sessions.archive import ArchiveError, import_archive

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
