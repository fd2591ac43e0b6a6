"""What the run manager reads and writes of a session outside a turn's own writes."""

from __future__ import annotations

from collections.abc import Sequence

from navi.agent.retry import latest_failure
from navi.llm.messages import Message
from navi.llm.tokens import estimate_messages_tokens
from navi.protocol import UserMessage
from navi.runs.run import user_message
from navi.sessions.store import SessionNotFound, SessionStore


async def append_unanswered(sessions: SessionStore, session_id: str, messages: Sequence[Message]) -> None:
    """Store messages without answering them (`"respond": false`), on the active branch."""
    session = await sessions.get(session_id, display=False)
    if session is None:
        raise SessionNotFound(session_id)
    # A count the engine trusts must include what is added; none yet: the engine estimates.
    tokens = session.context_token_count
    counted = tokens + estimate_messages_tokens(messages) if tokens else None
    await sessions.append(session_id, display=messages, context=messages, context_token_count=counted)


async def retried_message(sessions: SessionStore, session_id: str) -> UserMessage | None:
    """The user message of the turn a retry runs again: that of a failed turn, or the question a
    regeneration answers again (None if there is none: the engine then says there is nothing to
    retry)."""
    session = await sessions.get(session_id)
    user = latest_failure(session.messages) if session is not None else None
    return None if user is None else user_message(user)
