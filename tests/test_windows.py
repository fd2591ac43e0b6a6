from __future__ import annotations

from datetime import timedelta

import pytest

from navi.llm.messages import Message, ToolCall, utcnow
from navi.sessions.windows import window

T0 = utcnow() - timedelta(days=1)


def history() -> list[Message]:
    msgs = []
    for i in range(10):
        msgs.append(Message.user(f"question {i} " + "x" * 40, created_at=T0 + timedelta(minutes=2 * i)))
        msgs.append(
            Message.assistant(f"answer {i} " + "y" * 40, created_at=T0 + timedelta(minutes=2 * i + 1))
        )
    return msgs


def test_last_n() -> None:
    got = window(history(), last_n=3)
    assert [m.content.split()[0] + m.content.split()[1] for m in got] == ["answer8", "question9", "answer9"]
    assert window(history(), last_n=0) == []
    with pytest.raises(ValueError):
        window(history(), last_n=-1)


def test_time_range() -> None:
    got = window(history(), since=T0 + timedelta(minutes=4), until=T0 + timedelta(minutes=7))
    assert [m.content.split()[1] for m in got] == ["2", "2", "3", "3"]


def test_token_budget_keeps_the_newest_and_prepends_the_summary() -> None:
    msgs = history()
    cost = lambda m: 10  # noqa: E731
    got = window(msgs, token_budget=45, count_tokens=cost)
    assert [m.content.split()[1] for m in got] == ["8", "8", "9", "9"]
    summary = Message.user("Summary of questions 0-7", is_summary=True)
    with_summary = window(msgs, token_budget=45, summary=summary, count_tokens=cost)
    assert with_summary[0] is summary
    assert [m.content.split()[1] for m in with_summary[1:]] == ["8", "9", "9"]
    assert sum(cost(m) for m in with_summary) <= 45
    everything = window(msgs, token_budget=10_000, summary=summary, count_tokens=cost)
    assert everything == msgs  # nothing was cut, so no summary


def test_window_never_starts_with_an_orphan_tool_result() -> None:
    call = ToolCall(name="todo")
    msgs = [
        Message.user("do it"),
        Message.assistant("", tool_calls=[call]),
        Message.tool("[]", tool_call_id=call.id, name="todo"),
        Message.assistant("done"),
    ]
    assert [m.role for m in window(msgs, last_n=2)] == ["assistant"]
