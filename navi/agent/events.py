"""Agent events: the server frames the agent emits, as one discriminated union.

The frames themselves are defined, with every other frame of the protocol, in `navi.protocol`;
an event serialises (`frame()`) to exactly the frame the protocol names. The engine never imports
FastAPI; the run publishes these (stamped with `run_id` and `seq`) and the WebSocket layer only
forwards them.
"""

from __future__ import annotations

from typing import Any

from navi.llm.messages import Message
from navi.protocol.server import (
    EVENT_ADAPTER,
    AgentEvent,
    ApprovalRequired,
    ApprovalResolved,
    ContextCompressed,
    ErrorCode,
    ErrorEvent,
    ModelFallback,
    Notice,
    Phase,
    PlanReady,
    ProfileSwitched,
    Status,
    Steered,
    StreamEnd,
    StreamStopped,
    TextDelta,
    ThinkingDelta,
    ThinkingEnd,
    ToolEvent,
    ToolStarted,
    TurnThinking,
    TurnUsage,
    UserMessage,
)

__all__ = [
    "EVENT_ADAPTER",
    "AgentEvent",
    "ApprovalRequired",
    "ApprovalResolved",
    "ContextCompressed",
    "ErrorCode",
    "ErrorEvent",
    "ModelFallback",
    "Notice",
    "Phase",
    "PlanReady",
    "ProfileSwitched",
    "Status",
    "Steered",
    "StreamEnd",
    "StreamStopped",
    "TextDelta",
    "ThinkingDelta",
    "ThinkingEnd",
    "ToolEvent",
    "ToolStarted",
    "TurnThinking",
    "TurnUsage",
    "parse_event",
    "said_by_user",
]


def parse_event(frame: dict[str, Any]) -> AgentEvent:
    return EVENT_ADAPTER.validate_python(frame)


def said_by_user(message: Message) -> UserMessage:
    """What `stream_start` says about the user's message: enough for another window to draw it."""
    files = message.metadata.get("files") or []
    text = message.metadata.get("text")  # what a client shows in place of the content, when set
    said: dict[str, Any] = {  # who sent it, when its client said (absent otherwise)
        "name": message.name,
        "location": message.metadata.location,
        "metadata": message.metadata.custom,
    }
    return UserMessage(
        id=message.id,
        content=text if isinstance(text, str) else message.content or "",
        files=[str(f.get("name", "")) for f in files if isinstance(f, dict)],
        images=len(message.images or []),
        **{key: value for key, value in said.items() if value},
    )
