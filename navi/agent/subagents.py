"""Subagents: a run of the loop with a fresh context and no persistence, inside a tool call.

A subagent gets its own session id, inherits the parent run's owner, stop event and unattended
mode, and runs one level deeper. Its tool and thinking events reach the parent run through the
parent's event sink, flagged `is_subagent`; what it returns is its answer, or a sentence saying
why there is none (the tool that started it hands that to the parent's model).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

from navi import runctx
from navi.agent.events import (
    AgentEvent,
    ApprovalRequired,
    ApprovalResolved,
    ErrorEvent,
    StreamStopped,
    ToolEvent,
    ToolStarted,
    TurnThinking,
)

FORWARDED = (TurnThinking, ToolStarted, ToolEvent, ApprovalRequired, ApprovalResolved)
NOT_STARTED = "The subagent was stopped before it started."
NOT_FINISHED = "The subagent was stopped before it finished."


def subagent_context(parent: runctx.RunContext | None, profile_id: str) -> runctx.RunContext:
    """The run context of a subagent started from the `parent` run (or from none)."""
    sub_id = f"subagent_{uuid.uuid4().hex[:12]}"
    return runctx.RunContext(
        session_id=sub_id,
        profile_id=profile_id,
        root_session_id=parent.root_session if parent else sub_id,
        owner=parent.owner if parent else "local",
        stop_event=parent.stop_event if parent else asyncio.Event(),
        is_subagent=True,
        depth=(parent.depth + 1) if parent else 1,
        persistent=False,
        unattended=parent.unattended if parent else None,
    )


def failed(reason: object) -> str:
    return f"The subagent failed: {reason}"


async def outcome(events: AsyncIterator[AgentEvent], parent: runctx.RunContext | None) -> str | None:
    """Follow a subagent's events, forwarding those the parent shows. None when it answered;
    otherwise why it did not."""
    async for event in events:
        if isinstance(event, FORWARDED) and parent is not None:
            parent.emit(event)
        elif isinstance(event, ErrorEvent):
            return failed(event.message)
        elif isinstance(event, StreamStopped):
            return NOT_FINISHED
    return None
