"""Server frames: what Navi sends on `ws://host/ws/sessions/{id}`.

A turn's frames (`stream_start`, then the agent's events up to `stream_end`, `stream_stopped` or
`error`) are stamped with `run_id` and `seq` by the run that publishes them; `session_updated`,
`schedule_run` and an `error` refusing a client frame belong to no turn. A frame serialises
(`frame()`) to exactly what goes on the wire; fields only some frames of a type carry are
`MISSING` (absent, not null) until set.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, cast

from pydantic import MISSING, BaseModel, ConfigDict, Field, TypeAdapter, field_validator

from navi import redact
from navi.protocol.codes import CODES as _CODES
from navi.protocol.codes import ErrorCode
from navi.protocol.voice import VOICE_FRAMES


class _ServerFrame(BaseModel):
    model_config = ConfigDict(frozen=True, json_schema_extra={"x-navi-side": "server"})

    def frame(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class _RunFrame(_ServerFrame):
    """A frame of one turn: the run stamps `run_id` and `seq` on it as it publishes it."""

    run_id: str | MISSING = Field(default=MISSING, description="The turn (run) this frame belongs to.")
    seq: int | MISSING = Field(
        default=MISSING, description="The frame's number within its turn, from 1 (`stream_start`)."
    )


class UserMessage(BaseModel):
    """The user's message of a turn, as `stream_start` shows it: enough for any window to draw it."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(description="The id the message is stored under.")
    content: str
    files: list[str] = Field(default_factory=list, description="The attached files' names.")
    images: int = Field(default=0, description="How many images are attached.")
    name: str | MISSING = Field(default=MISSING, description="Who wrote it, when its client said.")
    location: str | MISSING = Field(default=MISSING, description="Where they were, when its client said.")
    metadata: dict[str, Any] | MISSING = Field(default=MISSING, description="Its client's own keys.")


class StreamStart(_RunFrame):
    """A turn started; sent once its message is committed (the acknowledgement)."""

    type: Literal["stream_start"] = "stream_start"
    message: UserMessage | None = Field(
        description=(
            "The user's message (null: a retry with no failed turn to run again, or a continuation)."
        )
    )
    retry: bool | MISSING = Field(default=MISSING, description="Present (true) on a retried turn.")
    parent_id: str | MISSING | None = Field(
        default=MISSING,
        description=(
            "On an edit or a regeneration: the message the new branch hangs below (null: a new "
            "first message). Absent when the turn goes on the branch shown."
        ),
    )
    continues: str | MISSING = Field(
        default=MISSING,
        description=(
            "On a continuation (`continue`): the id of the cut-off answer the turn goes on with; "
            "`message` is null and the deltas append to that answer."
        ),
    )


class ThinkingDelta(_RunFrame):
    type: Literal["thinking_delta"] = "thinking_delta"
    delta: str

    def frame(self) -> dict[str, Any]:  # the most frequent frames: skip the serializer
        if self.run_id is MISSING and self.seq is MISSING:
            return {"type": "thinking_delta", "delta": self.delta}
        return super().frame()


class ThinkingEnd(_RunFrame):
    type: Literal["thinking_end"] = "thinking_end"


class TurnThinking(_RunFrame):
    type: Literal["turn_thinking"] = "turn_thinking"
    thinking: str
    is_subagent: bool = False


class PlanReady(_RunFrame):
    type: Literal["plan_ready"] = "plan_ready"
    plan: str


class ToolStarted(_RunFrame):
    """`call_id` (additive) pairs it with its `tool_call` when one turn calls the same tool twice."""

    type: Literal["tool_started"] = "tool_started"
    tool: str
    args: dict[str, Any]
    is_subagent: bool = False
    call_id: str = ""


class BrowserView(BaseModel):
    """What the `browser` tool's page looks like after a call: for the tool card, the chat's status
    line and the debug panel."""

    model_config = ConfigDict(frozen=True)

    url: str = Field(description="The page's address.")
    title: str = Field(description="The page's title (the page's own words: show it as text).")
    tab: int = Field(description="The tab the page is in, from 1.")
    tabs: int = Field(description="How many tabs the session's browser has open.")
    elements: list[str] = Field(
        default_factory=list, description="The numbered interactive elements, as the model read them."
    )
    screenshot: str | MISSING = Field(
        default=MISSING, description="The latest screenshot, a `data:image/...;base64,` URL (small)."
    )


