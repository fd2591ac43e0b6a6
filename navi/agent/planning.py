"""The planning phase: one quick model call that answers DIRECT or a numbered plan.

Runs before the tool loop when the profile enables it: no tools, no thinking, low temperature.
The raw answer always goes to the session's planning logs; a plan with numbered steps is injected
into the context as an assistant message (the model then continues from its own plan).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from navi import prompts
from navi.llm.base import CallOptions, LLMBackend
from navi.llm.errors import LLMError
from navi.llm.messages import Message, utcnow

PLANNING_TEMPERATURE = 0.3
STEP = re.compile(r"^\s*\d+[.)]\s+\S", re.MULTILINE)

Decision = Literal["direct", "plan", "malformed", "error"]


@dataclass
class PlanOutcome:
    decision: Decision
    raw: str
    plan: str | None = None
    error: str | None = None

    def log_entry(self, model: str) -> dict[str, Any]:
        return {
            "at": utcnow().isoformat(),
            "model": model,
            "decision": self.decision,
            "raw": self.raw,
            "plan": self.plan,
            **({"error": self.error} if self.error else {}),
        }


def classify(raw: str) -> PlanOutcome:
    text = raw.strip()
    if text.upper().startswith("DIRECT"):
        return PlanOutcome("direct", raw)
    steps = list(STEP.finditer(text))
    if not steps:
        return PlanOutcome("malformed", raw)
    # Keep the plan from its first numbered step on; drop any preamble the model added.
    return PlanOutcome("plan", raw, plan=text[steps[0].start() :].strip())


async def run_planning(
    llm: LLMBackend,
    model: str,
    context: Sequence[Message],
    tool_names: Sequence[str],
) -> PlanOutcome:
    system = prompts.load("planning").replace("{tools}", ", ".join(tool_names) or "none")
    messages = [Message.system(system), *[m for m in context if m.role != "system"]]
    try:
        result = await llm.complete(
            messages, CallOptions(model=model, temperature=PLANNING_TEMPERATURE, think=False)
        )
    except LLMError as exc:
        return PlanOutcome("error", "", error=str(exc))
    return classify(result.text)
