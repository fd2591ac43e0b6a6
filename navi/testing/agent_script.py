"""A script for whole agent runs: planning, summary, naming and analysis calls are answered separately.

Tests queue the turns that matter (`turns`), and optionally plans and summaries; everything else
gets a sensible default, so a test reads as the conversation it checks.
"""

from __future__ import annotations

import re
from collections import deque

from navi.testing.script import Reply, Script, ScriptRequest

PLANNING_MARK = "You are the planning step"
PLAN_MARK = "[Plan for this request"  # how a plan note starts (navi.agent.context.PLAN_HEADING)
HINT_MARK = "\n\n[Navi: for this message, "  # a later message's tool note (navi.agent.disclosure)
SUMMARY_MARK = "You are compressing the earlier part"
NAMING_MARK = "Give this conversation a short title"
EXTRACT_MARK = "You read a conversation between a person"
PROFILE_MARK = "Write a short profile of the person"
ARCHIVE_SUMMARY_MARK = "You write the summary of a whole conversation"
ASSESSMENT_MARK = "You judge how well an assistant"
FACTS_MARK = "You extract facts from a conversation"
# A valid answer to each analysis call, for tests that do not care what the model says.
DEFAULT_ASSESSMENT = (
    '{"overall_score": 4, "judge_summary": "The assistant answered the question.", '
    '"strengths": ["direct"], "actionable_feedback": ["say where the numbers come from"]}'
)


def kind_of(request: ScriptRequest) -> str:
    system = request.system_text
    if PLANNING_MARK in request.last_user_text:  # the instruction after the answer's own messages
        return "planning"
    if system.startswith(SUMMARY_MARK) or request.last_user_text.startswith(SUMMARY_MARK):
        return "summary"  # its own request, or the instruction after the conversation's messages
    if system.startswith(NAMING_MARK):
        return "naming"
    if system.startswith(EXTRACT_MARK):
        return "extract"
    if system.startswith(PROFILE_MARK):
        return "profile"
    if system.startswith(ARCHIVE_SUMMARY_MARK):
        return "archive_summary"
    if system.startswith(ASSESSMENT_MARK):
        return "assessment"
    if system.startswith(FACTS_MARK):
        return "facts"
    return "turn"


def echo_facts_summary(request: ScriptRequest) -> Reply:
    """Default summariser: the distinct words holding a digit (the 'key facts'), as one short line —
    shorter than its input and not a copy of it, so Navi's summary checks accept it."""
    if request.last_user_text.startswith(SUMMARY_MARK):  # after the conversation's own messages
        text = "\n".join(m.content or "" for m in request.messages[1:-1])
    else:
        text = request.last_user_text.split("Conversation to summarise:", 1)[-1]
    facts = list(dict.fromkeys(re.findall(r"[^\s,;:()]*\d[^\s,;:()]*", text)))
    return Reply(
        text=f"- Key facts: {', '.join(facts[:40])}" if facts else "- The user and the assistant chatted."
    )


class AgentScript(Script):
    def __init__(self) -> None:
        super().__init__(responder=self._respond)
        self.turns: deque[Reply] = deque()
        self.plans: deque[Reply] = deque()
        self.summaries: deque[Reply] = deque()
        self.extractions: deque[Reply] = deque()
        self.profiles: deque[Reply] = deque()
        self.archive_summaries: deque[Reply] = deque()
        self.assessments: deque[Reply] = deque()
        self.fact_lists: deque[Reply] = deque()
        self.title = "Scripted title"

    def turn(self, *replies: Reply | str) -> AgentScript:
        self.turns.extend(Reply(text=r) if isinstance(r, str) else r for r in replies)
        return self

    def plan(self, *replies: Reply | str) -> AgentScript:
        self.plans.extend(Reply(text=r) if isinstance(r, str) else r for r in replies)
        return self

    def summary(self, *replies: Reply | str) -> AgentScript:
        self.summaries.extend(Reply(text=r) if isinstance(r, str) else r for r in replies)
        return self

    def extract(self, *replies: Reply | str) -> AgentScript:
        self.extractions.extend(Reply(text=r) if isinstance(r, str) else r for r in replies)
        return self

    def profile(self, *replies: Reply | str) -> AgentScript:
        self.profiles.extend(Reply(text=r) if isinstance(r, str) else r for r in replies)
        return self

    def archive_summary(self, *replies: Reply | str) -> AgentScript:
        self.archive_summaries.extend(Reply(text=r) if isinstance(r, str) else r for r in replies)
        return self

    def assess(self, *replies: Reply | str) -> AgentScript:
        self.assessments.extend(Reply(text=r) if isinstance(r, str) else r for r in replies)
        return self

    def facts(self, *replies: Reply | str) -> AgentScript:
        self.fact_lists.extend(Reply(text=r) if isinstance(r, str) else r for r in replies)
        return self

    def of_kind(self, kind: str) -> list[ScriptRequest]:
        return [r for r in self.requests if kind_of(r) == kind]

    def _respond(self, request: ScriptRequest) -> Reply:
        kind = kind_of(request)
        if kind == "planning":
            return self.plans.popleft() if self.plans else Reply(text="DIRECT")
        if kind == "summary":
            return self.summaries.popleft() if self.summaries else echo_facts_summary(request)
        if kind == "naming":
            return Reply(text=self.title)
        if kind == "extract":
            return self.extractions.popleft() if self.extractions else Reply(text="NONE")
        if kind == "profile":
            if self.profiles:
                return self.profiles.popleft()
            facts = request.last_user_text.splitlines()
            return Reply(text="They are known for: " + "; ".join(facts))
        if kind == "archive_summary":
            return self.archive_summaries.popleft() if self.archive_summaries else echo_facts_summary(request)
        if kind == "assessment":
            return self.assessments.popleft() if self.assessments else Reply(text=DEFAULT_ASSESSMENT)
        if kind == "facts":
            return self.fact_lists.popleft() if self.fact_lists else Reply(text='{"facts": []}')
        if self.turns:
            return self.turns.popleft()
        return Reply(text="(the script has no more turns)")
