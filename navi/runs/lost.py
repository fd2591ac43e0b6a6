"""What is left of a turn whose worker died: the user's message is stored (it was committed before
`stream_start` acknowledged it), so the turn is recorded as failed with `worker_lost` under it —
the same display-only record the engine keeps for any failed turn — and Retry runs it again.
"""

from __future__ import annotations

from navi.agent.events import ErrorEvent
from navi.llm.messages import Message
from navi.sessions.store import SessionStore

LOST = (
    "the Navi process running this turn stopped before it finished (worker lost); "
    "what it had saved is kept — retry to run the turn again"
)


def lost_error() -> ErrorEvent:
    return ErrorEvent(message=LOST, code="worker_lost")


def _answered(after: list[Message]) -> bool:
    """Whether the messages after a user's message hold the turn's final answer."""
    return any(
        m.role == "assistant"
        and not m.tool_calls
        and not m.is_plan
        and not m.metadata.get("interrupted")
        and not m.metadata.get("error")
        for m in after
    )


async def record_lost(sessions: SessionStore, session_id: str) -> bool:
    """Record the session's latest turn as failed with `worker_lost`, unless it answered or is
    recorded as failed already. True when a record was added."""
    session = await sessions.get(session_id)
    if session is None or not session.messages or session.messages[-1].metadata.get("error"):
        return False
    last_user = next(
        (i for i in range(len(session.messages) - 1, -1, -1) if session.messages[i].role == "user"), None
    )
    if last_user is None or _answered(session.messages[last_user + 1 :]):
        return False
    error = lost_error()
    record = Message.assistant(
        error.message,
        metadata={
            "error": {"code": error.code, "message": error.message},
            "failed_turn": session.messages[last_user].id,
        },
    )
    await sessions.append(session_id, display=[record])
    return True
