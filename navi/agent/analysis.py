"""Archive analytics, generated on demand through the session's own model: a summary (with an
optional focus), an assessment and facts, shaped as `session-archive/v1` defines them.

The model reads the conversation as compression formats it (`format_messages`: tool traffic as
short previews), without display-only messages and system prompts. Every call is bounded: its
input by `max_input_tokens`, its answer by `max_tokens`, its time by the call limits.

- The summary is written the way a compression summary is — in chunks folded into one another when
  the conversation is longer than the input cap, checked, asked again once — with instructions of
  its own and the focus.
- Assessment and facts are asked for as one strict JSON object. Small local models write poor JSON,
  so the answer is read tolerantly (`json_in_reply`), turned into the part, and checked against the
  archive's JSON Schema and rules of its own (a score from 1 to 5, triples of three texts found in
  the conversation). An unusable answer is asked for again once, with the reason; a second one
  raises `AnalysisRejected`, and nothing is stored rather than something wrong.
- Facts of a long conversation are gathered chunk by chunk and merged; the assessment of one reads
  a summary of its earlier part and its newest part as it is.
- The facts' statistics are counted by Navi, not asked of the model.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from navi import prompts
from navi.agent.compression.summary import SummaryCall, SummaryRejected, summarize
from navi.agent.compression.transcript import format_messages, take_chunk
from navi.llm import tokens
from navi.llm.answers import ECHO_SHARE, overlap_share, repeats_itself, words
from navi.llm.base import CallOptions, LLMBackend
from navi.llm.calls import CallLimits, bound
from navi.llm.errors import LLMError
from navi.llm.messages import Message, utcnow
from navi.llm.registry import BackendRegistry
from navi.llm.text_tools import json_in_reply
from navi.logging import get_logger
from navi.profiles.registry import ProfileRegistry
from navi.sessions.archive import part_problem
from navi.sessions.models import ANALYSIS_PARTS, Session

log = get_logger(__name__)

DEFAULT_CRITERIA = ("clarity", "coherence", "relevance", "completeness", "actionability")
MAX_TRIPLES = 300
MAX_TERM = 300  # characters of one subject, predicate or object
MAX_ITEMS = 10  # strengths, feedback
MAX_TEXT = 1_000  # characters of one summary, reasoning, strength or piece of feedback
RETRY_NOTE = "Your last answer could not be used: {reason}. Answer again with only the JSON object."
# The task is said again after the conversation, where even a small model still reads it (one that
# read it only before a long conversation writes the conversation on, or the instructions back).
ASSESSMENT_CUE = (
    'Your judgement, as one JSON object with "overall_score", "judge_summary", "strengths", '
    '"actionable_feedback" and "reasoning":'
)
FACTS_CUE = (
    'The facts this conversation states, as one JSON object {"facts": [[subject, predicate, object], ...]}:'
)
_SCORE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:(?:/|out of)\s*5\s*)?$")


@dataclass(frozen=True, kw_only=True, slots=True)
class AnalysisSettings:
    temperature: float = 0.1
    max_input_tokens: int = 3_000  # what one call may read (CONTEXT_SUMMARY_MAX_INPUT_TOKENS)
    max_tokens: int = 768  # what one call may write (LLM_MAX_TOKENS_ANALYSIS)


@dataclass(frozen=True, kw_only=True)
class AnalysisAsk:
    """Which parts to generate; `focus` steers the summary, `criteria` the assessment."""

    summary: bool = False
    focus: str | None = None
    assessment: bool = False
    criteria: tuple[str, ...] = ()
    facts: bool = False

    @property
    def parts(self) -> list[str]:
        return [name for name in ANALYSIS_PARTS if getattr(self, name)]


class NothingToAnalyse(ValueError):
    """The session has no conversation yet."""


class AnalysisRejected(LLMError):
    """The model answered twice, and neither answer was a part to keep. Nothing was stored."""

    kind = "analysis_rejected"
    code = "analysis_failed"

    def __init__(self, part: str, reason: str, *, model: str = "") -> None:
        super().__init__(f"the model's {part} could not be used, twice in a row: {reason}", model=model)
        self.part = part
        self.reason = reason


class Unusable(ValueError):
    """Why one answer cannot become the part (said to the model when it is asked again)."""


def _now() -> str:
    return utcnow().isoformat().replace("+00:00", "Z")


# --- reading the model's answers -------------------------------------------------------------------
def _text(value: Any) -> str:
    return " ".join(value.split())[:MAX_TEXT] if isinstance(value, str) else ""


def _texts(value: Any, key: str) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise Unusable(f'"{key}" was missing or not a list of texts')
    return [t for t in (_text(v) for v in value) if t][:MAX_ITEMS]


def _score(value: Any) -> float | int:
    if isinstance(value, str) and (match := _SCORE.match(value)):
        value = float(match.group(1))
    if isinstance(value, bool) or not isinstance(value, int | float) or not 1 <= value <= 5:
        raise Unusable(f'"overall_score" must be a number from 1 to 5, not {str(value)[:40]!r}')
    return int(value) if float(value).is_integer() else round(float(value), 2)


def assessment_from(value: Any, criteria: Sequence[str], instructions: str) -> dict[str, Any]:
    """An assessment part from the model's JSON; raises `Unusable`."""
    if not isinstance(value, dict):
        raise Unusable("it was not one JSON object")
    summary = _text(value.get("judge_summary"))
    if not summary:
        raise Unusable('"judge_summary" was missing or empty')
    if len(words(summary)) >= 3 and overlap_share(summary, instructions) >= 0.6:
        raise Unusable('"judge_summary" repeated the instructions instead of judging the conversation')
    part: dict[str, Any] = {
        "created_at": _now(),
        "criteria": list(criteria),
        "overall_score": _score(value.get("overall_score")),
        "judge_summary": summary,
        "strengths": _texts(value.get("strengths"), "strengths"),
        "actionable_feedback": _texts(value.get("actionable_feedback"), "actionable_feedback"),
    }
    reasoning = _text(value.get("reasoning"))
    if reasoning:
        part["reasoning"] = reasoning
    return part