class ToolEvent(_RunFrame):
    """A tool call's result. `browser` (additive) is present on a `browser` call that left a page."""

    type: Literal["tool_call"] = "tool_call"
    tool: str
    args: dict[str, Any]
    result: str
    success: bool
    is_subagent: bool = False
    call_id: str = ""
    browser: BrowserView | MISSING = Field(
        default=MISSING, description="The browser's page after the call (the `browser` tool only)."
    )


Decision = Literal["allow", "deny", "always"]
DECISIONS: tuple[Decision, ...] = ("allow", "deny", "always")


class ApprovalRequired(_RunFrame):
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


class ApprovalResolved(_RunFrame):
    """Additive: the question about `call_id` is answered. `by` says who answered: the user, the
    timeout (a denial), a stop (the call was not run), or `unattended`: the run had nobody to ask
    (the OpenAI-compatible API) and denied the call at once, without an `approval_required`."""

    type: Literal["approval_resolved"] = "approval_resolved"
    call_id: str
    decision: Decision
    by: Literal["user", "timeout", "stop", "unattended"] = "user"
    is_subagent: bool = False


ElicitationAction = Literal["accept", "decline", "cancel"]
ELICITATION_ACTIONS: tuple[ElicitationAction, ...] = ("accept", "decline", "cancel")


class ElicitationRequired(_RunFrame):
    """Additive: an MCP server asks the user something in the middle of a tool call (MCP
    elicitation). `mode` "form": answer with `content` matching `requested_schema` (a flat JSON
    Schema object of strings, numbers, integers, booleans and enums); "url": the server asks the
    user to open `url` (nothing comes back through Navi but the consent). Only the user answers:
    the model never sees the question, and nothing is filled in for them."""

    type: Literal["elicitation_required"] = "elicitation_required"
    elicitation_id: str = Field(description="What the answer names (an `elicitation` frame, or REST).")
    server: str = Field(description="The MCP server asking (its name in `MCP_SERVERS_FILE`).")
    tool: str = Field(description="The tool call it asks during (`<server>__<tool>`).")
    message: str
    mode: Literal["form", "url"]
    requested_schema: dict[str, Any] | MISSING = Field(default=MISSING, description="The form's fields.")
    url: str | MISSING = Field(default=MISSING, description="The page the server asks the user to open.")
    is_subagent: bool = False


class ElicitationResolved(_RunFrame):
    """Additive: the question `elicitation_id` is settled. `by`: the user; the timeout, a stop or
    `unattended` (a run nobody can be asked in) settle it as `cancel`."""

    type: Literal["elicitation_resolved"] = "elicitation_resolved"
    elicitation_id: str
    action: ElicitationAction
    by: Literal["user", "timeout", "stop", "unattended"] = "user"
    is_subagent: bool = False


class TextDelta(_RunFrame):
    """A piece of the answer's text."""

    type: Literal["stream_delta"] = "stream_delta"
    delta: str

    def frame(self) -> dict[str, Any]:
        if self.run_id is MISSING and self.seq is MISSING:
            return {"type": "stream_delta", "delta": self.delta}
        return super().frame()


class TurnUsage(BaseModel):
    """The tokens a turn's model calls read and wrote, added over its steps (tool calls make
    several); `estimated` when a server reported no count for one of them."""

    model_config = ConfigDict(frozen=True)

    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False


class StreamEnd(_RunFrame):
    """The turn's answer."""

    type: Literal["stream_end"] = "stream_end"
    content: str
    context_tokens: int
    max_context_tokens: int
    # Additive: "stop" (the model finished) or "length" (cut off by LLM_MAX_TOKENS_ANSWER).
    finish_reason: Literal["stop", "length"] = "stop"
    # Additive: what the turn's model calls cost (planning and summaries not included).
    usage: TurnUsage = Field(default_factory=TurnUsage)
    # Additive: the context size from which the session is compressed (None: compression is off).
    compress_at_tokens: int | None = None
    message_id: str | MISSING = Field(
        default=MISSING,
        description='The stored answer\'s id: for `continue` when finish_reason is "length", and '
        "for rating it (`PUT /sessions/{id}/messages/{message_id}/feedback`). Absent only from "
        "servers older than the rating.",
    )
    model: str | MISSING = Field(
        default=MISSING,
        description="Additive: the model that wrote the answer, as its server named it (else the "
        "one asked). Absent from older servers.",
    )


