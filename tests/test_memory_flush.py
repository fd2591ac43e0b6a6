"""The memory flush: turns a compression takes out of the context are read for facts first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from navi.llm.errors import BackendUnreachable
from navi.llm.messages import Message
from navi.testing.script import Reply
from tests.agent_helpers import collect, scripted_runtime
from tests.test_memory_extraction import backdate

SAID_EARLY = "By the way, I moved to Porto last spring."
# A summary that leaves the move out, as a small model's may.
POOR_SUMMARY = "- Questions about numbered topics were answered."


async def long_session(tmp_path: Path) -> tuple[Any, Any, str]:
    rt, _, script = await scripted_runtime(tmp_path, sql=True, ollama_num_ctx=16384, context_keep_recent=2)
    session = await rt.sessions.create("secretary")
    old: list[Message] = []
    for i in range(8):
        old.append(Message.user(SAID_EARLY if i == 0 else f"Question number {i}: what about topic {i}?"))
        old.append(Message.assistant(f"Answer {i}. Lisbon is lovely too." if i == 0 else f"Answer {i}."))
    await rt.sessions.append(session.id, display=old, context=old, context_token_count=15000)
    return rt, script, session.id


async def test_a_fact_the_summary_dropped_is_kept(tmp_path: Path) -> None:
    rt, script, sid = await long_session(tmp_path)
    script.summary(POOR_SUMMARY)
    # "Lisbon" is only in the assistant's answer: not the person's words, so not stored.
    script.extract("location: home_city = Porto\nlocation: favourite_city = Lisbon")
    script.turn(Reply(text="Noted."))
    events = await collect(rt.agent.run_stream(sid, "What is topic 9 about?"))
    assert any(e.type == "context_compressed" for e in events)
    await rt.agent.settle()
    stored = await rt.sessions.get(sid)
    assert stored is not None and "Porto" not in (stored.context[0].content or "")  # the summary lost it
    (fact,) = await rt.memory.get_all_facts()
    assert (fact.category, fact.key, fact.value, fact.session_id) == ("location", "home_city", "Porto", sid)
    # Only the dropped turns were read, and only what the person wrote in them.
    (request,) = script.of_kind("extract")
    read = request.last_user_text
    assert SAID_EARLY in read and "Question number 5" in read
    assert "Question number 7" not in read and "What is topic 9" not in read  # still in the context
    assert "Answer 0" not in read
    assert "Porto" in (await rt.memory.get_summary() or "")
    # The idle pass still reads the session later: the flush does not mark it read.
    assert await rt.memory.get_extracted_at(sid) is None
    # … but only what the flush did not read: no message is read twice.
    await backdate(rt, sid)
    assert (await rt.extractor.run_pending()).sessions == 1
    later = script.of_kind("extract")[-1].last_user_text
    assert "Question number 7" in later and "What is topic 9" in later
    assert SAID_EARLY not in later and "Question number 5" not in later
    await rt.aclose()


async def test_a_failing_flush_leaves_the_turn_alone(tmp_path: Path) -> None:
    rt, script, sid = await long_session(tmp_path)
    script.summary(POOR_SUMMARY)
    script.extract(Reply(exception=BackendUnreachable("cannot reach Ollama")))
    script.turn(Reply(text="Noted."))
    events = await collect(rt.agent.run_stream(sid, "What is topic 9 about?"))
    await rt.agent.settle()
    assert events[-1].type == "stream_end" and any(e.type == "context_compressed" for e in events)
    assert await rt.memory.get_all_facts() == []
    await rt.aclose()
