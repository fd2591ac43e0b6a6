"""Non-streaming turns (`POST /sessions/{id}/messages`), messages that wait while a turn runs
(`mode`, 202), messages stored without an answer (`"respond": false`), and stopping a run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from fastapi import Response
from pydantic import BaseModel, Field

from navi.agent.said import signed
from navi.agent.turns import TurnOptions
from navi.api.deps import (
    CurrentUser,
    OwnedSessionId,
    RunsDep,
    RuntimeDep,
    SessionDep,
    SharedFilesDep,
    UploadsDep,
)
from navi.api.errors import BadRequest, NotFound, settled_answer
from navi.api.routing import api_router
from navi.api.websocket import FrameError, bring_files, checked_message
from navi.llm.attached import stored
from navi.llm.messages import Message, ToolCall, with_files
from navi.llm.meta import MessageMeta
from navi.protocol import QueueMode, Sender, parse_message, sender_problem

router = api_router(prefix="/sessions", tags=["messages"])
STORABLE_ROLES = ("user", "assistant", "tool")

NOT_PLANNED = TurnOptions(planning=False)  # a REST turn answers at once: no planning phase


class CallIn(BaseModel):
    """A tool call of a stored assistant message (so a stored tool result has its call)."""

    id: str = Field(..., min_length=1, max_length=200)
    name: str = Field(..., min_length=1, max_length=200)
    arguments: dict[str, Any] = Field(default_factory=dict)


class SendMessage(BaseModel):
    content: str = ""
    images: list[str] = Field(default_factory=list)
    files: list[dict[str, str]] = Field(default_factory=list)
    respond: bool = Field(True, description="false: store the message without running the model")
    role: str = Field("user", description='With "respond": false: "user", "assistant" or "tool"')
    tool_calls: list[CallIn] = Field(default_factory=list, description="An assistant message's calls")
    tool_call_id: str | None = Field(None, max_length=200, description="The call a tool message answers")
    name: str | None = Field(
        None,
        max_length=200,
        description="Who wrote the message (at most 64 characters); a tool message's tool",
    )
    location: str | None = Field(
        None, description="Where its writer is, in their words (at most 256 characters)"
    )
    metadata: dict[str, Any] | None = Field(
        None, description="The client's own keys, kept with the message (a JSON object, at most 4,096 bytes)"
    )
    mode: QueueMode = Field(
        "queue",
        description='While a turn runs: "queue" runs the message after it (and what waits already), '
        '"steer" gives it to the running turn\'s next model call. Either way the answer is 202 `Waiting`.',
    )


class Answer(BaseModel):
    session_id: str
    content: str
    context_tokens: int
    max_context_tokens: int
    stopped: bool = False
    finish_reason: str = "stop"  # "length" when the answer was cut off by its token cap


class Waiting(BaseModel):
    """A message sent while a turn runs: it waits (`GET /sessions/{id}/queue`), and its answer
    comes as a turn of its own (`"queue"`) or within the running one (`"steer"`)."""

    session_id: str
    message_id: str
    mode: QueueMode
    position: int
    queued: bool = True


class Stored(BaseModel):
    session_id: str
    message_id: str
    role: str


class StopResult(BaseModel):
    ok: bool
    reason: str | None = None


@router.post(
    "/{session_id}/messages",
    response_model=Answer | Stored | Waiting,
    summary="Send a message and wait for the answer, queue it behind the running turn, or store it",
    responses={202: {"model": Waiting, "description": "A turn runs: the message waits (queue or steer)"}},
)
async def send_message(
    body: SendMessage,
    session: SessionDep,
    uploads: UploadsDep,
    runs: RunsDep,
    shared: SharedFilesDep,
    response: Response,
) -> Answer | Stored | Waiting:
    try:  # JSON may escape lone surrogates (\ud800): no text, and nothing a database can store
        json.dumps(body.model_dump(), ensure_ascii=False).encode()
    except UnicodeEncodeError:
        raise BadRequest("the message is not valid Unicode (a lone surrogate)") from None
    if body.role not in STORABLE_ROLES:
        raise BadRequest(
            f"role {body.role!r} cannot be stored: send user, assistant or tool (Navi composes the "
            "system prompt itself, so a session holds no system messages)"
        )
    if body.respond and body.role != "user":
        raise BadRequest(
            f'only a user message is answered; send "respond": false to store a {body.role} message'
        )
    sender = _sender(body)
    if body.files:  # uploaded through a worker on another machine: brought here first
        await bring_files(shared, json.dumps({"files": body.files}), session.id, uploads.root)
    if not body.respond:
        message = signed(_message(body, session.id, uploads.root), sender)
        await runs.append(session.id, [message])
        return Stored(session_id=session.id, message_id=message.id, role=message.role)
    asked = checked_message(parse_message(_said(body)), session.id, uploads.root, sender)
    sent = await runs.queueing.send(session.id, session.owner, asked, mode=body.mode, options=NOT_PLANNED)
    run = sent.run
    if run is None:
        assert sent.queued is not None
        response.status_code = 202
        return Waiting(
            session_id=session.id, message_id=sent.queued.message_id, mode=body.mode, position=sent.position
        )
    return Answer(session_id=session.id, **await settled_answer(run))


def _sender(body: SendMessage) -> Sender | None:
    """The message's name (not a tool message's: that names its tool), location and metadata,
    checked as a `message` frame's are (`FrameError`, 422, says what is wrong)."""
    said: dict[str, Any] = {"name": None if body.role == "tool" else body.name, "location": body.location}
    said["metadata"] = body.metadata
    if (problem := sender_problem(said)) is not None:
        raise FrameError(problem)
    return Sender.of(said)


