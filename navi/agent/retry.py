"""Failed turns and running them again.

A turn that ends with an error leaves a record of it in the display history, never in the context:
an assistant message whose metadata holds the `error` and the id of the user message of the turn
(`failed_turn`). A client that reloads on the error sees what failed, under the message, with
Retry. A retry runs that turn again on its stored message (nothing is stored twice) and marks its
answer `retry_of` that message.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence

from navi.agent.events import ErrorEvent
from navi.agent.run import RunState
from navi.llm.messages import Message
from navi.llm.meta import MessageMeta, TurnError
from navi.sessions.store import SessionNotFound, SessionStore

NOTHING_TO_RETRY = "there is no failed turn to retry in this session"


def failure_record(user: Message, error: ErrorEvent) -> Message:
    """The display-only record of the failed turn on `user`'s message."""
    meta = MessageMeta(error=TurnError(code=error.code, message=error.message), failed_turn=user.id)
    return Message.assistant(error.message, metadata=meta)


async def record_failure(
    sessions: SessionStore, session_id: str, user: Message, error: ErrorEvent
) -> ErrorEvent:
    """Keep a failed turn's `error` in the display history (for the page and Retry); the model
    never sees it."""
    with contextlib.suppress(SessionNotFound):  # deleted meanwhile: nothing left to mark
        await sessions.append(session_id, display=[failure_record(user, error)])
    return error


async def failed_turn(sessions: SessionStore, session_id: str) -> Message | None:
    """The user message of the session's latest turn, if that turn failed."""
    session = await sessions.get(session_id)
    return latest_failure(session.messages if session is not None else [])


def latest_failure(messages: Sequence[Message]) -> Message | None:
    """The user message of the latest turn of a display history, if that turn failed — or the
    history's last message, when that is a question nothing answered yet (a regeneration moved
    the session's branch there, navi/runs/branching.py)."""
    last = messages[-1] if messages else None
    if last is not None and last.role == "user" and not last.is_summary and not last.metadata.synthetic:
        return last
    wanted = last.metadata.failed_turn if last is not None and last.metadata.error is not None else None
    return next((m for m in reversed(messages) if m.role == "user" and m.id == wanted), None)


async def drop_broken_answer(
    sessions: SessionStore, run: RunState, view_tokens: Callable[[Sequence[Message]], int]
) -> None:
    """Before a retry: leave out of the context the text a broken stream left at its end.

    As the last message it would be a prefill the model continues, and after the new answer a
    fragment merged into it. The display history keeps it. `view_tokens` estimates a context as
    a model call sends it.
    """
    kept = list(run.context)
    while kept and kept[-1].role == "assistant" and kept[-1].metadata.interrupted:
        kept.pop()
    if len(kept) == len(run.context):
        return
    run.context = kept
    run.counted(run.fixed + view_tokens(kept))
    await sessions.replace_context(run.ctx.session_id, kept, context_token_count=run.tokens)
