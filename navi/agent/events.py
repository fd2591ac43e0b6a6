"""Agent events: one small model per WebSocket frame, in one discriminated union.

An event serialises (`model_dump()`) to exactly the frame the protocol names: the `type` tag and
the reference's fields. `call_id` on tool events is additive: it pairs `tool_started` with its
`tool_call` when one turn calls the same tool twice. The engine never imports FastAPI; the
WebSocket layer only forwards these.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator

from navi import redact


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True)

    def frame(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class ThinkingDelta(_Event):
    type: Literal["thinking_delta"] = "thinking_delta"
    delta: str

    def frame(self) -> dict[str, Any]:  # the most frequent frames: skip the serializer
        return {"type": "thinking_delta", "delta": self.delta}


class ThinkingEnd(_Event):
    type: Literal["thinking_end"] = "thinking_end"


class TurnThinking(_Event):
    type: Literal["turn_thinking"] = "turn_thinking"
    thinking: str
    is_subagent: bool = False


class PlanReady(_Event):
    type: Literal["plan_ready"] = "plan_ready"
    plan: str


class ToolStarted(_Event):
    type: Literal["tool_started"] = "tool_started"
    tool: str
    args: dict[str, Any]
    is_subagent: bool = False
    call_id: str = ""


class ToolEvent(_Event):
    type: Literal["tool_call"] = "tool_call"
    tool: str
    args: dict[str, Any]
    result: str
    success: bool
    is_subagent: bool = False
    call_id: str = ""


class ApprovalRequired(_Event):
    """Additive: the call `call_id` waits for the user's answer before it runs.

    `always_scope` says what answering "always" would allow from now on (None: the answer cannot
    be remembered for this call, so "always" counts as "allow" once).
    """

    type: Literal["approval_required"] = "approval_required"
    call_id: str
    tool: str
    args: dict[str, Any]
    reason: str
    always_scope: str | None = None
    is_subagent: bool = False


class ApprovalResolved(_Event):
    """Additive: the question about `call_id` is answered. `by` says who answered: the user, the
    timeout (a denial), a stop (the call was not run), or `unattended`: the run had nobody to ask
    (the OpenAI-compatible API) and denied the call at once, without an `approval_required`."""

    type: Literal["approval_resolved"] = "approval_resolved"
    call_id: str
    decision: Literal["allow", "deny", "always"]
    by: Literal["user", "timeout", "stop", "unattended"] = "user"
    is_subagent: bool = False


class TextDelta(_Event):
    type: Literal["stream_delta"] = "stream_delta"
    delta: str

    def frame(self) -> dict[str, Any]:
        return {"type": "stream_delta", "delta": self.delta}


class TurnUsage(BaseModel):
    """The tokens a turn's model calls read and wrote, added over its steps (tool calls make
    several); `estimated` when a server reported no count for one of them."""

    model_config = ConfigDict(frozen=True)

    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False


class StreamEnd(_Event):
    type: Literal["stream_end"] = "stream_end"
    content: str
    context_tokens: int
    max_context_tokens: int
    # Additive: "stop" (the model finished) or "length" (cut off by LLM_MAX_TOKENS_ANSWER).
    finish_reason: Literal["stop", "length"] = "stop"
    # Additive: what the turn's model calls cost (planning and summaries not included).
    usage: TurnUsage = Field(default_factory=TurnUsage)


class StreamStopped(_Event):
    type: Literal["stream_stopped"] = "stream_stopped"


class ContextCompressed(_Event):
    type: Literal["context_compressed"] = "context_compressed"
    messages_before: int
    messages_after: int


class ProfileSwitched(_Event):
    type: Literal["profile_switched"] = "profile_switched"
    profile_id: str
    profile_name: str


Phase = Literal["preparing", "compressing", "planning", "waiting"]


class Status(_Event):
    """Additive: what Navi is doing while no token is flowing (lookup, summary, plan, prompt read)."""

    type: Literal["status"] = "status"
    phase: Phase
    detail: str = ""


class Notice(_Event):
    """Additive: something the user should know that did not end the turn."""

    type: Literal["notice"] = "notice"
    message: str


# Stable names for what went wrong (additive `code` on `error` frames); the message stays for people.
ErrorCode = Literal[
    "model_unreachable",  # the model server did not answer (not running, wrong address)
    "model_not_found",  # the server runs but does not have the model
    "model_auth",  # the server refused the API key
    "model_error",  # the server answered with an error
    "model_interrupted",  # the stream broke off mid-answer
    "timeout",  # no first token or no progress within the limits
    "context_overflow",  # the prompt does not fit the model's window
    "unknown_backend",  # a profile names a backend Navi does not have
    "no_answer",  # the run ended without an answer
    "session_not_found",
    "busy",  # a turn is already running in this session
    "bad_frame",  # the client sent a frame Navi cannot use
    "nothing_to_retry",  # retry with no failed turn to run again
    "too_slow",  # this connection fell too far behind the run and was closed
    "approval_not_found",  # an answer to an approval no run is waiting for (answered already, or unknown)
    "worker_lost",  # the Navi process running the turn died; the message is kept, Retry runs it again
    "internal",  # a bug in Navi: the message says what, the log has the rest
]


class ErrorEvent(_Event):
    type: Literal["error"] = "error"
    message: str
    code: ErrorCode = "internal"

    @field_validator("message")
    @classmethod
    def _no_secrets(cls, value: str) -> str:
        """An error's text reaches the page and the stored history: credentials in it (a URL with
        a password, from whichever library raised) are masked."""
        return redact.text(value)

    @classmethod
    def of(cls, exc: Exception) -> ErrorEvent:
        """The frame for a model-backend error, with its stable code."""
        code = getattr(exc, "code", "internal")
        return cls(message=str(exc), code=cast(ErrorCode, code if code in _CODES else "model_error"))


AgentEvent = Annotated[
    ThinkingDelta
    | ThinkingEnd
    | TurnThinking
    | PlanReady
    | ToolStarted
    | ToolEvent
    | ApprovalRequired
    | ApprovalResolved
    | TextDelta
    | StreamEnd
    | StreamStopped
    | ContextCompressed
    | ProfileSwitched
    | Status
    | Notice
    | ErrorEvent,
    Field(discriminator="type"),
]

_CODES = frozenset(ErrorCode.__args__)  # type: ignore[attr-defined]

EVENT_ADAPTER: TypeAdapter[AgentEvent] = TypeAdapter(AgentEvent)


def parse_event(frame: dict[str, Any]) -> AgentEvent:
    return EVENT_ADAPTER.validate_python(frame)