def _term(value: Any) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    return " ".join(value.split())[:MAX_TERM] if isinstance(value, str) else ""


def triples_from(value: Any, conversation: str, instructions: str) -> list[list[str]]:
    """Fact triples from the model's JSON; raises `Unusable`.

    A triple whose subject or object shares no word with `conversation` is the model's invention
    and is left out; an answer made only of those is unusable.
    """
    if isinstance(value, dict):
        found = next((value[k] for k in ("facts", "triples", "simple_triples") if k in value), None)
        if found is None:
            raise Unusable('it had no "facts" list')
        value = found
    if not isinstance(value, list):
        raise Unusable('"facts" was not a list')
    said = set(words(conversation))
    triples: list[list[str]] = []
    for item in value:
        if isinstance(item, dict):
            item = [item.get("subject"), item.get("predicate"), item.get("object")]
        terms = [_term(t) for t in item] if isinstance(item, list) and len(item) == 3 else []
        if not terms or not all(terms):
            raise Unusable('each fact must be a list of three texts: ["subject", "predicate", "object"]')
        if all(f'"{t}"' in instructions for t in terms):
            raise Unusable("it copied the example instead of taking facts from the conversation")
        if said.intersection(words(terms[0])) and said.intersection(words(terms[2])):
            triples.append(terms)
    if value and not triples:
        raise Unusable("none of its facts are about what the conversation says")
    return triples


def statistics(triples: Sequence[Sequence[str]]) -> dict[str, Any]:
    """Counts Navi makes itself: entities (distinct subjects and objects), relationships (facts)."""
    entities = {t[0].casefold() for t in triples} | {t[2].casefold() for t in triples}
    predicates = Counter(t[1] for t in triples)
    return {
        "entities_count": len(entities),
        "relationships_count": len(triples),
        "predicates_count": len(predicates),
        "by_predicate": dict(predicates.most_common()),
        "by_subject": dict(Counter(t[0] for t in triples).most_common()),
    }


