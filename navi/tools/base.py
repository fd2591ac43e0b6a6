"""What a tool is, and what it returns.

A tool has a name, a description the model reads, JSON-schema `parameters`, a timeout, and an async
`execute(params)`. Arguments are validated against the schema before `execute` is called, so a tool
only ever sees arguments of the right shape. A tool reports failure by returning
`ToolResult(success=False, error=…)` or by raising; either way the model sees a failed result.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from navi.llm.messages import ToolSpec


@dataclass(frozen=True)
class SwitchProfile:
    """An intent: carry on in another profile (its prompt, model and tools) after this batch."""

    profile_id: str
    profile_name: str


# What stands in a stored tool call for an argument the tool says is secret (`Tool.secret_arguments`).
SECRET_MARKER = "[not stored: a secret]"


def masked_arguments(args: dict[str, Any], secret: frozenset[str] | set[str]) -> dict[str, Any]:
    """`args` with each `secret` argument replaced by `SECRET_MARKER` (a new dict when any is)."""
    if not secret or not any(name in args for name in secret):
        return args
    return {k: (SECRET_MARKER if k in secret else v) for k, v in args.items()}


# What a tool may ask the agent loop to do beyond returning text. A tool never emits protocol
# events itself: the loop turns intents into actions and events.
Intent = SwitchProfile


@dataclass
class ToolResult:
    """What a tool returns. `metadata` is the tool's own; its `stderr` (a process's error stream,
    which the output shows too) is also kept in the stored tool message's metadata, bounded and
    masked (`navi.agent.tool_batch`)."""

    success: bool
    output: str = ""
    error: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    intents: list[Intent] = field(default_factory=list)

    @classmethod
    def ok(cls, output: str, *, intents: list[Intent] | None = None, **metadata: Any) -> ToolResult:
        return cls(success=True, output=output, metadata=metadata, intents=list(intents or ()))

    @classmethod
    def fail(cls, error: str, output: str = "", **metadata: Any) -> ToolResult:
        return cls(success=False, output=output, error=error, metadata=metadata)

    def to_message_content(self) -> str:
        """The text the model sees for this result."""
        if self.success:
            return self.output
        text = f"Error: {self.error or 'the tool failed'}"
        return f"{text}\n{self.output}" if self.output else text


# Limits that only validation needs. Every call is still validated against the full schema, and a
# violated limit comes back to the model as a failed result saying what was wrong; leaving them out
# of what the model reads on every call is a large share of the fixed prompt.
VALIDATION_ONLY = frozenset(
    {
        "additionalProperties",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minItems",
        "maxItems",
        "pattern",
        "$schema",
    }
)


def model_schema(schema: Any) -> Any:
    """A JSON schema without `VALIDATION_ONLY` keywords, at every depth (property names are kept)."""
    if isinstance(schema, list):
        return [model_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: model_schema(sub) for name, sub in value.items()}
        elif key not in VALIDATION_ONLY:
            out[key] = model_schema(value)
    return out


class Tool(ABC):
    name: ClassVar[str]
    description: ClassVar[str]
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}
    timeout: ClassVar[float] = 120.0
    # Words in a user's message that show this tool will be needed: it is then sent with its schema
    # rather than only listed (navi/agent/disclosure.py). Its name always counts.
    keywords: ClassVar[tuple[str, ...]] = ()

    @abstractmethod
    async def execute(self, params: dict[str, Any]) -> ToolResult: ...

    async def call_facts(self, params: dict[str, Any]) -> dict[str, Any] | None:
        """What a call would touch that its arguments alone do not say (the browser: what element
        3 is on the page the model saw), for the approval rules (navi/agent/approvals.py). None:
        the arguments say it all."""
        return None

    async def secret_arguments(self, params: dict[str, Any], *, after: bool = False) -> frozenset[str]:
        """The arguments of this call whose values must never be stored or shown (the browser:
        `text` typed into a password field). The agent keeps `SECRET_MARKER` in their place in the
        stored call, the frames and the approval question; only the tool sees the value. `after`:
        an earlier call of this tool in the same reply runs first and may change what this one
        touches (a click that opens a sign-in form), so answer for the worst case."""
        return frozenset()

    def spec(self) -> ToolSpec:
        """What the model is shown: the schema without validation-only limits (see `model_schema`)."""
        from navi.llm.messages import ToolSpec  # here, so the tool host starts without the model layer

        return ToolSpec(
            name=self.name, description=self.description, parameters=model_schema(self.parameters)
        )
