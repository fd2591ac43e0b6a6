"""The state of one run of the agent loop (a turn of a session, or a subagent's task)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from navi import runctx
from navi.llm.base import LLMBackend
from navi.llm.messages import Message
from navi.profiles.base import AgentProfile
from navi.tools.registry import ToolView


@dataclass
class RunState:
    """Everything one run of the loop knows: its profile and model, context, token counts, writes."""

    ctx: runctx.RunContext
    profile: AgentProfile
    llm: LLMBackend
    model: str
    window: int
    tools: ToolView
    context: list[Message]
    persistent: bool
    stream: bool
    memory: str | None = None
    tokens: int = 0  # the backend's count for the context as of the last model call
    pending: int = 0  # estimated tokens of messages added since that count
    fixed: int = 0  # of `tokens`, what the system prompt and tool schemas took
    final_text: str = ""
    failures: int = 0
    compression_failed: bool = False  # don't retry a failing summary on every step of this run
    compressed: bool = False  # the context was compressed this turn (one `context_compressed` a turn)
    write: asyncio.Task[None] | None = None  # a save still in flight; every later write waits for it
    trimmed: tuple[str, ...] = ()  # tools left out because the window cannot hold their schemas
    sent: list[Message] = field(default_factory=list)  # the messages of the latest model call
    tool_costs: dict[str, int] = field(default_factory=dict)  # estimated tokens per tool (see _tool_cost)
    answer_metadata: dict[str, Any] = field(default_factory=dict)  # added to the final answer (retry_of)
    # What the turn's model calls (every step of the loop, not planning or summaries) cost, as the
    # server counted it; `spent_estimated` when any call's count was Navi's estimate.
    spent_prompt: int = 0
    spent_completion: int = 0
    spent_estimated: bool = False

    @property
    def is_subagent(self) -> bool:
        return self.ctx.is_subagent

    @property
    def size(self) -> int:
        return self.tokens + self.pending