# --- asking the model -----------------------------------------------------------------------------
class Analyst:
    """Generates analytics through the model of a session's profile (the way workers call it)."""

    def __init__(
        self,
        settings: AnalysisSettings,
        *,
        backends: BackendRegistry,
        profiles: ProfileRegistry,
        limits: CallLimits,
    ) -> None:
        self.settings = settings
        self.backends = backends
        self.profiles = profiles
        self.limits = limits

    async def analyse(self, session: Session, ask: AnalysisAsk) -> dict[str, dict[str, Any]]:
        """The asked parts, generated in order. Raises `NothingToAnalyse`, `AnalysisRejected` or
        the model's own `LLMError` (unreachable, timeout …)."""
        lines = format_messages(session.conversation)
        if not lines:
            raise NothingToAnalyse("the session has no conversation to analyse yet")
        profile = self.profiles.of_session(session.profile_id)
        llm = bound(self.backends.observed(self.profiles.backend_of(profile)), self.limits)
        model = self.profiles.model_of(profile)
        parts: dict[str, dict[str, Any]] = {}
        for name in ask.parts:
            try:
                if name == "summary":
                    parts[name] = await self._summary(llm, model, lines, ask.focus)
                elif name == "assessment":
                    parts[name] = await self._assessment(llm, model, lines, ask.criteria or DEFAULT_CRITERIA)
                else:
                    parts[name] = await self._facts(llm, model, lines)
            except SummaryRejected as exc:  # the summary, or the one of a long conversation's start
                reason = exc.reason if name == "summary" else f"the summary of its earlier part {exc.reason}"
                raise AnalysisRejected(name, reason, model=model) from None
        log.info("analysis.done", session_id=session.id, parts=list(parts))
        return parts

    def _options(self, model: str) -> CallOptions:
        return CallOptions(
            model=model,
            temperature=self.settings.temperature,
            think=False,
            max_tokens=self.settings.max_tokens,
            kind="analysis",
        )

    def _budget(self, instructions: str, request: str) -> int:
        """Tokens left for conversation in a call with these instructions and request around it."""
        note = RETRY_NOTE.format(reason="x" * 200)
        fixed = tokens.estimate_messages_tokens([Message.system(instructions), Message.user(request + note)])
        return max(self.settings.max_input_tokens // 2, self.settings.max_input_tokens - fixed)

    async def _summarize(
        self, llm: LLMBackend, model: str, lines: list[str], instructions: str | None = None
    ) -> tuple[str, int]:
        call = SummaryCall(
            model=model,
            temperature=self.settings.temperature,
            max_input_tokens=self.settings.max_input_tokens,
            max_tokens=self.settings.max_tokens,
            instructions=instructions,
        )
        return await summarize(lines, llm, call)

    async def _summary(
        self, llm: LLMBackend, model: str, lines: list[str], focus: str | None
    ) -> dict[str, Any]:
        instructions = prompts.load("analysis_summary")
        if focus:
            instructions += f"\nGive most room to: {focus}"
        text, calls = await self._summarize(llm, model, lines, instructions)
        before = tokens.estimate_tokens("\n".join(lines))
        after = tokens.estimate_tokens(text)
        return {
            "created_at": _now(),
            "preserve_recent": 0,  # the whole conversation is summarised
            "focus": focus,
            "text": text,
            "metrics": {
                "tokens_before": before,
                "tokens_after": after,
                "compression_ratio": round(before / max(1, after), 2),
                "calls": calls,
            },
        }

    async def _assessment(
        self, llm: LLMBackend, model: str, lines: list[str], criteria: Sequence[str]
    ) -> dict[str, Any]:
        instructions = prompts.load("analysis_assessment")
        tail = f"\n\nCriteria: {', '.join(criteria)}\n{ASSESSMENT_CUE}"
        conversation = await self._within(
            llm, model, lines, self._budget(instructions, "Conversation:" + tail)
        )
        return await self._ask_json(
            "assessment",
            llm,
            model,
            instructions,
            f"Conversation:\n\n{conversation}{tail}",
            lambda value: assessment_from(value, criteria, instructions),
        )

    async def _within(self, llm: LLMBackend, model: str, lines: list[str], budget: int) -> str:
        """The conversation in `budget` tokens: whole, or a summary of its earlier part followed by
        as many of its newest lines as fit half the budget."""
        whole = "\n".join(lines)
        if tokens.estimate_tokens(whole) <= budget:
            return whole
        recent: list[str] = []
        size = 0
        for line in reversed(lines):
            size += tokens.estimate_tokens(line) + 1
            if size > budget // 2:
                break
            recent.insert(0, line)
        summary, _ = await self._summarize(llm, model, lines[: len(lines) - len(recent)])
        tail = "\n\nThe rest of the conversation:\n" + "\n".join(recent) if recent else ""
        return f"Summary of the earlier conversation:\n{summary}{tail}"

    async def _facts(self, llm: LLMBackend, model: str, lines: list[str]) -> dict[str, Any]:
        instructions = prompts.load("analysis_facts")
        budget = self._budget(instructions, f"Conversation:\n\n{FACTS_CUE}")
        found: dict[tuple[str, ...], list[str]] = {}
        remaining = list(lines)
        while remaining and len(found) < MAX_TRIPLES:
            chunk, remaining = take_chunk(remaining, budget)

            def build(value: Any, chunk: str = chunk) -> dict[str, Any]:
                return {"simple_triples": triples_from(value, chunk, instructions)}

            request = f"Conversation:\n\n{chunk}\n\n{FACTS_CUE}"
            part = await self._ask_json("facts", llm, model, instructions, request, build)
            for triple in part["simple_triples"]:
                found.setdefault(tuple(t.casefold() for t in triple), triple)
        triples = list(found.values())[:MAX_TRIPLES]
        return {"extracted_at": _now(), "simple_triples": triples, "statistics": statistics(triples)}

    async def _ask_json(
        self,
        part: str,
        llm: LLMBackend,
        model: str,
        instructions: str,
        request: str,
        build: Callable[[Any], dict[str, Any]],
    ) -> dict[str, Any]:
        """One JSON answer made into `part` and checked; asked again once with the reason."""
        reason = ""
        note = ""
        for attempt in (1, 2):
            result = await llm.complete(
                [Message.system(instructions), Message.user(f"{request}\n\n{note}" if note else request)],
                self._options(model),
            )
            try:
                data = build(json_in_reply(result.text))
                problem = part_problem(part, data)
                if problem is None:
                    return data
                reason = f"it does not fit the archive's schema ({problem})"
            except Unusable as exc:
                reason = str(exc)
            except ValueError:  # no JSON at all
                if overlap_share(result.text, instructions) >= ECHO_SHARE:
                    reason = "it repeated the instructions instead of following them"
                elif repeats_itself(result.text):
                    reason = "it repeated the same line over and over"
                elif result.finish_reason == "length":
                    reason = "it was cut off by the token limit: write less"
                else:
                    reason = "it was not JSON"
            log.info("analysis.unusable", part=part, attempt=attempt, reason=reason)
            note = RETRY_NOTE.format(reason=reason)
        raise AnalysisRejected(part, reason, model=model)
