"""Approvals over REST: what a session's run waits on, answering it, and the remembered answers;
likewise the questions MCP servers ask the user during a call (elicitations).

The same answers as the WebSocket's `approval` frame, for clients without a socket — e.g. one
waiting in `POST /sessions/{id}/messages` while another request approves the call. "Always" answers
are listed at `GET /approvals/remembered` and forgotten with `DELETE`, so none is for ever.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import Path, Query
from pydantic import BaseModel, Field

from navi.agent.approvals import Decision
from navi.api.deps import CurrentUser, RunsDep, RuntimeDep, SessionDep
from navi.api.errors import NotFound
from navi.api.routing import api_router

router = api_router(tags=["approvals"])


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
    "/sessions/{session_id}/approvals",
    response_model=list[WaitingApproval],
    summary="The tool calls waiting for approval in this session's run",
)
async def waiting(session: SessionDep, runs: RunsDep) -> list[WaitingApproval]:
    return [WaitingApproval(**item) for item in await runs.controls.waiting(session.id)]


@router.post(
    "/sessions/{session_id}/approvals/{call_id}",
    response_model=ApprovalAnswered,
    summary="Answer a tool call waiting for approval",
)
async def answer(call_id: str, body: ApprovalAnswer, session: SessionDep, runs: RunsDep) -> ApprovalAnswered:
    await runs.controls.approve(session.id, call_id, body.decision)  # ApprovalNotFound → 404
    return ApprovalAnswered(call_id=call_id, decision=body.decision)


class ElicitationAnswer(BaseModel):
    action: Literal["accept", "decline", "cancel"] = Field(
        ..., description="accept (with the form's content, or consent to open the URL), decline, cancel"
    )
    content: dict[str, str | int | float | bool | list[str]] | None = Field(
        None, description="form mode, with accept: the fields, checked against the question's schema"
    )


class ElicitationAnswered(BaseModel):
    ok: bool = True
    elicitation_id: str
    action: Literal["accept", "decline", "cancel"]


@router.get(
    "/sessions/{session_id}/elicitations",
    response_model=list[dict[str, Any]],
    summary="The questions MCP servers ask the user in this session's run",
)
async def questions(session: SessionDep, runs: RunsDep) -> list[dict[str, Any]]:
    return await runs.controls.questions(session.id)  # wherever the run waits


@router.post(
    "/sessions/{session_id}/elicitations/{elicitation_id}",
    response_model=ElicitationAnswered,
    summary="Answer an MCP server's question (elicitation)",
)
async def answer_question(
    elicitation_id: Annotated[str, Path(max_length=200)],
    body: ElicitationAnswer,
    session: SessionDep,
    runs: RunsDep,
) -> ElicitationAnswered:
    # ElicitationNotFound → 404, ElicitationInvalid → 422 (the question keeps waiting)
    await runs.controls.answer_question(session.id, elicitation_id, body.action, body.content)
    return ElicitationAnswered(elicitation_id=elicitation_id, action=body.action)


class Remembered(BaseModel):
    tool: str
    program: str | None = Field(None, description="for terminal: the program; null: every call of the tool")
    created_at: datetime


class Forgotten(BaseModel):
    ok: bool = True


@router.get(
    "/approvals/remembered",
    response_model=list[Remembered],
    summary='The "always" answers: calls that run without asking',
)
async def remembered(runtime: RuntimeDep, user: CurrentUser) -> list[Remembered]:
    grants = await runtime.approvals.grants.grants(user)
    return [Remembered(tool=g.tool, program=g.subject or None, created_at=g.created_at) for g in grants]


@router.delete(
    "/approvals/remembered/{tool}",
    response_model=Forgotten,
    summary='Forget an "always" answer: those calls ask again',
)
async def forget(
    tool: Annotated[str, Path(max_length=128)],
    runtime: RuntimeDep,
    user: CurrentUser,
    program: str | None = Query(
        None, max_length=512, description="for terminal: the program whose answer to forget"
    ),
) -> Forgotten:
    if not await runtime.approvals.grants.revoke(user, tool, program or ""):
        what = f"{tool} ({program})" if program else tool
        raise NotFound(f"no remembered answer for {what}")
    return Forgotten()
