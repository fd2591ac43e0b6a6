"""Approvals over REST: what a session's run waits on, and answering it.

The same answers as the WebSocket's `approval` frame, for clients without a socket — e.g. one
waiting in `POST /sessions/{id}/messages` while another request approves the call.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field

from navi.agent.approvals import Decision
from navi.api.deps import RunsDep, SessionDep

router = APIRouter(prefix="/sessions", tags=["approvals"])


class ApprovalAnswer(BaseModel):
    decision: Decision = Field(..., description="allow (this call), deny, or always (remember it)")


class ApprovalAnswered(BaseModel):
    ok: bool = True
    call_id: str
    decision: Decision


class WaitingApproval(BaseModel):
    call_id: str
    tool: str
    args: dict[str, Any]
    reason: str
    always_scope: str | None = None
    is_subagent: bool = False


@router.get(
    "/{session_id}/approvals",
    response_model=list[WaitingApproval],
    summary="The tool calls waiting for approval in this session's run",
)
async def waiting(session: SessionDep, runs: RunsDep) -> list[WaitingApproval]:
    return [WaitingApproval(**item) for item in runs.waiting(session.id)]


@router.post(
    "/{session_id}/approvals/{call_id}",
    response_model=ApprovalAnswered,
    summary="Answer a tool call waiting for approval",
)
async def answer(call_id: str, body: ApprovalAnswer, session: SessionDep, runs: RunsDep) -> ApprovalAnswered:
    runs.approve(session.id, call_id, body.decision)  # ApprovalNotFound → 404
    return ApprovalAnswered(call_id=call_id, decision=body.decision)
