"""The WebSocket protocol (`ws://host/ws/sessions/{id}`): every frame, typed, in one place.

`server.py` holds the frames Navi sends, `client.py` the frames a client sends; each side is one
pydantic discriminated union on `type` (`ServerFrame`, `ClientFrame`). The agent emits a subset of
the server frames (`navi.agent.events.AgentEvent`); the run, the session feed, the schedule runner
and the WebSocket endpoint build the others here, and the endpoint reads every client frame with
`parse_client_frame`. Changes are additive only: frames keep their names and fields.

`python -m navi.protocol` prints the JSON Schema of both sides (`schema.py`);
`docs/protocol.schema.json` is its output, and a test keeps the two equal. This part imports
nothing of the server, so clients (`navi chat`) may read it too.
"""

from navi.protocol.client import (
    CLIENT_ADAPTER,
    MAX_CALL_ID,
    MAX_IMAGES,
    ApprovalFrame,
    BadFrame,
    ClientFrame,
    EditFrame,
    FileRef,
    MessageFrame,
    RegenerateFrame,
    RetryFrame,
    SwitchFrame,
    parse_client_frame,
)
from navi.protocol.server import (
    DECISIONS,
    SERVER_ADAPTER,
    ApprovalRequired,
    ApprovalResolved,
    ContextCompressed,
    Decision,
    ErrorCode,
    ErrorEvent,
    Notice,
    Phase,
    PlanReady,
    ProfileSwitched,
    ScheduleRunChanged,
    ScheduleRunStatus,
    ServerFrame,
    SessionUpdated,
    Status,
    StreamEnd,
    StreamStart,
    StreamStopped,
    TextDelta,
    ThinkingDelta,
    ThinkingEnd,
    ToolEvent,
    ToolStarted,
    TurnThinking,
    TurnUsage,
    UserMessage,
    parse_server_frame,
)

__all__ = [
    "CLIENT_ADAPTER",
    "DECISIONS",
    "MAX_CALL_ID",
    "MAX_IMAGES",
    "SERVER_ADAPTER",
    "ApprovalFrame",
    "ApprovalRequired",
    "ApprovalResolved",
    "BadFrame",
    "ClientFrame",
    "ContextCompressed",
    "Decision",
    "EditFrame",
    "ErrorCode",
    "ErrorEvent",
    "FileRef",
    "MessageFrame",
    "Notice",
    "Phase",
    "PlanReady",
    "ProfileSwitched",
    "RegenerateFrame",
    "RetryFrame",
    "ScheduleRunChanged",
    "ScheduleRunStatus",
    "ServerFrame",
    "SessionUpdated",
    "Status",
    "StreamEnd",
    "StreamStart",
    "StreamStopped",
    "SwitchFrame",
    "TextDelta",
    "ThinkingDelta",
    "ThinkingEnd",
    "ToolEvent",
    "ToolStarted",
    "TurnThinking",
    "TurnUsage",
    "UserMessage",
    "parse_client_frame",
    "parse_server_frame",
]
