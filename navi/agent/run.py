"""The state of one run of the agent loop (a turn of a session, or a subagent's task).

The run's token counts change here only: `tokens` is the latest count of the whole context (the
server's, after a model call, or Navi's estimate), `pending` the estimate of what was added since,
`fixed` the part of `tokens` the system prompt and tool schemas take.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from navi import runctx
from navi.agent.disclosure import Disclosure
from navi.llm.base import LLMBackend
from navi.llm.chunks import Usage
from navi.llm.messages import Message, ToolSpec
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
    disclosure: Disclosure | None = None  # which tools go with schemas, which are listed (None: all)
    skills: str | None = None  # the owner's skills listing for the system message (navi/skills/)
    # Token counts: changed only by the methods below.
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
    retry_of: str | None = None  # the user message whose failed turn this run answers again
    continues: str | None = None  # the cut-off answer this run goes on with (navi/sessions/continuations.py)
    # This turn's passages of the user's documents (navi/agent/quoting.py): the id of the message
    # they follow, their note (never stored) and its estimated tokens.
    quoted: tuple[str, Message, int] | None = None
    # What the turn's model calls (every step of the loop, not planning or summaries) cost, as the
    # server counted it; `spent_estimated` when any call's count was Navi's estimate.
    spent_prompt: int = 0
    spent_completion: int = 0
    spent_estimated: bool = False

    @property
    def is_subagent(self) -> bool:
        return self.ctx.is_subagent

    @property
    def tool_index(self) -> str | None:
        """The one-line listing of the tools sent without schemas, then of the owner's skills, for
        the system message."""
        index = self.disclosure.index_text if self.disclosure is not None else None
        return "\n\n".join(p for p in (index, self.skills) if p) or None

    def tool_specs(self) -> list[ToolSpec]:
        """The schemas the next model call offers (see navi/agent/disclosure.py)."""
        return self.disclosure.specs(self.context) if self.disclosure is not None else self.tools.specs()

    def disclosed(self) -> list[str]:
        """The tools the context has disclosed beyond the likely ones (what a summary carries)."""
        return self.disclosure.disclosed(self.context) if self.disclosure is not None else []

    @property
    def size(self) -> int:
        return self.tokens + self.pending

    # --- token bookkeeping -----------------------------------------------------------------------
    def grew(self, tokens: int) -> None:
        """About `tokens` (estimated) joined the context since it was last counted."""
        self.pending += tokens

    def counted(self, tokens: int, *, fixed: int | None = None) -> None:
        """The whole context is `tokens` now; `fixed` of them the system prompt and tools, if given."""
        self.tokens, self.pending = tokens, 0
        if fixed is not None:
            self.fixed = fixed

    def refixed(self, fixed: int) -> None:
        """The system prompt and tools take `fixed` tokens now (another profile, another model)."""
        self.fixed = fixed

    def called(self, usage: Usage, *, fixed: int) -> None:
        """A model call of the turn ended: the server counted the context, and the call cost `usage`."""
        self.counted(usage.total_tokens, fixed=fixed)
        self.spent_prompt += usage.prompt_tokens
        self.spent_completion += usage.completion_tokens
        self.spent_estimated = self.spent_estimated or usage.estimated
