"""The recipe for a new kind of turn (docs/architecture.md, "Kinds of turn"), done as an exercise.

`Echo` is a kind of turn Navi does not have: it answers with its own words, without the model. It
takes exactly the three steps of the recipe — a class beside the `Turn` union, its parser at the
edge that receives it, one arm where the agent picks a turn's events — and the run manager, its
leases, frames and followers carry it unchanged, as they carry every kind of turn.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from navi.agent.engine import Agent
from navi.agent.events import AgentEvent, StreamEnd
from navi.agent.turns import NewMessage, Retry, Turn
from navi.runs import RunManager
from tests.agent_helpers import scripted_runtime


# 1. The kind, beside the union.
@dataclass(frozen=True, slots=True)
class Echo:
    text: str


ExerciseTurn = Turn | Echo


# 2. Its parser, at the edge that receives it (here a client frame).
def parse(frame: dict[str, Any]) -> ExerciseTurn:
    match frame:
        case {"type": "echo", "text": str(text)}:
            return Echo(text)
        case {"type": "retry"}:
            return Retry()
        case {"type": "message", "content": str(content)}:
            return NewMessage(content)
    raise ValueError(f"not a turn: {frame!r}")


# 3. One arm where the agent picks the turn's events.
class EchoingAgent(Agent):
    def _turn_of(self, turn: Any, *args: Any) -> AsyncGenerator[AgentEvent, None]:
        match turn:
            case Echo(text=text):
                return self._echo(text)
        return super()._turn_of(turn, *args)

    async def _echo(self, text: str) -> AsyncGenerator[AgentEvent, None]:
        yield StreamEnd(content=text, context_tokens=0, max_context_tokens=0)


async def test_a_new_kind_of_turn_runs_through_the_run_manager_unchanged(tmp_path: Path) -> None:
    rt, _, script = await scripted_runtime(tmp_path, planning_enabled=False)
    rt.agent.__class__ = EchoingAgent  # the agent of this runtime, with the exercise's arm
    script.turn("A model's answer.")
    session = await rt.sessions.create("secretary")
    runs = RunManager(rt.agent)

    echoed = await runs.start(session.id, parse({"type": "echo", "text": "Just this."}))  # type: ignore[arg-type]
    await echoed.finished.wait()
    assert isinstance(echoed.result, StreamEnd)
    assert echoed.result.content == "Just this." and echoed.result.run_id == echoed.run_id
    assert [f["type"] for f in echoed.frames] == ["stream_end"]
    assert script.of_kind("turn") == []  # no model call

    # The kinds Navi has go on as before, through the same manager.
    asked = await runs.start(session.id, parse({"type": "message", "content": "Hello?"}))
    await asked.finished.wait()
    assert isinstance(asked.result, StreamEnd) and asked.result.content == "A model's answer."
    assert asked.frames[0]["type"] == "stream_start"
    await rt.aclose()