class StreamStopped(_RunFrame):
    type: Literal["stream_stopped"] = "stream_stopped"
    message_id: str | MISSING = Field(
        default=MISSING,
        description="Additive: present when the stop left part of an answer written, the stored "
        "part's id, for `continue`.",
    )


class ContextCompressed(_RunFrame):
    type: Literal["context_compressed"] = "context_compressed"
    messages_before: int
    messages_after: int


class ProfileSwitched(_RunFrame):
    type: Literal["profile_switched"] = "profile_switched"
    profile_id: str
    profile_name: str


Phase = Literal["preparing", "compressing", "planning", "waiting", "researching"]


class Status(_RunFrame):
    """Additive: what Navi is doing while no token is flowing (lookup, summary, plan, prompt read)."""

    type: Literal["status"] = "status"
    phase: Phase
    detail: str = ""
    # Additive, `researching` only: how many sources the research has read so far.
    sources: int | None = None


class ModelFallback(_RunFrame):
    """Additive: the turn's model call moved on along its model chain (`MODELS_FILE`,
    docs/models.md) before any of the answer was written: `endpoint` failed just now (or, with
    `cooling`, it is skipped because it failed recently) and `next_endpoint` is asked instead. Sent
    as it happens, before the next endpoint answers; the answer's `metadata.fallback` keeps the
    same reasons. Several follow each other when several endpoints fail."""

    type: Literal["model_fallback"] = "model_fallback"
    endpoint: str = Field(description="The endpoint passed over (its id in the model list).")
    model: str = Field(description="That endpoint's model.")
    reason: str = Field(description="Why: the error it gave, or why it cools down.")
    next_endpoint: str = Field(description="The endpoint asked now.")
    next_model: str = Field(description="That endpoint's model.")
    cooling: bool = Field(default=False, description="Skipped without being asked: it failed recently.")

    @field_validator("reason")
    @classmethod
    def _no_secrets(cls, value: str) -> str:
        """A server's error can name its address with a password in it: masked."""
        return redact.text(value)


class Notice(_RunFrame):
    """Additive: something the user should know that did not end the turn."""

    type: Literal["notice"] = "notice"
    message: str


class ErrorEvent(_RunFrame):
    """Something went wrong. With `seq`, the turn failed (its last frame); without, a client frame
    was refused (`bad_frame`, `busy`, `approval_not_found`…) or the connection is closed."""

    type: Literal["error"] = "error"
    message: str
    code: ErrorCode = "internal"
    call_id: str | MISSING = Field(
        default=MISSING, description="On `approval_not_found`: the call the refused answer named."
    )
    elicitation_id: str | MISSING = Field(
        default=MISSING,
        description="On `elicitation_not_found` and `bad_answer`: the question the refused answer named.",
    )

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


class SessionUpdated(_ServerFrame):
    """A session was created, renamed, pinned, switched to another profile, moved to a folder,
    archived or brought back, imported or deleted.
    It goes to every connection of the session's owner and belongs to no turn (no `run_id`, no
    `seq`). A deleted session's frame has `deleted: true` and none of the other fields."""

    type: Literal["session_updated"] = "session_updated"
    session_id: str
    name: str | MISSING | None = MISSING
    profile_id: str | MISSING = MISSING
    pinned: bool | MISSING = MISSING
    # Where it sits (issue 49): its folder (null: none), archived, temporary (a chat deleted when
    # its page closes it, left out of the list).
    folder: str | MISSING | None = MISSING
    archived: bool | MISSING = MISSING
    temporary: bool | MISSING = MISSING
    deleted: bool = False


ScheduleRunStatus = Literal["running", "waiting_approval", "ok", "error", "skipped"]


