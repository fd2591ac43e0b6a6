"""Every model call bounded and stoppable; status while nothing streams; honest token accounting."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from navi.agent.budget import schema_tokens
from navi.agent.context import UNANSWERED, SystemParts, build_context
from navi.agent.events import AgentEvent, ErrorEvent, Notice, Status, StreamEnd, StreamStopped, ToolEvent
from navi.agent.turns import RunControl
from navi.compose import Runtime, build_runtime
from navi.config import load_settings
from navi.llm.base import ModelInfo
from navi.llm.errors import ContextOverflow, StreamInterrupted
from navi.llm.ollama_backend import OllamaBackend
from navi.llm.registry import BackendRegistry
from navi.llm.text_tools import tool_instructions
from navi.llm.tokens import estimate_message_tokens, estimate_tokens
from navi.runs import RunManager
from navi.sessions.memory_store import InMemorySessionStore
from navi.testing.agent_script import AgentScript
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from navi.testing.scripted import ScriptedBackend
from tests.agent_helpers import MODEL, collect, scripted_runtime, types


def phases(events: list[AgentEvent]) -> list[str]:
    return [e.phase for e in events if isinstance(e, Status)]


async def http_runtime(tmp_path: Path, server: FakeModelServer, **settings: Any) -> Runtime:
    registry = BackendRegistry()
    registry.register_instance("ollama", OllamaBackend(server.url), default_model=MODEL)
    base: dict[str, Any] = {"db_path": str(tmp_path / "n.db"), "tools_dir": str(tmp_path / "tools")}
    return await build_runtime(
        load_settings(**{**base, **settings}), backends=registry, sessions=InMemorySessionStore()
    )


async def stop_when(stream: Any, stop: asyncio.Event, predicate: Any) -> tuple[list[AgentEvent], float]:
    """Collect a run's events, setting `stop` at the first event matching; return the stop latency."""
    events: list[AgentEvent] = []
    stopped_at = 0.0
    async for event in stream:
        events.append(event)
        if not stop.is_set() and predicate(event):
            stop.set()
            stopped_at = time.perf_counter()
    return events, time.perf_counter() - stopped_at


async def test_status_events_tell_what_navi_is_doing(tmp_path: Path) -> None:
    rt, _, script = await scripted_runtime(tmp_path)
    script.plan("DIRECT", "DIRECT")
    script.turn("Hello.", "Again.")
    session = await rt.sessions.create("secretary")
    first = await collect(rt.agent.run_stream(session.id, "Hi"))
    assert phases(first) == ["preparing", "planning", "waiting"]
    waiting = next(e for e in first if isinstance(e, Status) and e.phase == "waiting")
    assert "tokens" in waiting.detail
    assert first.index(waiting) < next(i for i, e in enumerate(first) if e.type == "stream_delta")
    second = await collect(rt.agent.run_stream(session.id, "Hi again"))
    assert phases(second) == ["planning", "waiting"]  # the model is known now: no lookup
    await rt.aclose()


