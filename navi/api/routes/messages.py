"""Non-streaming turns (`POST /sessions/{id}/messages`) and stopping a run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from navi.api.deps import RunsDep, RuntimeDep, SessionDep
from navi.api.errors import RunFailed
from navi.api.routing import api_router
from navi.api.websocket import parse_frame

router = api_router(prefix="/sessions", tags=["messages"])


class SendMessage(BaseModel):
    content: str = Field(..., min_length=1)
    images: list[str] = Field(default_factory=list)
    files: list[dict[str, str]] = Field(default_factory=list)


class Answer(BaseModel):
    session_id: str
    content: str
    context_tokens: int
    max_context_tokens: int
    stopped: bool = False
    finish_reason: str = "stop"  # "length" when the answer was cut off by its token cap


class StopResult(BaseModel):
    ok: bool
    reason: str | None = None


@router.post(
    "/{session_id}/messages", response_model=Answer, summary="Send a message and wait for the answer"
)
async def send_message(body: SendMessage, session: SessionDep, runtime: RuntimeDep, runs: RunsDep) -> Answer:
    frame = {"type": "message", "content": body.content, "images": body.images, "files": body.files}
    files_root = Path(runtime.settings.session_files_dir)
    content, images, files = parse_frame(json.dumps(frame), session.id, files_root)
    run = runs.start(session.id, content, images, files, planning=False)
    await run.settled.wait()  # the answer, not the post-turn work after it
    result: dict[str, Any] = run.result or {}
    if result.get("type") == "error":
        raise RunFailed(result.get("message", "the run failed"), result.get("code", "internal"))
    if result.get("type") != "stream_end":
        return Answer(session_id=session.id, content="", context_tokens=0, max_context_tokens=0, stopped=True)
    return Answer(
        session_id=session.id,
        content=result["content"],
        context_tokens=result["context_tokens"],
        max_context_tokens=result["max_context_tokens"],
        finish_reason=result.get("finish_reason", "stop"),
    )


@router.post("/{session_id}/stop", response_model=StopResult, summary="Stop the running turn (cooperative)")
async def stop(session_id: str, runs: RunsDep) -> StopResult:
    if runs.stop(session_id):
        return StopResult(ok=True)
    return StopResult(ok=False, reason="no active run")
