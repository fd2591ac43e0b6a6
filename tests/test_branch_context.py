"""The context buffer of a branch (navi/agent/branches.py): a summary is reused only when it covers
nothing past the branch point; otherwise the branch's path is the context again, compressed as
usual. With the scripted backend and a real SQLite store: what the model is sent after a branch."""

from __future__ import annotations

from pathlib import Path

from navi.agent import branches
from navi.agent.branches import branch_context
from navi.agent.context import unanswered_marker
from navi.llm.messages import Message
from navi.testing.script import Reply
from tests.agent_helpers import collect
from tests.test_agent_compression import SUMMARY, seeded


def sent(request: object) -> list[str]:
    return [m.content or "" for m in request.messages]  # type: ignore[attr-defined]


async def test_a_branch_after_the_summarised_part_keeps_the_summary(tmp_path: Path) -> None:
    rt, _, script, sid, old = await seeded(tmp_path, turns=8, tokens=15000)
    script.summary(SUMMARY)
    script.turn(Reply(text="Your locker code is 4711."))
    await collect(rt.agent.run_stream(sid, "What is my locker code?"))
    compressed = await rt.sessions.get(sid)
    assert compressed is not None and compressed.context[0].is_summary

    # edit the last question: the branch point (Answer 7.) is after what the summary covers
    await branches.branch_at(rt.sessions, sid, old[-1].id)
    context = (await rt.sessions.get(sid, display=False)).context  # type: ignore[union-attr]
    assert [m.content for m in context[1:]] == ["Question number 7: what about topic 7?", "Answer 7."]
    assert context[0] is not None and context[0].id == compressed.context[0].id
    script.turn(Reply(text="It is 4711."))
    await collect(rt.agent.run_stream(sid, "Which code was it again?"))
    turn = sent(script.of_kind("turn")[-1])
    assert any(SUMMARY in t for t in turn) and "Answer 7." in turn and "Which code was it again?" in turn
    assert "What is my locker code?" not in turn and "Answer 3." not in turn
    assert script.of_kind("summary") and len(script.of_kind("summary")) == 1  # not compressed again
    shown = await rt.sessions.get(sid)
    assert [m.content for m in shown.messages[-2:]] == ["Which code was it again?", "It is 4711."]  # type: ignore[union-attr]
    await rt.aclose()


async def test_a_branch_inside_the_summarised_part_rebuilds_the_context_from_the_path(
    tmp_path: Path,
) -> None:
    rt, _, script, sid, old = await seeded(tmp_path, turns=8, tokens=15000)
    script.summary(SUMMARY)
    script.turn(Reply(text="Your locker code is 4711."))
    await collect(rt.agent.run_stream(sid, "What is my locker code?"))
    asked = next(m for m in (await rt.sessions.get(sid)).messages if m.content == "What is my locker code?")  # type: ignore[union-attr]

    third = next(i for i, m in enumerate(old) if m.content == "Question number 3: what about topic 3?")
    await branches.branch_at(rt.sessions, sid, old[third - 1].id)  # edit question 3
    script.turn(Reply(text="Topic three, edited."))
    await collect(rt.agent.run_stream(sid, "Question 3, edited"))
    turn = sent(script.of_kind("turn")[-1])
    # the summary covered question 3 and later: the path itself is the context again
    assert not any(SUMMARY in t for t in turn)
    assert "My locker code is 4711." in turn and "Answer 2." in turn and "Question 3, edited" in turn
    assert "Answer 3." not in turn and "What is my locker code?" not in turn
    stored = await rt.sessions.get(sid)
    assert stored is not None and stored.context_token_count < 15000
    assert [m.content for m in stored.context[-2:]] == ["Question 3, edited", "Topic three, edited."]

    # switching back: the old branch's whole path is the context (compressed again when needed)
    leaf = await branches.switch(rt.sessions, sid, asked.id)
    back = await rt.sessions.get(sid)
    assert back is not None and back.messages[-1].id == leaf
    assert back.messages[-1].content == "Your locker code is 4711."
    assert [m.content for m in back.context] == [m.content for m in back.messages if not m.is_compression]
    await rt.aclose()


def test_a_stopped_questions_marker_goes_when_it_is_answered_again() -> None:
    q1, a1, q2 = Message.user("q1"), Message.assistant("a1"), Message.user("q2")
    marker = unanswered_marker(q2)
    old_context = [q1, a1, q2, marker]
    path = [q1.id, a1.id, q2.id]
    # regenerate q2: a new answer comes next, the marker goes
    assert branch_context(old_context, path, [q1, a1, q2], answering=True) == [q1, a1, q2]
    # a new question after q2 (the old branch): the marker stays between them
    q3 = Message.user("q3")
    assert branch_context(old_context, path, [q1, a1, q2, q3]) == [q1, a1, q2, marker, q3]
    # an edit of q2 (branch at a1): nothing of q2's stays
    assert branch_context(old_context, path, [q1, a1]) == [q1, a1]


def test_long_tool_results_are_clipped_as_a_turn_clips_them() -> None:
    q, tool = Message.user("q"), Message.tool("x" * 500, tool_call_id="c", name="web_search")
    (q_ctx, tool_ctx) = branch_context([], [], [q, tool], tool_chars=100)
    assert q_ctx is q and len(tool_ctx.content or "") < 300 and tool_ctx.id == tool.id
    assert tool_ctx.metadata.truncated_from == 500 and tool_ctx.metadata.recall_key


async def test_the_context_size_after_a_switch_counts_what_a_turn_counts(tmp_path: Path) -> None:
    """A turn counts its whole prompt (system message and tools too); switching branches keeps that
    part of the count, so the gauge does not drop to the messages' size alone."""
    rt, _, script, sid, old = await seeded(tmp_path, turns=2, tokens=100)
    script.turn(Reply(text="First answer."))
    await collect(rt.agent.run_stream(sid, "A question"))
    first = await rt.sessions.get(sid)
    assert first is not None
    measured, leaf = first.context_token_count, first.messages[-1].id
    await branches.branch_at(rt.sessions, sid, old[-1].id)
    script.turn(Reply(text="Second answer."))
    await collect(rt.agent.run_stream(sid, "Another question"))
    await branches.switch(rt.sessions, sid, leaf)
    back = await rt.sessions.get(sid)
    assert back is not None and back.messages[-1].id == leaf
    assert abs(back.context_token_count - measured) <= measured * 0.02, (back.context_token_count, measured)
    await rt.aclose()
