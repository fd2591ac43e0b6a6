"""Agent events: the server frames the agent emits, as one discriminated union.

The frames themselves are defined, with every other frame of the protocol, in `navi.protocol`;
an event serialises (`frame()`) to exactly the frame the protocol names. The engine never imports
FastAPI; the run publishes these (stamped with `run_id` and `seq`) and the WebSocket layer only
forwards them.
"""

from __future__ import annotations

from typing import Any

from navi.protocol.server import (
    EVENT_ADAPTER,
    AgentEvent,
    ApprovalRequired,
    ApprovalResolved,
    ContextCompressed,
    ErrorCode,
    ErrorEvent,
    Notice,
    Phase,
    PlanReady,
    ProfileSwitched,
    Status,
    StreamEnd,
    StreamStopped,
    TextDelta,
    ThinkingDelta,
    ThinkingEnd,
    ToolEvent,
    ToolStarted,
    TurnThinking,
    TurnUsage,
)

__all__ = [
    "EVENT_ADAPTER",
    "AgentEvent",
    "ApprovalRequired",
    "ApprovalResolved",
    "ContextCompressed",
    "ErrorCode",
    "ErrorEvent",
    "Notice",
    "Phase",
    "PlanReady",
    "ProfileSwitched",
    "Status",
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
]


def parse_event(frame: dict[str, Any]) -> AgentEvent:
    return EVENT_ADAPTER.validate_python(frame)
