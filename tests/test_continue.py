"""Continuing an answer the token cap cut off: the engine's continuation turn, and how it is shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from navi.agent.events import ErrorEvent, StreamEnd
from navi.agent.turns import Continue
from navi.runs import RunManager, branching
from navi.sessions import shown
from navi.sessions.continuations import CONTINUE_NOTE
from navi.testing.script import Reply
from tests.agent_helpers import collect, scripted_runtime


async def test_a_cut_off_answer_is_continued_into_one_answer(tmp_path: Path) -> None:
    rt, _, script = await scripted_runtime(tmp_path, planning_enabled=False)
    script.turn(
        Reply(text="The first half of a long", finish_reason="length"),
        Reply(text=" story, and its end."),
    )
    session = await rt.sessions.create("secretary")
    await collect(rt.agent.run_stream(session.id, "Tell me a story"))
    stored = await rt.sessions.get(session.id)
    assert stored is not None
    cut = stored.messages[-1]
    assert cut.metadata.finish_reason == "length"

    events = await collect(rt.agent.run_stream(session.id, Continue(cut.id)))
    end = events[-1]
    assert isinstance(end, StreamEnd)
    assert end.content == " story, and its end." and end.finish_reason == "stop"

    second = script.of_kind("turn")[-1].messages
    assert second[-1].role == "user" and (second[-1].content or "").endswith(CONTINUE_NOTE)
    assert second[-2].role == "assistant" and second[-2].content == "The first half of a long"

    stored = await rt.sessions.get(session.id)
    assert stored is not None
    rows = stored.messages
    assert [m.role for m in rows] == ["user", "assistant", "assistant"]
    assert rows[-1].metadata.continues == cut.id and stored.parents[rows[-1].id] == cut.id
    assert all(CONTINUE_NOTE not in (m.content or "") for m in [*stored.messages, *stored.context])
    assert [m.content for m in stored.context if m.role == "assistant"] == [
        "The first half of a long",
        " story, and its end.",
    ]

    view = shown.path(stored)
    assert [(m.role, m.content) for m in view] == [
        ("user", "Tell me a story"),
        ("assistant", "The first half of a long story, and its end."),
    ]
    assert view[-1].id == cut.id and view[-1].metadata.finish_reason is None
    assert view[-1].metadata.parts == [cut.id, rows[-1].id]
    await rt.aclose()


async def test_a_continuation_cut_off_again_is_continued_again(tmp_path: Path) -> None:
    rt, _, script = await scripted_runtime(tmp_path, planning_enabled=False)
    script.turn(
        Reply(text="One, ", finish_reason="length"),
        Reply(text="two, ", finish_reason="length"),
        Reply(text="three."),
    )
    session = await rt.sessions.create("secretary")
    await collect(rt.agent.run_stream(session.id, "Count"))
    stored = await rt.sessions.get(session.id)
    assert stored is not None
    first = stored.messages[-1].id
    events = await collect(rt.agent.run_stream(session.id, Continue(first)))
    assert isinstance(events[-1], StreamEnd) and events[-1].finish_reason == "length"
    stored = await rt.sessions.get(session.id)
    assert stored is not None and events[-1].message_id == stored.messages[-1].id != first
    view = shown.path(await rt.sessions.get(session.id))  # type: ignore[arg-type]
    assert view[-1].content == "One, two, " and view[-1].metadata.finish_reason == "length"

    # The first part's id (what a client shows) continues the whole answer.
    await collect(rt.agent.run_stream(session.id, Continue(first)))
    view = shown.path(await rt.sessions.get(session.id))  # type: ignore[arg-type]
    assert [m.content for m in view] == ["Count", "One, two, three."]
    assert view[-1].id == first and view[-1].metadata.finish_reason is None
    await rt.aclose()


async def test_an_answer_not_cut_off_is_not_continued_and_nothing_is_stored(tmp_path: Path) -> None:
    rt, _, script = await scripted_runtime(tmp_path, planning_enabled=False)
    script.turn(Reply(text="A whole answer."))
    session = await rt.sessions.create("secretary")
    await collect(rt.agent.run_stream(session.id, "Hi"))
    before = await rt.sessions.get(session.id)
    assert before is not None
    answer = before.messages[-1]
    calls = len(script.requests)

    events = await collect(rt.agent.run_stream(session.id, Continue(answer.id)))
    assert [type(e) for e in events] == [ErrorEvent]
    assert isinstance(events[0], ErrorEvent) and events[0].code == "nothing_to_continue"
    runs = RunManager(rt.agent)
    with pytest.raises(branching.NothingToContinue):
        await branching.continue_answer(runs, session.id, answer.id)

    after = await rt.sessions.get(session.id)
    assert after is not None
    assert [m.id for m in after.messages] == [m.id for m in before.messages]
    assert len(after.context) == len(before.context)
    assert len(script.requests) == calls
    await rt.aclose()


async def test_only_the_latest_answer_is_continued(tmp_path: Path) -> None:
    rt, _, script = await scripted_runtime(tmp_path, planning_enabled=False)
    script.turn(Reply(text="Cut", finish_reason="length"), Reply(text="Next answer", finish_reason="length"))
    session = await rt.sessions.create("secretary")
    await collect(rt.agent.run_stream(session.id, "First"))
    await collect(rt.agent.run_stream(session.id, "Second"))
    stored = await rt.sessions.get(session.id)
    assert stored is not None
    older = stored.messages[1]
    assert older.metadata.finish_reason == "length"
    events = await collect(rt.agent.run_stream(session.id, Continue(older.id)))
    assert isinstance(events[-1], ErrorEvent) and events[-1].code == "nothing_to_continue"
    after = await rt.sessions.get(session.id)
    assert after is not None and len(after.messages) == len(stored.messages)
    await rt.aclose()


async def test_a_continuation_whose_stream_breaks_is_kept_and_continued_again(tmp_path: Path) -> None:
    rt, _, script = await scripted_runtime(tmp_path, planning_enabled=False)
    script.turn(
        Reply(text="Alpha beta ", finish_reason="length"),
        Reply(text="gamma delta epsilon", chunk_chars=6, error_after=1),
        Reply(text=" zeta."),
    )
    session = await rt.sessions.create("secretary")
    await collect(rt.agent.run_stream(session.id, "Letters"))
    stored = await rt.sessions.get(session.id)
    assert stored is not None
    first = stored.messages[-1].id
    events = await collect(rt.agent.run_stream(session.id, Continue(first)))
    assert isinstance(events[-1], ErrorEvent) and events[-1].code == "model_interrupted"
    stored = await rt.sessions.get(session.id)
    assert stored is not None
    assert stored.messages[-1].metadata.continues == first and stored.messages[-1].metadata.interrupted
    assert not any(m.metadata.is_failure_record for m in stored.messages)  # no Retry for it
    view = shown.path(stored)
    assert [m.content for m in view] == ["Letters", "Alpha beta gamma "]
    assert view[-1].metadata.finish_reason == "length"  # still unfinished: Continue

    await collect(rt.agent.run_stream(session.id, Continue(first)))
    view = shown.path(await rt.sessions.get(session.id))  # type: ignore[arg-type]
    assert [m.content for m in view] == ["Letters", "Alpha beta gamma  zeta."]
    assert view[-1].metadata.finish_reason is None
    await rt.aclose()
