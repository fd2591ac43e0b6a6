"""The planning call is skipped for short messages with nothing to put in order (PLANNING_SKIP_WORDS,
12 as shipped): a greeting or a question costs no re-read of the conversation and no wait."""

from __future__ import annotations

from pathlib import Path

import pytest

from navi.agent.events import PlanReady, StreamEnd
from navi.agent.planning import needs_plan
from navi.config import load_settings
from tests.agent_helpers import collect, scripted_runtime


@pytest.mark.parametrize(
    ("text", "planned"),
    [
        ("Hi! I'm planning a weekend in Porto.", False),
        ("What should I pack for rainy weather?", False),
        ("Thanks, that's all for now.", False),
        ("Book the cheapest flight to Lisbon", False),
        ("Find flights to Lisbon and book the cheapest", True),  # two things to do
        ("Read the report, then summarise it", True),
        ("First check the weather", True),
        ("Download it; unzip it", True),
        ("Make a plan for Sunday", True),  # asked for
        ("plan", True),  # the demo's word (README: `navi fake-model`)
        ("1. fetch the page", True),
        ("Fetch the page\nSummarise it", True),  # a second line
        ("one two three four five six seven eight nine ten eleven twelve", False),
        ("one two three four five six seven eight nine ten eleven twelve thirteen", True),
    ],
)
def test_which_messages_are_planned(text: str, planned: bool) -> None:
    assert needs_plan(text, 12) is planned
    assert needs_plan(text, 0) is True  # 0: every message


def test_twelve_words_ship() -> None:
    assert load_settings(planning_skip_words=12).planning_skip_words == 12
    field = type(load_settings()).model_fields["planning_skip_words"]
    assert field.default == 12


async def test_a_short_question_skips_the_planning_call_and_a_task_does_not(tmp_path: Path) -> None:
    rt, _, script = await scripted_runtime(tmp_path, sql=True, planning_skip_words=12)
    plan = "1. Look up the flights\n2. Book the cheapest"
    script.plan(plan)
    script.turn("Hello!", "Done: booked.")
    session = await rt.sessions.create("secretary")
    short = await collect(rt.agent.run_stream(session.id, "Hi, how are you?"))
    assert isinstance(short[-1], StreamEnd) and not any(isinstance(e, PlanReady) for e in short)
    assert script.of_kind("planning") == []  # no call at all, not a DIRECT
    task = await collect(rt.agent.run_stream(session.id, "Find flights to Lisbon and book the cheapest"))
    assert [e.plan for e in task if isinstance(e, PlanReady)] == [plan]
    assert len(script.of_kind("planning")) == 1
    stored = await rt.sessions.get(session.id)
    assert stored is not None
    assert [log["decision"] for log in stored.planning_logs] == ["plan"]
    await rt.aclose()
