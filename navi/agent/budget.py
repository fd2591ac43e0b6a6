"""Token accounting: what the fixed prompt (system message and tool schemas) costs, how much room
a reply needs, which tools fit the window, and why a prompt cannot fit.

Estimates are calibrated per (backend, model) from the server's own count of a prompt it read, so
budgeting stops guessing after one call.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Protocol

from navi.agent.context import system_text
from navi.agent.run import RunState
from navi.agent.windows import ContextWindows
from navi.llm import text_tools
from navi.llm.messages import Message, ToolSpec
from navi.llm.tokens import estimate_message_tokens, estimate_messages_tokens, estimate_tokens


class BudgetConfig(Protocol):
    persona: str
    max_tokens_answer: int


class Budget:
    def __init__(self, config: BudgetConfig, windows: ContextWindows) -> None:
        self.config = config
        self.windows = windows
        # Measured ÷ estimated tokens of the fixed prompt, per (backend, model).
        self.calibration: dict[tuple[str, str], float] = {}

    def tool_cost(self, run: RunState, spec: ToolSpec) -> int:
        """Estimated tokens one tool adds: its schema, or its line in the text-tool listing.

        Worked out once per tool and run (every model call budgets every tool several times).
        """
        cost = run.tool_costs.get(spec.name)
        if cost is None:
            if not self.windows.native_tools(run.llm, run.model):
                cost = estimate_tokens(text_tools.tool_instructions([spec])) - TEXT_TOOLS_BASE
            else:
                cost = schema_tokens(spec)
            run.tool_costs[spec.name] = cost
        return cost

    def raw_fixed(self, run: RunState, system: str, specs: Sequence[ToolSpec]) -> int:
        """Estimated tokens of a system prompt plus tools, before calibration."""
        tools = sum(self.tool_cost(run, s) for s in specs)
        if specs and not self.windows.native_tools(run.llm, run.model):
            tools += TEXT_TOOLS_BASE
        return estimate_message_tokens(Message.system(system)) + tools

    def ratio(self, run: RunState) -> float:
        return self.calibration.get((run.llm.name, run.model), 1.0)

    def overhead(self, run: RunState, specs: Sequence[ToolSpec] | None = None) -> int:
        """Tokens every call adds to the stored context: system prompt, memory, tool schemas."""
        system = system_text(self.config.persona, run.profile, run.memory, tool_index=run.tool_index)
        specs = run.tool_specs() if specs is None else specs
        return self.fixed(run, system, specs)

    def fixed(self, run: RunState, system: str, specs: Sequence[ToolSpec]) -> int:
        """Calibrated tokens of a system prompt plus tools."""
        return math.ceil(self.raw_fixed(run, system, specs) * self.ratio(run))

    def calibrate(
        self, run: RunState, sent: Sequence[Message], specs: Sequence[ToolSpec], prompt: int
    ) -> None:
        """Learn the real cost of the fixed prompt from the server's count of a prompt it read.

        Only while the conversation is small next to the fixed part, so estimation errors in the
        conversation cannot swamp the measurement.
        """
        fixed = self.raw_fixed(run, sent[0].content or "", specs)
        conversation = estimate_messages_tokens(sent[1:])
        if fixed <= 0 or conversation > fixed or prompt <= conversation:
            return
        ratio = min(3.0, max(0.2, (prompt - conversation) / fixed))
        self.calibration[(run.llm.name, run.model)] = ratio

    def reserve(self, run: RunState) -> int:
        """Room kept free in the window for the reply."""
        return min(self.config.max_tokens_answer, max(64, run.window // 8))

    def fit_tools(self, run: RunState, specs: list[ToolSpec]) -> tuple[list[ToolSpec], int]:
        """The tools whose schemas fit the window with the conversation, and the prompt size then.

        When the window cannot hold every schema, the costliest are left out first: a smaller set
        of tools beats refusing the message.
        """
        conversation = max(0, run.size - run.fixed)
        kept = list(specs)
        need = conversation + self.overhead(run, kept)
        budget = run.window - self.reserve(run)
        ratio = self.ratio(run)
        while kept and need > budget:
            drop = max(kept, key=lambda spec: self.tool_cost(run, spec))
            kept.remove(drop)
            need -= math.ceil(self.tool_cost(run, drop) * ratio)
        return kept, need

    def too_small(self, run: RunState, need: int) -> str:
        """Why the prompt cannot fit, naming the real cause and the smallest window that works."""
        fixed_bare = self.overhead(run, [])
        fixed_all = self.overhead(run)
        latest = next((m for m in reversed(run.context) if m.role == "user"), None)
        latest_tokens = estimate_message_tokens(latest) if latest is not None else 0
        reserve = self.reserve(run)
        if fixed_bare + latest_tokens + reserve > run.window:
            minimum = fixed_all + latest_tokens + reserve
            return (
                f"the model's context window ({run.window} tokens) is too small for Navi: its "
                f"instructions alone take about {fixed_bare} tokens, your message {latest_tokens}, and "
                f"{reserve} are kept for the reply. Give the model a window of at least {minimum} tokens "
                f"(OLLAMA_NUM_CTX, and the server's own context size)"
            )
        return (
            f"the conversation ({need} tokens with Navi's instructions) no longer fits the model's "
            f"context window ({run.window} tokens), even after compression and without tools; "
            "start a new session or give the model a larger window (OLLAMA_NUM_CTX)"
        )


TEXT_TOOLS_BASE = estimate_tokens(text_tools.tool_instructions([]))


def schema_tokens(spec: ToolSpec) -> int:
    """Estimated tokens of one tool's schema as a template lays it out (JSON, like most do)."""
    return estimate_tokens(json.dumps(spec.model_dump(), ensure_ascii=False))