class ScheduleRunChanged(_ServerFrame):
    """A scheduled run of one of the user's schedules started, waits for an approval, or ended.
    It goes to every connection of the schedule's owner and belongs to no turn. `preview`, `error`
    and `unread` come with the final one (`ok`, `error`, `skipped`), `tool` with `waiting_approval`."""

    type: Literal["schedule_run"] = "schedule_run"
    schedule_id: str
    schedule_run_id: str = Field(description="The id in the schedule's `runs`, not a turn's `run_id`.")
    session_id: str | None = Field(description="Null only when the run ended before it had a session.")
    status: ScheduleRunStatus
    title: str
    manual: bool
    preview: str | MISSING | None = MISSING
    error: str | MISSING | None = MISSING
    unread: bool | MISSING = MISSING
    tool: str | MISSING | None = MISSING


JobFrameState = Literal["queued", "running", "done", "failed", "stopped"]


class JobChanged(_ServerFrame):
    """Additive: one of the user's background jobs was started, took a step, or ended
    (docs/jobs.md). It goes to every connection of the job's owner and belongs to no turn.
    `session_id` is the job's own session; `origin_session_id` the conversation that asked for it,
    where the result is posted when it ends."""

    type: Literal["job"] = "job"
    job_id: str
    title: str
    state: JobFrameState
    session_id: str
    origin_session_id: str | None = None
    steps: int = 0
    max_steps: int = 0
    last_step: str | None = None
    error: str | None = None
    # Additive: `task` or `research`; a research job's sub-questions once planned, sources read.
    mode: str = "task"
    plan: list[str] = Field(default_factory=list)
    sources: int = 0


class Steered(_RunFrame):
    """Additive: a steering message reached the running turn (before its next model call), and is
    stored there, after what the turn had done so far."""

    type: Literal["steered"] = "steered"
    message_id: str
    message: UserMessage


QueueMode = Literal["queue", "steer"]


class Queued(_ServerFrame):
    """Additive: a message sent while a turn runs waits in the session (`mode` "queue": it runs
    when the turn ends; "steer": it reaches the turn's next model call). Sent again, with the new
    text, when it is edited. It goes to every connection of the session's owner and belongs to no
    turn; the message leaves the queue with its `stream_start`, `steered` or `queue_cancelled`."""

    type: Literal["queued"] = "queued"
    session_id: str
    message_id: str = Field(description="The id the message is stored under when it runs.")
    position: int = Field(description="Its place among the session's waiting messages, from 1.")
    mode: QueueMode = "queue"
    content: str = ""
    files: list[str] = Field(default_factory=list)
    images: int = 0


class QueueCancelled(_ServerFrame):
    """Additive: a waiting message was cancelled; it will not run."""

    type: Literal["queue_cancelled"] = "queue_cancelled"
    session_id: str
    message_id: str


# What the agent emits during a turn: every server frame but the run's start and the feed's news.
AGENT_EVENTS = (
    ThinkingDelta
    | ThinkingEnd
    | TurnThinking
    | PlanReady
    | ToolStarted
    | ToolEvent
    | ApprovalRequired
    | ApprovalResolved
    | ElicitationRequired
    | ElicitationResolved
    | TextDelta
    | StreamEnd
    | StreamStopped
    | ContextCompressed
    | ProfileSwitched
    | Status
    | ModelFallback
    | Notice
    | Steered
    | ErrorEvent
)
AgentEvent = Annotated[AGENT_EVENTS, Field(discriminator="type")]
# A frame of one turn as the run publishes it and its followers in this process read it.
RunEvent = StreamStart | AGENT_EVENTS
EVENT_ADAPTER: TypeAdapter[AgentEvent] = TypeAdapter(AgentEvent)
# Frames of no turn: the feed's news, the queue's, and a voice turn's (navi/protocol/voice.py).
_OTHERS = SessionUpdated | ScheduleRunChanged | Queued | QueueCancelled | JobChanged | VOICE_FRAMES
ServerFrame = Annotated[StreamStart | AGENT_EVENTS | _OTHERS, Field(discriminator="type")]
SERVER_ADAPTER: TypeAdapter[ServerFrame] = TypeAdapter(ServerFrame)


def parse_server_frame(frame: dict[str, Any]) -> ServerFrame:
    """A server frame read back (a client, a test); pydantic's `ValidationError` when it is none."""
    return SERVER_ADAPTER.validate_python(frame)