def _said(body: SendMessage) -> dict[str, Any]:
    """What a user's message says, for the same check a message frame gets."""
    return {"content": body.content, "images": body.images, "files": body.files}


def _message(body: SendMessage, session_id: str, files_root: Path) -> Message:
    """The message `"respond": false` stores, checked as strictly as one that is answered."""
    if body.role != "user" and (body.images or body.files):
        raise BadRequest("images and files belong to user messages")
    if body.role != "assistant" and body.tool_calls:
        raise BadRequest("tool_calls belong to assistant messages")
    if body.role == "user":
        said = checked_message(parse_message(_said(body)), session_id, files_root)
        metadata = MessageMeta(files=stored(said.files)) if said.files else MessageMeta()
        return Message.user(with_files(said.content, said.files), images=list(said.images), metadata=metadata)
    if body.role == "assistant":
        if not body.content.strip() and not body.tool_calls:
            raise BadRequest("an assistant message needs content or tool_calls")
        calls = [ToolCall(id=c.id, name=c.name, arguments=c.arguments) for c in body.tool_calls]
        return Message.assistant(body.content or None, tool_calls=calls)
    if not body.tool_call_id:
        raise BadRequest("a tool message needs tool_call_id: the id of the assistant's call it answers")
    return Message(role="tool", content=body.content, tool_call_id=body.tool_call_id, name=body.name)


@router.post("/{session_id}/stop", response_model=StopResult, summary="Stop the running turn (cooperative)")
async def stop(session_id: OwnedSessionId, runs: RunsDep) -> StopResult:
    """Stopping nothing is not an error. A session that does not exist, or is another user's,
    is 404 like on every other route of a session."""
    if await runs.controls.stop(session_id):
        return StopResult(ok=True)
    return StopResult(ok=False, reason="no active run")


class Feedback(BaseModel):
    rating: Literal["up", "down"] | None = Field(description="👍 (up), 👎 (down), or null to take it back.")


class Rated(BaseModel):
    message_id: str
    rating: Literal["up", "down"] | None


@router.put(
    "/{session_id}/messages/{message_id}/feedback",
    response_model=Rated,
    summary="Rate an answer: 👍 or 👎 (kept with the message, shown in the debug panel, archived)",
)
async def rate(
    session_id: OwnedSessionId, message_id: str, body: Feedback, runtime: RuntimeDep, user: CurrentUser
) -> Rated:
    """404 when the session has no such answer (a user message, a tool result, another's session)."""
    if not await runtime.sessions.set_feedback(session_id, message_id, body.rating, owner=user):
        raise NotFound(f"no answer {message_id} in session {session_id}")
    return Rated(message_id=message_id, rating=body.rating)
