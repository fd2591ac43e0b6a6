"""Progressive disclosure: the likely tools go with schemas, the rest are listed one line each and
loaded on demand — by `load_tools`, by being called, or by a keyword in the user's message — and
stay loaded for the session, appended after the tools sent before (navi/agent/disclosure.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from navi.agent.disclosure import LOAD_TOOLS, disclose, purpose
from navi.agent.events import ContextCompressed, StreamEnd, ToolEvent
from navi.llm.messages import Message, ToolCall
from navi.testing.agent_script import kind_of
from navi.testing.script import Reply, ScriptedCall
from navi.tools.base import Tool, ToolResult
from navi.tools.registry import ToolView
from tests.agent_helpers import EARLY_COMPRESSION, collect, scripted_runtime


class GreetTool(Tool):
    name = "greet"
    description = "Say hello to someone by name. Used by these tests only."
    keywords = ("salute",)
    parameters = {"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]}

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        self.calls.append(params)
        return ToolResult.ok(f"Hello, {params['who']}!")


async def runtime(tmp_path: Path) -> Any:
    rt, backend, script = await scripted_runtime(tmp_path, planning_enabled=False)
    tool = GreetTool()
    rt.tools.register(tool)
    rt.agent.user_tools = lambda: ["greet"]  # a user tool enabled for every profile: listed, not core
    session = await rt.sessions.create("secretary")
    return rt, script, tool, session.id


async def test_a_listed_tool_is_loaded_then_called_and_stays_loaded(tmp_path: Path) -> None:
    rt, script, tool, sid = await runtime(tmp_path)
    script.turn(
        Reply(tool_calls=[ScriptedCall(LOAD_TOOLS, {"names": ["greet"]})]),
        Reply(tool_calls=[ScriptedCall("greet", {"who": "Ada"})]),
        "I greeted Ada.",
    )
    script.turn("Hi again.")
    events = await collect(rt.agent.run_stream(sid, "Say hello to Ada"))
    assert isinstance(events[-1], StreamEnd), events[-1]
    assert tool.calls == [{"who": "Ada"}]
    loaded = next(e for e in events if isinstance(e, ToolEvent))
    assert loaded.success and "Loaded: greet" in loaded.result
    first, second, third = script.of_kind("turn")
    assert "greet" not in first.tools and LOAD_TOOLS in first.tools
    assert "- greet: Say hello to someone by name." in first.messages[0].content
    assert second.tools == [*first.tools, "greet"]  # appended: the earlier tools keep their place
    assert third.tools == second.tools
    await collect(rt.agent.run_stream(sid, "And now?"))
    assert script.of_kind("turn")[3].tools == second.tools  # loaded for the rest of the session
    assert script.of_kind("turn")[3].messages[0].content == first.messages[0].content  # listing unchanged
    await rt.aclose()


async def test_a_listed_tool_called_by_name_gets_its_schema_or_runs(tmp_path: Path) -> None:
    rt, script, tool, sid = await runtime(tmp_path)
    script.turn(
        Reply(tool_calls=[ScriptedCall("greet", {"name": "Ada"})]),  # guessed wrong: not its schema
        Reply(tool_calls=[ScriptedCall("greet", {"who": "Ada"})]),
        "Done.",
    )
    events = await collect(rt.agent.run_stream(sid, "Hello to Ada please"))
    schema, ran = [e for e in events if isinstance(e, ToolEvent)]
    assert schema.success and '"who"' in schema.result and "Call greet again" in schema.result
    assert ran.success and ran.result == "Hello, Ada!"
    assert tool.calls == [{"who": "Ada"}]  # never run with the guessed arguments
    assert "greet" in script.of_kind("turn")[1].tools
    await rt.aclose()


async def test_load_tools_with_an_unknown_name_says_what_can_be_loaded(tmp_path: Path) -> None:
    rt, script, tool, sid = await runtime(tmp_path)
    script.turn(Reply(tool_calls=[ScriptedCall(LOAD_TOOLS, {"names": ["teleport"]})]), "No such tool.")
    events = await collect(rt.agent.run_stream(sid, "Hi"))
    result = next(e for e in events if isinstance(e, ToolEvent))
    assert not result.success and "teleport" in result.result and "greet" in result.result
    assert "greet" not in script.of_kind("turn")[1].tools
    await rt.aclose()


async def test_a_keyword_in_the_first_message_sends_the_tool_whole(tmp_path: Path) -> None:
    """The first request's keywords disclose a tool; a later request's do not, because the tools
    are rendered before the conversation and growing them makes the server read it all again: the
    tool stays listed, one load away."""
    rt, script, tool, sid = await runtime(tmp_path)
    script.turn("Sure.", "Done.")
    await collect(rt.agent.run_stream(sid, "Please salute the team"))
    await collect(rt.agent.run_stream(sid, "Good morning"))
    first, second = script.of_kind("turn")
    assert "greet" in first.tools and second.tools == first.tools
    other = await rt.sessions.create("secretary")
    script.turn("Morning.", "Hello.")
    await collect(rt.agent.run_stream(other.id, "Good morning"))
    await collect(rt.agent.run_stream(other.id, "Please salute the team"))
    third, fourth = script.of_kind("turn")[2:]
    assert "greet" not in third.tools and fourth.tools == third.tools
    assert "greet" in (fourth.system_text or "")  # still listed
    await rt.aclose()


async def test_a_keyword_in_a_later_message_appends_the_tool_to_that_message(tmp_path: Path) -> None:
    """A later message's keywords reach the tool without moving the prompt's prefix: its schema is
    a note at the end of that message (the tools and every earlier message stay byte for byte), the
    model calls it at once, and the note reads the same on every later call."""
    rt, script, tool, sid = await runtime(tmp_path)
    script.turn("Morning.")
    script.turn(Reply(tool_calls=[ScriptedCall("greet", {"who": "the team"})]), "Saluted.")
    script.turn("Bye.")
    await collect(rt.agent.run_stream(sid, "Good morning"))
    events = await collect(rt.agent.run_stream(sid, "Please salute the team"))
    assert isinstance(events[-1], StreamEnd) and tool.calls == [{"who": "the team"}]
    await collect(rt.agent.run_stream(sid, "Thanks"))
    first, asked, answered, later = script.of_kind("turn")
    assert asked.tools == first.tools and "greet" not in asked.tools  # the prefix has not moved
    assert [m.content for m in asked.messages[:-1]] == [m.content for m in first.messages] + ["Morning."]
    note = asked.messages[-1].content or ""
    assert note.startswith("Please salute the team\n\n[Navi: for this message, ")
    assert note.endswith("the listed tools `greet` may be called directly, without load_tools]")
    assert answered.messages[len(asked.messages) - 1].content == note  # the same on the next call
    assert later.messages[len(asked.messages) - 1].content == note
    assert "greet" in later.tools  # called: sent whole from then on, appended after the others
    stored = await rt.sessions.get(sid)
    assert stored is not None and "[Navi:" not in "".join(m.content or "" for m in stored.messages)
    await rt.aclose()


def test_the_split_follows_the_profile_and_reads_only_new_messages() -> None:
    greet = GreetTool()
    view = ToolView([greet])
    split = disclose(view, core_tools=())
    assert split.core == [] and split.listed == ["greet"]
    assert [s.name for s in split.specs([Message.user("hi")])] == [LOAD_TOOLS]
    call = Message.assistant("", tool_calls=[ToolCall(id="c1", name="greet", arguments={"who": "x"})])
    context = [Message.user("hi"), call]
    assert [s.name for s in split.specs(context)] == [LOAD_TOOLS, "greet"]
    # A rewritten context (compression) is read again from the start: what it no longer shows goes.
    assert [s.name for s in split.specs([Message.user("a summary")])] == [LOAD_TOOLS]
    everything = disclose(view, core_tools=["greet"])
    assert everything.listed == [] and everything.index_text is None
    assert [s.name for s in everything.specs([])] == ["greet"]


def test_a_listed_tool_is_described_by_its_first_sentence() -> None:
    assert purpose("Run one program, e.g. `df -h`. No shell.") == "Run one program, e.g. `df -h`."
    long = "word " * 40
    assert len(purpose(long)) <= 90 and purpose(long).endswith("…")


async def test_a_compression_keeps_the_tools_the_summarised_messages_disclosed(tmp_path: Path) -> None:
    """The request that disclosed a tool is summarised away; the summary carries the tool, and its
    own words disclose nothing: the next call offers the same tools in the same order, so the
    server's cache of the system message and the tools (most of a small window) still holds."""
    rt, _, script = await scripted_runtime(tmp_path, **EARLY_COMPRESSION)
    rt.tools.register(GreetTool())
    rt.agent.user_tools = lambda: ["greet"]
    sid = (await rt.sessions.create("secretary")).id
    summary = "- The team finished its quarterly report on time; the user wanted it praised."
    script.responder = lambda request: Reply(
        text={"summary": summary, "naming": "Praise"}.get(kind_of(request), "Gladly, I will tell them.")
    )
    first = "Please salute the team: they finished the quarterly report on time and deserve praise."
    await collect(rt.agent.run_stream(sid, first))
    events = await collect(rt.agent.run_stream(sid, "Also tell me the weather in Oslo tomorrow."))
    assert any(isinstance(e, ContextCompressed) for e in events)  # after the second answer
    stored = await rt.sessions.get(sid)
    assert stored is not None and stored.context[0].is_summary
    assert first not in [m.content for m in stored.context]  # the disclosing request is gone
    await collect(rt.agent.run_stream(sid, "Thanks."))
    turns = script.of_kind("turn")
    assert "greet" in turns[0].tools
    assert turns[2].tools == turns[1].tools == turns[0].tools
    assert stored.context[0].metadata.disclosed == ["greet"]
    await rt.aclose()


def test_a_keyword_counts_at_the_start_of_a_word_only() -> None:
    """Every alternative of a tool's words is held to the start of a word: "bread" and "thread" do
    not ask for `filesystem` (its word "read" used to match inside them)."""
    view = ToolView([GreetTool()], {})
    split = disclose(view, [])
    assert split.listed == ["greet"]
    for text, wanted in (("I bake sourdough bread", False), ("Salute them", True), ("a resalute", False)):
        assert bool(split._pattern("greet").search(text)) is wanted, text
    from navi.agent.disclosure import _pattern
    from navi.tools.builtin.filesystem import FilesystemTool

    words = _pattern(FilesystemTool.__new__(FilesystemTool))
    assert words.search("please read the file") and not words.search("A thread of sourdough bread")
