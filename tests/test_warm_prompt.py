"""After a compression rewrote the context past an answer, the model server reads the next answer's
prompt while the user reads (`Loop.warm`): the next turn then reads only its new message from the
server's cache. Only on servers that keep a prompt cached; a new message abandons it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from navi.compose.runtime import Runtime
from navi.protocol import StreamEnd
from navi.runs.manager import RunManager
from navi.testing.agent_script import AgentScript, kind_of
from navi.testing.script import Reply, ScriptedCall
from navi.testing.scripted import ScriptedBackend
from tests.agent_helpers import EARLY_COMPRESSION, collect, scripted_runtime

SUMMARY = "- The user is planning a garden with raspberries and a plum tree."
ANSWER = "That sounds lovely. Raspberries like sun and a little shelter from the wind. " * 6


async def compressing(tmp_path: Path, server: str) -> tuple[Runtime, ScriptedBackend, AgentScript, str]:
    rt, backend, script = await scripted_runtime(tmp_path, **EARLY_COMPRESSION)
    backend.server = server
    script.responder = lambda request: Reply(
        text={"summary": SUMMARY, "naming": "Garden"}.get(kind_of(request), ANSWER)
    )
    sid = (await rt.sessions.create("secretary")).id
    await collect(rt.agent.run_stream(sid, "I want raspberry bushes and a plum tree in my garden."))
    events = await collect(rt.agent.run_stream(sid, "Which side of the house should they go on?"))
    kinds = [type(e).__name__ for e in events]
    assert "ContextCompressed" in kinds and kinds.index("ContextCompressed") > kinds.index("StreamEnd")
    return rt, backend, script, sid


async def test_the_next_answers_prompt_is_read_after_a_compression(tmp_path: Path) -> None:
    rt, backend, script, sid = await compressing(tmp_path, "llama.cpp")
    calls = list(zip(backend.options, script.requests, strict=True))
    warm = [i for i, (o, _) in enumerate(calls) if o.kind == "warm"]
    assert len(warm) == 1
    options, request = calls[warm[0]]
    assert options.max_tokens == 1 and not options.side  # the conversation's slot, not a side one
    # Nothing of it is kept: the stored context is the summary and the turn just answered.
    stored = await rt.sessions.get(sid)
    assert stored is not None and stored.context[0].is_summary
    assert [m.role for m in stored.context[1:]] == ["user", "assistant"]
    await collect(rt.agent.run_stream(sid, "And how far apart?"))
    calls = list(zip(backend.options, script.requests, strict=True))
    answer = next(r for o, r in calls[warm[0] + 1 :] if o.kind == "answer")
    # The next answer is the warmed prompt plus the new message: same messages, tools and options.
    sent = [(m.role, m.content) for m in answer.messages]
    assert [(m.role, m.content) for m in request.messages] == sent[:-1]
    assert sent[-1] == ("user", "And how far apart?")
    assert request.tools == answer.tools
    assert {k: v for k, v in request.options.items() if k != "max_tokens"} == {
        k: v for k, v in answer.options.items() if k != "max_tokens"
    }
    await rt.aclose()


async def test_a_server_without_a_prompt_cache_here_is_not_warmed(tmp_path: Path) -> None:
    rt, backend, _, _ = await compressing(tmp_path, "openai-compatible")  # perhaps a hosted API
    assert not [o for o in backend.options if o.kind == "warm"]
    await rt.aclose()


async def test_a_new_message_abandons_the_warm_read(tmp_path: Path) -> None:
    rt, backend, script = await scripted_runtime(
        tmp_path, planning_enabled=False, context_keep_recent=1, context_length=10_000
    )
    backend.server = "ollama"
    never = asyncio.Event()
    script.turn(Reply(text="First. " * 40, prompt_tokens=100, completion_tokens=5))
    script.turn(Reply(text="Second.", prompt_tokens=9000, completion_tokens=5))  # past the threshold
    script.summary("- The user counts: one, two.")
    script.turn(Reply(text="", wait_for=never))  # the warm read hangs
    script.turn("Third.")
    session = await rt.sessions.create("secretary")
    await collect(rt.agent.run_stream(session.id, "One " * 40))
    runs = RunManager(rt.agent)
    first = await runs.start(session.id, "Two")
    for _ in range(300):
        if any(o.kind == "warm" for o in backend.options):
            break
        await asyncio.sleep(0.01)
    assert any(o.kind == "warm" for o in backend.options) and not first.finished.is_set()
    assert any(f["type"] == "context_compressed" for f in first.frames)
    second = await runs.start(session.id, "Three")
    await asyncio.wait_for(second.finished.wait(), 5)
    assert first.finished.is_set() and backend.aborted_streams >= 1
    assert isinstance(second.result, StreamEnd) and second.result.content == "Third."
    await rt.aclose()


async def test_after_the_session_changed_memory_the_new_summary_is_read_ahead(tmp_path: Path) -> None:
    """`remember` rewrites the memory summary, which the session's next turn reads in its system
    message: the whole prompt after it is new. The read-ahead waits for the rewrite and sends the
    next turn's prompt, with the new summary, while the user reads."""
    rt, backend, script = await scripted_runtime(tmp_path, planning_enabled=False)
    backend.server = "llama.cpp"
    await rt.memory.set_summary("Lives in Oslo.")
    fact = {"category": "personal", "key": "home_city", "value": "Porto"}
    script.turn(Reply(tool_calls=[ScriptedCall("remember", fact)]), "Noted: you live in Porto now.")
    script.profile("Lives in Porto.")
    script.turn("", "You live in Porto.")  # the read-ahead (one token), then the next answer
    sid = (await rt.sessions.create("secretary")).id
    await collect(rt.agent.run_stream(sid, "Remember that I moved to Porto."))
    calls = list(zip(backend.options, script.requests, strict=True))
    warm = [r for o, r in calls if o.kind == "warm"]
    assert len(warm) == 1
    assert "Lives in Porto." in (warm[0].messages[0].content or "")
    await collect(rt.agent.run_stream(sid, "Where do I live?"))
    answer = script.of_kind("turn")[-1]
    assert "Lives in Porto." in (answer.messages[0].content or "")
    sent = [(m.role, m.content) for m in answer.messages]
    assert [(m.role, m.content) for m in warm[0].messages] == sent[:-1]
    assert answer.tools == warm[0].tools
    await rt.aclose()


async def test_a_turn_that_changed_nothing_is_not_read_ahead(tmp_path: Path) -> None:
    rt, backend, script = await scripted_runtime(tmp_path, planning_enabled=False)
    backend.server = "llama.cpp"
    script.turn("Hello.", "Hello again.")
    sid = (await rt.sessions.create("secretary")).id
    await collect(rt.agent.run_stream(sid, "Hi"))
    await collect(rt.agent.run_stream(sid, "Hi again"))
    assert [o.kind for o in backend.options if o.kind in ("answer", "warm")] == ["answer", "answer"]
    await rt.aclose()
