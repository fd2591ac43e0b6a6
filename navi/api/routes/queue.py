"""The messages waiting in a session while a turn runs: listed, edited, cancelled.

A message sent while a turn runs waits (`"mode": "queue"` or `"steer"`, on the WebSocket or
`POST /sessions/{id}/messages`) until it runs, steers, or is cancelled; these routes do what the
`queue_edit` and `queue_cancel` frames do, and every connection hears of it (`queued`,
`queue_cancelled`). One that no longer waits is 404 `not_queued`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, field_validator

from navi.api.deps import RunsDep, SessionDep
from navi.api.routing import api_router

router = api_router(prefix="/sessions", tags=["messages"])


class QueuedMessage(BaseModel):
    message_id: str = Field(description="The id the message is stored under when it runs.")
    mode: str = Field(description='"queue" (runs after the turn) or "steer" (joins its next step)')
    content: str
    position: int = Field(description="Its place among the session's waiting messages, from 1.")
    files: list[str]
    images: int
    created_at: str


class QueueOut(BaseModel):
    session_id: str
    messages: list[QueuedMessage]


class QueueEdit(BaseModel):
    content: str = Field(..., min_length=1)

    @field_validator("content")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("content must be non-empty text")
        return value


def _view(items: list[Any]) -> list[QueuedMessage]:
    return [QueuedMessage(**item.view(i + 1)) for i, item in enumerate(items)]


@router.get("/{session_id}/queue", response_model=QueueOut, summary="The messages waiting in the session")
async def waiting(session: SessionDep, runs: RunsDep) -> QueueOut:
    return QueueOut(session_id=session.id, messages=_view(await runs.queue.waiting(session.id)))


@router.patch(
    "/{session_id}/queue/{message_id}", response_model=QueuedMessage, summary="Edit a waiting message"
)
async def edit(message_id: str, body: QueueEdit, session: SessionDep, runs: RunsDep) -> QueuedMessage:
    item = await runs.queueing.edit(session.id, session.owner, message_id, body.content)
    ids = [w.message_id for w in await runs.queue.waiting(session.id)]
    # Position 0: it started (with the new text) between the edit and this look.
    return QueuedMessage(**item.view(ids.index(message_id) + 1 if message_id in ids else 0))


@router.delete(
    "/{session_id}/queue/{message_id}", response_model=QueueOut, summary="Cancel a waiting message"
)
async def cancel(message_id: str, session: SessionDep, runs: RunsDep) -> QueueOut:
    await runs.queueing.cancel(session.id, session.owner, message_id)
    return QueueOut(session_id=session.id, messages=_view(await runs.queue.waiting(session.id)))
