"""The planning phase: one quick model call that answers DIRECT or a numbered plan.

Runs before the tool loop when the profile enables it: no tools, no thinking, low temperature, a
small token cap. The model gets the messages the answer call would send — the same system message
and conversation — and the planning instructions after them as the user's turn, so a model server
that cached the conversation reads only the new request and the instructions. The raw answer
always goes to the session's planning logs; a plan with numbered steps is stored as a plan message
and shown to the model right after its request, as a note in the user's turn
(navi/agent/context.py).

The call is read only until its answer is settled: the moment it starts with DIRECT, or once
EARLY_CHARS have come with neither DIRECT nor a numbered step (a small model repeating the
instructions back). The rest is never generated, so on a CPU the answer starts that much sooner.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from navi import prompts
from navi.agent.disclosure import LOAD_TOOLS
from navi.agent.events import AgentEvent, PlanReady, Status
from navi.agent.persistence import RunWriter
from navi.agent.run import RunState
from navi.llm.base import CallOptions, LLMBackend
from navi.llm.chunks import CompletionBuilder, TextDelta
from navi.llm.errors import LLMError
from navi.llm.messages import Message, utcnow
from navi.llm.tokens import estimate_tokens
from navi.logging import get_logger
from navi.sessions.store import SessionStore

PLANNING_TEMPERATURE = 0.3
# Words that join or order several things to do, or ask for a plan: a short message with one of them
# is planned.
SEQUENCE = re.compile(
    r"\b(?:and|then|after|afterwards|before|also|first|second|next|finally|steps?|plan)\b|;",
    re.IGNORECASE,
)
STEP = re.compile(r"^\s*\d+[.)]\s+\S", re.MULTILINE)
EARLY_CHARS = 240  # no DIRECT and no numbered step by then: the reply is not going to be a decision

log = get_logger(__name__)

Decision = Literal["direct", "plan", "malformed", "error"]


def needs_plan(text: str, skip_words: int) -> bool:
    """Whether a message goes through the planning call. Not when it has at most `skip_words` words
    on one line and no word of sequence (`SEQUENCE`) or numbered step: "Hi!", "What should I pack
    for rain?", "Thanks, that's all." A plan there is DIRECT anyway, and the call costs a re-read of
    the conversation on the planning slot and the wait for its reply before the answer starts
    (docs/benchmarks.md). `skip_words` 0: every message."""
    words = text.split()
    if not skip_words or len(words) > skip_words or "\n" in text.strip():
        return True
    return bool(SEQUENCE.search(text) or STEP.search(text))


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


def settled(text: str) -> bool:
    """Whether the reply so far decides the outcome, so the rest need not be read."""
    head = text.lstrip()
    if head[:6].upper() == "DIRECT":
        return True
    return len(head) > EARLY_CHARS and STEP.search(head) is None


def planning_messages(answer: Sequence[Message], tool_names: Sequence[str]) -> list[Message]:
    """The answer's own messages with the planning instruction after them, as the user's turn.

    The prompt is the one the answer call sends (same system message, same conversation) plus one
    message, so a model server reads only what came since the last call of the session."""
    instruction = prompts.load("planning").replace("{tools}", ", ".join(tool_names) or "none")
    return [*answer, Message.user(instruction)]


async def run_planning(
    llm: LLMBackend,
    model: str,
    answer: Sequence[Message],
    tool_names: Sequence[str],
    *,
    max_tokens: int = 160,
    num_ctx: int | None = None,
) -> PlanOutcome:
    """Ask for DIRECT or a plan. Model failures become an "error" outcome; a stop propagates."""
    messages = planning_messages(answer, tool_names)
    options = CallOptions(
        model=model,
        temperature=PLANNING_TEMPERATURE,
        think=False,
        max_tokens=max_tokens,
        num_ctx=num_ctx,
        kind="planning",
    )
    builder = CompletionBuilder()
    text = ""
    try:
        stream = llm.stream_complete(messages, options)
        async with contextlib.aclosing(stream):  # type: ignore[type-var]
            async for chunk in stream:
                builder.add(chunk)
                if isinstance(chunk, TextDelta):
                    text += chunk.text
                    if settled(text):
                        break  # closing the stream stops the generation
            else:
                text = ""  # read to its end: the whole completion decides
    except LLMError as exc:
        return PlanOutcome("error", "", error=str(exc))
    if text:
        outcome = classify(text)
        if outcome.decision == "malformed":
            outcome.error = f"no DIRECT and no numbered step in its first {EARLY_CHARS} characters"
        return outcome
    result = builder.build()
    outcome = classify(result.text)
    if result.finish_reason == "length" and outcome.decision != "direct":
        # A plan that ran into the cap is not trusted (small models loop); the log keeps it.
        return PlanOutcome("malformed", result.text, error=f"cut off at {max_tokens} tokens")
    return outcome


class PlanningConfig(Protocol):
    max_tokens_planning: int
    num_ctx: int


async def plan_phase(
    run: RunState,
    writer: RunWriter,
    sessions: SessionStore,
    config: PlanningConfig,
    answer: Sequence[Message],
) -> AsyncIterator[AgentEvent]:
    """The planning phase of a stored session's turn: the call, its log, and the plan if there is one.
    `answer` is what the turn's first answer call would send."""
    yield Status(phase="planning", detail="deciding whether the request needs a plan")
    outcome = await run_planning(
        run.llm,
        run.model,
        answer,
        [n for n in run.tools.names if n != LOAD_TOOLS],
        max_tokens=config.max_tokens_planning,
        num_ctx=config.num_ctx,
    )
    await writer.flush(run)
    await sessions.add_planning_log(run.ctx.session_id, outcome.log_entry(run.model))
    if outcome.plan:
        plan = Message.assistant(outcome.plan, is_plan=True)
        await writer.save(run, display=[plan], context=[plan])
        run.grew(estimate_tokens(outcome.plan))  # sent after its request, as a note
        yield PlanReady(plan=outcome.plan)
    elif outcome.error:
        log.warning("planning.failed", error=outcome.error)
