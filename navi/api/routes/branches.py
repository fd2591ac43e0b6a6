"""A session's tree over REST: edit a user message, regenerate an answer, continue a cut-off one
(each waits for the new answer, as `POST /sessions/{id}/messages` does), switch the active branch,
fork a session at a message. The streaming equivalents are the `edit`, `regenerate`, `continue` and
`switch` frames."""

from __future__ import annotations

from pydantic import BaseModel, Field

from navi.agent import branches
from navi.api.deps import CurrentUser, OwnedSessionId, RunsDep, RuntimeDep
from navi.api.errors import settled_answer
from navi.api.routing import api_router
from navi.runs import AgentRun, branching

router = api_router(prefix="/sessions", tags=["branches"])


class Edit(BaseModel):
    content: str = Field(..., min_length=1, description="The message's new text")


class MessageRef(BaseModel):
    message_id: str = Field(..., min_length=1, max_length=64)


class BranchAnswer(BaseModel):
    session_id: str
    parent_id: str | None = Field(
        description="The message the new branch hangs below (null: a new first message)"
    )
    content: str
    context_tokens: int
    max_context_tokens: int
    stopped: bool = False
    finish_reason: str = "stop"


class Switched(BaseModel):
    session_id: str
    active_leaf: str = Field(description="The leaf the display now shows and the next turn follows")


class Forked(BaseModel):
    session_id: str = Field(description="The new session")
    forked_from: str
    message_id: str
    messages: int
    name: str | None = None


async def _answer(run: AgentRun, session_id: str, parent: str | None) -> BranchAnswer:
    return BranchAnswer(session_id=session_id, parent_id=parent, **await settled_answer(run))


@router.post(
    "/{session_id}/messages/{message_id}/edit",
    response_model=BranchAnswer,
    summary="Edit a user message: a new branch from its parent, answered",
)
async def edit_message(
    session_id: OwnedSessionId, message_id: str, body: Edit, runs: RunsDep, user: CurrentUser
) -> BranchAnswer:
    if not body.content.strip():
        raise branching.NotBranchable("content is required and must be non-empty text")
    run = await branching.edit(runs, session_id, message_id, body.content, owner=user, planning=False)
    return await _answer(run, session_id, run.branch if isinstance(run.branch, str) else None)


@router.post(
    "/{session_id}/messages/{message_id}/regenerate",
    response_model=BranchAnswer,
    summary="A new answer to a question, beside the old one",
)
async def regenerate_message(
    session_id: OwnedSessionId, message_id: str, runs: RunsDep, user: CurrentUser
) -> BranchAnswer:
    run = await branching.regenerate(runs, session_id, message_id, owner=user, planning=False)
    return await _answer(run, session_id, run.branch if isinstance(run.branch, str) else None)


@router.post(
    "/{session_id}/messages/{message_id}/continue",
    response_model=BranchAnswer,
    summary="Go on with the latest answer, which the token cap cut off",
)
async def continue_message(
    session_id: OwnedSessionId, message_id: str, runs: RunsDep, user: CurrentUser
) -> BranchAnswer:
    run = await branching.continue_answer(runs, session_id, message_id, owner=user)
    return await _answer(run, session_id, message_id)


@router.post("/{session_id}/branch", response_model=Switched, summary="Make another branch the active one")
async def switch_branch(
    session_id: OwnedSessionId, body: MessageRef, runs: RunsDep, user: CurrentUser
) -> Switched:
    leaf = await branching.switch(runs, session_id, body.message_id, owner=user)
    return Switched(session_id=session_id, active_leaf=leaf)


@router.post(
    "/{session_id}/fork",
    response_model=Forked,
    status_code=201,
    summary="A new session holding this one's path up to a message",
)
async def fork_session(
    session_id: OwnedSessionId, body: MessageRef, runtime: RuntimeDep, user: CurrentUser
) -> Forked:
    copy = await branches.fork(runtime.sessions, session_id, body.message_id, owner=user)
    return Forked(
        session_id=copy.id,
        forked_from=session_id,
        message_id=body.message_id,
        messages=len(copy.messages),
        name=copy.name,
    )