async def test_stop_during_planning_is_immediate_and_closes_the_request(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    script = AgentScript()
    fake_server.script = script
    script.plan(Reply(text="DIRECT", first_delay=30))
    rt = await http_runtime(tmp_path, fake_server)
    session = await rt.sessions.create("secretary")
    stop = asyncio.Event()
    events, latency = await stop_when(
        rt.agent.run_stream(session.id, "Hello", control=RunControl(stop_event=stop)),
        stop,
        lambda e: isinstance(e, Status) and e.phase == "planning",
    )
    assert latency < 1.0
    assert isinstance(events[-1], StreamStopped)
    assert script.of_kind("turn") == []  # no answer call after the stop
    stored = await rt.sessions.get(session.id)
    assert stored is not None and [m.content for m in stored.messages] == ["Hello"]
    await rt.aclose()


class SlowInfoBackend(ScriptedBackend):
    """A server that accepts the model-information request and never answers it."""

    async def model_info(self, model: str) -> ModelInfo:
        await asyncio.sleep(60)
        raise AssertionError("unreachable")


async def test_stop_during_the_model_lookup(tmp_path: Path) -> None:
    rt, _, _ = await scripted_runtime(tmp_path)
    rt.backends.register_instance("ollama", SlowInfoBackend(AgentScript()), default_model=MODEL)
    session = await rt.sessions.create("secretary")
    stop = asyncio.Event()
    events, latency = await stop_when(
        rt.agent.run_stream(session.id, "Hello", control=RunControl(stop_event=stop)),
        stop,
        lambda e: isinstance(e, Status) and e.phase == "preparing",
    )
    assert latency < 1.0 and types(events) == ["stream_stopped"]
    stored = await rt.sessions.get(session.id)
    assert stored is not None and [m.content for m in stored.messages] == ["Hello"]  # nothing lost
    await rt.aclose()


async def test_a_server_that_never_answers_fails_after_the_first_token_timeout(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    script = AgentScript()
    fake_server.script = script
    script.turn(Reply(text="late", first_delay=20))
    rt = await http_runtime(
        tmp_path, fake_server, llm_first_token_timeout_seconds=0.5, planning_enabled=False
    )
    session = await rt.sessions.create("secretary")
    started = time.perf_counter()
    events = await collect(rt.agent.run_stream(session.id, "Hello"))
    elapsed = time.perf_counter() - started
    assert isinstance(events[-1], ErrorEvent) and "no output within 0.5 s" in events[-1].message
    assert elapsed < 3  # one timeout, not three
    await rt.aclose()


async def test_a_stream_that_goes_quiet_fails_after_the_idle_timeout(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    script = AgentScript()
    fake_server.script = script
    script.turn(Reply(text="one two three four", chunk_chars=4, delay=3))
    rt = await http_runtime(tmp_path, fake_server, llm_idle_timeout_seconds=0.5, planning_enabled=False)
    session = await rt.sessions.create("secretary")
    started = time.perf_counter()
    events = await collect(rt.agent.run_stream(session.id, "Hello"))
    assert isinstance(events[-1], ErrorEvent) and "stopped sending for 0.5 s" in events[-1].message
    assert time.perf_counter() - started < 8
    await rt.aclose()


async def test_every_call_is_capped_by_its_setting(tmp_path: Path, fake_server: FakeModelServer) -> None:
    script = AgentScript()
    fake_server.script = script
    script.plan("DIRECT")
    script.turn("An answer.")
    rt = await http_runtime(
        tmp_path, fake_server, llm_max_tokens_answer=300, llm_max_tokens_planning=40, llm_max_tokens_naming=9
    )
    session = await rt.sessions.create("secretary")
    await collect(rt.agent.run_stream(session.id, "Hello"))
    await rt.agent.settle()  # naming runs in the background
    caps = {
        kind: [r.options.get("num_predict") for r in script.of_kind(kind)] for kind in ("planning", "turn")
    }
    assert caps == {"planning": [40], "turn": [300]}
    assert [r.options.get("num_predict") for r in script.of_kind("naming")] == [9]
    await rt.aclose()


async def test_a_cut_off_answer_says_so(tmp_path: Path) -> None:
    rt, _, script = await scripted_runtime(tmp_path, planning_enabled=False)
    script.turn(Reply(text="A very long answer that", finish_reason="length"))
    session = await rt.sessions.create("secretary")
    events = await collect(rt.agent.run_stream(session.id, "Write a lot"))
    end = events[-1]
    assert isinstance(end, StreamEnd) and end.finish_reason == "length"
    stored = await rt.sessions.get(session.id)
    assert stored is not None and stored.messages[-1].metadata.get("finish_reason") == "length"
    await rt.aclose()


async def test_the_answer_cap_never_exceeds_the_room_left_in_the_window(tmp_path: Path) -> None:
    rt, backend, script = await scripted_runtime(tmp_path, planning_enabled=False, context_length=16384)
    script.turn("Fine.")
    session = await rt.sessions.create("secretary")
    await collect(rt.agent.run_stream(session.id, "Hello"))
    sent = backend.options[-1]
    assert sent.max_tokens is not None and sent.max_tokens <= 2048
    await rt.aclose()


async def test_token_count_follows_a_broken_answer(tmp_path: Path) -> None:
    rt, _, script = await scripted_runtime(tmp_path, sql=True, planning_enabled=False)
    script.turn(Reply(text="Fine.", prompt_tokens=900, completion_tokens=5))
    broken = "loop " * 2000
    script.turn(Reply(text=broken, chunk_chars=500, error_after=20, exception=StreamInterrupted("dropped")))
    session = await rt.sessions.create("secretary")
    await collect(rt.agent.run_stream(session.id, "Hello"))
    before = (await rt.sessions.get(session.id, display=False)).context_token_count  # type: ignore[union-attr]
    events = await collect(rt.agent.run_stream(session.id, "Tell me more"))
    assert isinstance(events[-1], ErrorEvent)
    after = (await rt.sessions.get(session.id, display=False)).context_token_count  # type: ignore[union-attr]
    assert before == 905 and after > before + 2000  # the broken answer is counted
    await rt.aclose()


async def test_an_overflow_reported_by_the_server_makes_the_next_turn_compress(tmp_path: Path) -> None:
    rt, _, script = await scripted_runtime(tmp_path, planning_enabled=False, context_keep_recent=1)
    script.turn("First answer: " + "the details of the first answer, " * 30)
    script.turn(Reply(exception=ContextOverflow("the prompt is too long for the context window")))
    script.summary("## Current goal\n- The user greeted the assistant and asked for more.")
    script.turn("Better now.")
    session = await rt.sessions.create("secretary")
    await collect(rt.agent.run_stream(session.id, "Hello, tell me everything about the first topic " * 5))
    failed = await collect(rt.agent.run_stream(session.id, "More"))
    assert isinstance(failed[-1], ErrorEvent)
    events = await collect(rt.agent.run_stream(session.id, "Try again"))
    assert "context_compressed" in types(events) and isinstance(events[-1], StreamEnd)
    await rt.aclose()


def fixed_estimate(rt: Runtime) -> tuple[int, int]:
    """Navi's estimate of the secretary's fixed prompt: (without tools, with every tool)."""
    profile = rt.profiles.get("secretary")
    system = build_context(SystemParts(rt.agent.config.persona, profile), [])[0]
    bare = estimate_message_tokens(system)
    return bare, bare + sum(schema_tokens(s) for s in rt.agent.tool_specs(profile))


async def test_tools_are_trimmed_before_a_message_is_refused(tmp_path: Path) -> None:
    # Every schema sent (no disclosure), so there is plenty to trim.
    rt, _, script = await scripted_runtime(tmp_path, planning_enabled=False, navi_tool_disclosure=False)
    bare, full = fixed_estimate(rt)
    window = (bare + full) // 2 + 600  # room for the instructions and some tools, not all of them
    rt.backends.register_instance(
        "ollama", ScriptedBackend(script, context_length=window), default_model=MODEL
    )
    rt.agent.config.num_ctx = window
    specs = rt.agent.tool_specs(rt.profiles.get("secretary"))
    everything = {t.name for t in specs}
    costliest = max(specs, key=schema_tokens).name  # the first to be left out
    # The model calls the left-out tool anyway (it saw it earlier, or guesses): it is not run.
    script.turn(Reply(tool_calls=[ScriptedCall(costliest, {})]), "Done.")
    session = await rt.sessions.create("secretary")
    events = await collect(rt.agent.run_stream(session.id, "Hello"))
    assert isinstance(events[-1], StreamEnd), events[-1]
    offered = set(script.of_kind("turn")[0].tools)
    assert offered and offered < everything  # some tools left out, the message not refused
    assert costliest not in offered
    assert "compressing" not in phases(events)  # nothing to summarise in a first message
    notice = next(e for e in events if isinstance(e, Notice))
    assert all(name in notice.message for name in everything - offered)
    refused = next(e for e in events if isinstance(e, ToolEvent))
    assert not refused.success and f"the tool '{costliest}' is not available right now" in refused.result
    await rt.aclose()


async def test_a_window_too_small_for_navi_names_the_cause_and_the_minimum(tmp_path: Path) -> None:
    rt, backend, script = await scripted_runtime(tmp_path, planning_enabled=False, context_length=600)
    session = await rt.sessions.create("secretary")
    events = await collect(rt.agent.run_stream(session.id, "Hello"))
    error = events[-1]
    assert isinstance(error, ErrorEvent)
    assert "too small for Navi" in error.message and "at least" in error.message
    minimum = int(error.message.split("at least ")[1].split(" ")[0])
    assert minimum > 600
    assert backend.requests == []  # refused before any model call
    await rt.aclose()


async def test_the_fixed_prompt_is_calibrated_from_the_servers_count(tmp_path: Path) -> None:
    rt, backend, script = await scripted_runtime(
        tmp_path, planning_enabled=False, context_length=4096, navi_tool_disclosure=False
    )
    everything = rt.agent.tool_specs(rt.profiles.get("secretary"))
    # The server counts the whole prompt at 1,000 tokens: far less than Navi's cautious estimate.
    script.turn(Reply(text="One.", prompt_tokens=1000, completion_tokens=3))
    script.turn(Reply(text="Two.", prompt_tokens=1010, completion_tokens=3))
    session = await rt.sessions.create("secretary")
    await collect(rt.agent.run_stream(session.id, "Hello"))
    await collect(rt.agent.run_stream(session.id, "Hello again"))
    second = script.of_kind("turn")[1]
    assert len(second.tools) == len(everything)  # after one real count, every tool fits
    await rt.aclose()


async def test_post_turn_work_never_blocks_the_next_message(tmp_path: Path) -> None:
    rt, _, script = await scripted_runtime(
        tmp_path, planning_enabled=False, context_keep_recent=1, context_length=10_000
    )
    never = asyncio.Event()
    script.turn(Reply(text="First. " * 40, prompt_tokens=100, completion_tokens=5))
    # The second answer fills the window: the post-turn summary starts, and hangs.
    script.turn(Reply(text="Second.", prompt_tokens=9000, completion_tokens=5))
    script.summary(Reply(text="## Current goal\n- The user counts: one, two.", wait_for=never))
    script.turn("Third.")
    session = await rt.sessions.create("secretary")
    await collect(rt.agent.run_stream(session.id, "One " * 40))
    runs = RunManager(rt.agent)
    first = await runs.start(session.id, "Two")
    # Wait for the summary request itself, not only the answer: a message sent between the two
    # stops the run before its summary begins (the next test), and the next turn, which then
    # summarises before it answers, would be the one to get the reply that hangs.
    for _ in range(3000):  # at most 30 s on a machine busy with the rest of a parallel suite
        if script.of_kind("summary"):
            break
        await asyncio.sleep(0.01)
    assert first.answered and not first.finished.is_set()  # answered, summarising
    assert len(script.of_kind("summary")) == 1  # the first run's, under way (and hanging)
    second = await runs.start(session.id, "Three")  # not refused
    await asyncio.wait_for(second.finished.wait(), 30)
    assert first.finished.is_set()
    assert isinstance(second.result, StreamEnd) and second.result.content == "Third."
    assert not any(f["type"] == "context_compressed" for f in first.frames)  # the summary was abandoned
    await rt.aclose()


async def test_a_message_right_after_the_answer_stops_post_turn_work_before_it_begins(
    tmp_path: Path,
) -> None:
    rt, _, script = await scripted_runtime(
        tmp_path, planning_enabled=False, context_keep_recent=1, context_length=10_000
    )
    script.turn(Reply(text="First. " * 40, prompt_tokens=100, completion_tokens=5))
    # The second answer fills the window: a summary is due after it.
    script.turn(Reply(text="Second.", prompt_tokens=9000, completion_tokens=5))
    script.turn("Third.")
    session = await rt.sessions.create("secretary")
    await collect(rt.agent.run_stream(session.id, "One " * 40))
    runs = RunManager(rt.agent)
    first = await runs.start(session.id, "Two")
    # The next message arrives as soon as the answer is out, before the post-turn summary begins
    # (on a busy machine, a user or a test may well be that quick).
    for _ in range(100_000):
        if first.answered:
            break
        await asyncio.sleep(0)
    assert first.answered and not first.finished.is_set() and script.of_kind("summary") == []
    second = await runs.start(session.id, "Three")
    await asyncio.wait_for(second.finished.wait(), 30)
    assert first.finished.is_set()
    # The answered run never began its summary; the next turn summarised before answering.
    assert not any(f["type"] == "context_compressed" for f in first.frames)
    assert [f["type"] for f in first.frames][-1] == "stream_end"
    assert any(f["type"] == "context_compressed" for f in second.frames)
    assert len(script.of_kind("summary")) == 1
    assert isinstance(second.result, StreamEnd) and second.result.content == "Third."
    await rt.aclose()


async def test_a_session_whose_first_turn_failed_is_named_later(tmp_path: Path) -> None:
    rt, _, script = await scripted_runtime(tmp_path, planning_enabled=False)
    script.turn(Reply(exception=StreamInterrupted("the server went away")))
    script.turn("Paris is the capital of France.")
    script.title = "Capital of France"
    session = await rt.sessions.create("secretary")
    await collect(rt.agent.run_stream(session.id, "What is the capital of France?"))
    await rt.agent.settle()
    assert (await rt.sessions.get(session.id)).name is None  # type: ignore[union-attr]
    await collect(rt.agent.run_stream(session.id, "What is the capital of France?"))
    await rt.agent.settle()
    assert (await rt.sessions.get(session.id)).name == "Capital of France"  # type: ignore[union-attr]
    await rt.aclose()


async def test_stop_during_a_summary_leaves_the_context_as_it_was(tmp_path: Path) -> None:
    rt, _, script = await scripted_runtime(
        tmp_path, planning_enabled=False, context_keep_recent=1, context_length=10_000
    )
    never = asyncio.Event()
    script.turn(Reply(text="First. " * 40, prompt_tokens=9000, completion_tokens=5))
    hanging = Reply(text="## Current goal\n- The user counts.", wait_for=never)
    script.summary(hanging, hanging)
    session = await rt.sessions.create("secretary")
    # After the answer the post-turn summary starts and hangs: stop abandons it.
    stop = asyncio.Event()
    first, latency = await stop_when(
        rt.agent.run_stream(session.id, "One " * 40, control=RunControl(stop_event=stop)),
        stop,
        lambda e: isinstance(e, StreamEnd),
    )
    assert latency < 1.0 and isinstance(first[-1], StreamEnd)
    # The next turn summarises first; stop it there too.
    stop = asyncio.Event()
    events, latency = await stop_when(
        rt.agent.run_stream(session.id, "Two", control=RunControl(stop_event=stop)),
        stop,
        lambda e: isinstance(e, Status) and e.phase == "compressing",
    )
    assert latency < 1.0 and isinstance(events[-1], StreamStopped)
    stored = await rt.sessions.get(session.id, display=False)
    assert stored is not None and not any(m.is_summary for m in stored.context)
    # The question stays, followed by the context-only marker that says it was stopped unanswered.
    question, marker = stored.context[-2:]
    assert question.content == "Two" and marker.metadata.get(UNANSWERED) == question.id
    # Stopped at "compressing", the second run sends no summary request at all; the first, stopped
    # after its answer, never began one.
    assert script.of_kind("summary") == []
    await rt.aclose()


class NoToolsBackend(ScriptedBackend):
    """A server that says its model has no native tool calling (llama.cpp with a plain template)."""

    async def model_info(self, model: str) -> ModelInfo:
        return ModelInfo(
            name=model, context_length=self.context_length, capabilities=("completion",), probed=True
        )


async def test_text_tools_are_budgeted_at_their_text_cost(tmp_path: Path) -> None:
    rt, _, script = await scripted_runtime(tmp_path, planning_enabled=False)
    bare, full = fixed_estimate(rt)
    listing = estimate_tokens(tool_instructions(rt.agent.tool_specs(rt.profiles.get("secretary"))))
    window = bare + listing + 700  # room for the text listing and the reply
    assert full + window // 8 > window  # but not for every schema
    rt.backends.register_instance(
        "ollama", NoToolsBackend(script, context_length=window), default_model=MODEL
    )
    rt.agent.config.num_ctx = window
    script.turn("Done.")
    session = await rt.sessions.create("secretary")
    events = await collect(rt.agent.run_stream(session.id, "Hello"))
    assert isinstance(events[-1], StreamEnd) and not any(isinstance(e, Notice) for e in events)
    request = script.of_kind("turn")[0]
    assert request.tools == []  # no schemas: the tools are listed in the system message
    for spec in rt.agent.tool_specs(rt.profiles.get("secretary")):
        assert spec.name in request.system_text
    await rt.aclose()


async def test_a_model_that_cannot_summarise_gets_a_condensed_context_not_a_refusal(tmp_path: Path) -> None:
    window = 9_000
    rt, _, script = await scripted_runtime(
        tmp_path, planning_enabled=False, context_keep_recent=1, context_length=window
    )
    rt.agent.config.num_ctx = window
    # Each answer is long, and each "summary" copies the conversation: it is never accepted.
    copy = Reply(text="User: my locker code is 4711\nAssistant: " + "noted " * 40)
    script.summary(copy, copy)
    for n in range(4):
        script.turn(
            Reply(text=f"Answer {n}. " + "detail " * 60, prompt_tokens=2600 * (n + 1), completion_tokens=90)
        )
    session = await rt.sessions.create("secretary")
    all_events: list[AgentEvent] = []
    for n, text in enumerate(["My locker code is 4711.", "Second question", "Third question", "Fourth"]):
        events = await collect(rt.agent.run_stream(session.id, text + " " + "words " * 50))
        assert any(isinstance(e, StreamEnd) for e in events), (n, events[-1])  # never refused
        assert not any(isinstance(e, ErrorEvent) for e in events)
        all_events.extend(events)
    notices = [e.message for e in all_events if isinstance(e, Notice)]
    assert any("could not be summarised" in m for m in notices)
    assert any("short form" in m for m in notices)
    assert len(script.of_kind("summary")) == 2  # tried once and retried; then Navi condenses itself
    stored = await rt.sessions.get(session.id)
    assert stored is not None
    summary = next(m for m in stored.context if m.is_summary)
    assert summary.metadata.get("condensed") and "4711" in (summary.content or "")
    assert len(stored.messages) > len(stored.context)  # the display keeps every message
    await rt.aclose()


async def test_every_ollama_call_carries_the_same_window(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    """Ollama reloads a model whenever num_ctx changes between calls: naming, summaries and memory
    must send the window the answers use."""
    script = AgentScript()
    fake_server.script = script
    script.plan("DIRECT")
    script.turn("An answer.")
    settings = load_settings(
        db_path=str(tmp_path / "n.db"),
        tools_dir=str(tmp_path / "tools"),
        ollama_host=fake_server.url,
        ollama_num_ctx=8192,
    )
    rt = await build_runtime(settings, sessions=InMemorySessionStore())
    session = await rt.sessions.create("secretary")
    await collect(rt.agent.run_stream(session.id, "Hello"))
    await rt.agent.settle()
    windows = {
        kind: {r.options.get("num_ctx") for r in script.of_kind(kind)}
        for kind in ("planning", "turn", "naming")
    }
    assert windows == {"planning": {8192}, "turn": {8192}, "naming": {8192}}
    await rt.aclose()


async def test_a_run_that_crashes_has_its_error_as_its_result(tmp_path: Path) -> None:
    """A REST caller waits for `run.result`: a crash must be the error, not an empty "stopped"."""
    rt, _, script = await scripted_runtime(tmp_path, planning_enabled=False)
    script.turn(Reply(exception=RuntimeError("the backend broke in an unforeseen way")))  # type: ignore[arg-type]
    session = await rt.sessions.create("secretary")
    runs = RunManager(rt.agent)
    run = await runs.start(session.id, "hello")
    await asyncio.wait_for(run.settled.wait(), 5)
    assert isinstance(run.result, ErrorEvent)
    assert run.result.code == "internal" and "unforeseen" in run.result.message
    assert run.events[-1] is run.result and run.frames[-1]["type"] == "error"
    await rt.aclose()
