"""A question the user stopped before any answer is never merged into the next one: the model is
told it was stopped (NAVI_STOPPED_QUESTIONS=mark, the default) or does not see it (omit). Through
the real Ollama adapter (which merges neighbouring user messages) and the fake model server."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from navi.agent.context import STOPPED_NOTE
from navi.agent.events import Status, StreamStopped
from navi.agent.turns import RunControl
from navi.compose import Runtime, build_runtime
from navi.config import load_settings
from navi.llm.messages import Message
from navi.llm.ollama_backend import OllamaBackend
from navi.llm.registry import BackendRegistry
from navi.sessions.memory_store import InMemorySessionStore
from navi.testing.agent_script import AgentScript, kind_of
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptRequest
from tests.agent_helpers import MODEL, collect


class ByQuestion(AgentScript):
    """Turns answered by what was asked, whichever call got there first."""

    def __init__(self, answers: dict[str, Reply | str]) -> None:
        super().__init__()
        self.answers = answers

    def _respond(self, request: ScriptRequest) -> Reply:
        if kind_of(request) != "turn":
            return super()._respond(request)
        answer = self.answers.get(request.last_user_text.split("\n\n")[-1], "(no answer scripted)")
        return Reply(text=answer) if isinstance(answer, str) else answer


async def runtime(
    tmp_path: Path, fake: FakeModelServer, script: AgentScript | None = None, **settings: Any
) -> tuple[Runtime, AgentScript]:
    script = script or AgentScript()
    fake.script = script
    registry = BackendRegistry()
    registry.register_instance("ollama", OllamaBackend(fake.url), default_model=MODEL)
    loaded = load_settings(db_path=str(tmp_path / "n.db"), tools_dir=str(tmp_path / "tools"), **settings)
    return await build_runtime(loaded, backends=registry, sessions=InMemorySessionStore()), script


def conversation(script: AgentScript) -> list[tuple[str, str]]:
    """The last answered turn's messages as the model got them, without the system message."""
    request = script.of_kind("turn")[-1]
    return [(m.role, m.content or "") for m in request.messages if m.role != "system"]


async def stop_while_the_model_reads(rt: Runtime, session_id: str, text: str) -> None:
    """Send `text` and stop once the request is with the model, before its first word."""
    stop = asyncio.Event()
    events = []
    async for event in rt.agent.run_stream(session_id, text, control=RunControl(stop_event=stop)):
        events.append(event)
        if isinstance(event, Status) and event.phase == "waiting":
            stop.set()
    assert isinstance(events[-1], StreamStopped)


@pytest.mark.parametrize("mode", ["mark", "omit"])
async def test_a_question_stopped_before_any_answer_is_not_merged(
    tmp_path: Path, fake_server: FakeModelServer, mode: str
) -> None:
    answers: dict[str, Reply | str] = {
        "What is the capital of France?": Reply(text="too late", first_delay=5.0),
        "And of Spain?": "Madrid.",
        "And Italy?": "Rome.",
    }
    rt, script = await runtime(tmp_path, fake_server, ByQuestion(answers), navi_stopped_questions=mode)
    session = await rt.sessions.create("secretary")
    await stop_while_the_model_reads(rt, session.id, "What is the capital of France?")
    await collect(rt.agent.run_stream(session.id, "And of Spain?"))
    if mode == "mark":
        assert conversation(script) == [
            ("user", "What is the capital of France?"),
            ("assistant", STOPPED_NOTE),
            ("user", "And of Spain?"),
        ]
    else:
        assert conversation(script) == [("user", "And of Spain?")]

    # Stopped before the model was even asked: the same.
    stop = asyncio.Event()
    stop.set()
    await collect(
        rt.agent.run_stream(session.id, "What about Portugal?", control=RunControl(stop_event=stop))
    )
    await collect(rt.agent.run_stream(session.id, "And Italy?"))
    tail = conversation(script)[-3:]
    if mode == "mark":
        assert tail == [("user", "What about Portugal?"), ("assistant", STOPPED_NOTE), ("user", "And Italy?")]
    else:
        assert tail == [("user", "And of Spain?"), ("assistant", "Madrid."), ("user", "And Italy?")]

    # The stored conversation is as it was: both questions kept for the person to read.
    stored = await rt.sessions.get(session.id)
    assert stored is not None
    assert [m.content for m in stored.messages if m.role == "user"] == [
        "What is the capital of France?",
        "And of Spain?",
        "What about Portugal?",
        "And Italy?",
    ]
    await rt.aclose()


async def test_a_partial_answer_and_stored_messages_are_left_as_they_were(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    """Only a question with no answer at all gets the note; user messages stored without a turn
    (POST …/messages with "respond": false) still reach the model as one message."""
    rt, script = await runtime(tmp_path, fake_server)
    never = "The first part of a long answer " * 20
    script.turn(Reply(text=never, chunk_chars=8, delay=0.05), "Fine.", "Noted.")
    session = await rt.sessions.create("secretary")
    stop = asyncio.Event()
    async for event in rt.agent.run_stream(
        session.id, "Tell me a story", control=RunControl(stop_event=stop)
    ):
        if getattr(event, "type", "") == "stream_delta":
            stop.set()
    await collect(rt.agent.run_stream(session.id, "Shorter, please"))
    sent = conversation(script)
    assert sent[0] == ("user", "Tell me a story")
    assert sent[1][0] == "assistant" and sent[1][1].startswith("The") and STOPPED_NOTE not in sent[1][1]

    await rt.sessions.append(session.id, display=[Message.user("A note")], context=[Message.user("A note")])
    await collect(rt.agent.run_stream(session.id, "and a question"))
    assert conversation(script)[-1] == ("user", "A note\n\nand a question")
    await rt.aclose()
