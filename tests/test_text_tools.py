"""Text tool calling for models without native tools: the prompt, the parser, and the adapters."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from navi.llm import CallOptions, LLMBackend, Message, ToolCall, ToolSpec
from navi.llm.anthropic_backend import AnthropicBackend
from navi.llm.chunks import StreamFinal, TextDelta, ToolCallsChunk
from navi.llm.ollama_backend import OllamaBackend
from navi.llm.openai_backend import OpenAIBackend
from navi.llm.text_tools import TextToolParser, calls_in_block, to_text_messages, tool_instructions
from navi.testing.fake_server import FakeModelServer, LlamaCppFace
from navi.testing.script import Reply, ScriptedCall

FIXTURES = Path(__file__).parent / "fixtures" / "llama_cpp"
TOOLS = [
    ToolSpec(
        name="web_search",
        description="Search the web.",
        parameters={
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "what to look for"},
                "max_results": {"type": "integer"},
            },
            "required": ["query"],
        },
    ),
    ToolSpec(
        name="todo",
        description="Keep a task list.",
        parameters={
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["set", "get"]},
                "tasks": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["action"],
        },
    ),
]
NAMES = [t.name for t in TOOLS]


def parse(reply: str, pieces: list[str] | None = None) -> tuple[list[str], str, list[ToolCall]]:
    """Feed a reply in pieces; return what was shown after each piece, the rest, and the calls."""
    parser = TextToolParser(NAMES)
    shown = [parser.feed(p) for p in (pieces if pieces is not None else [reply])]
    rest = parser.finish()
    return shown, rest, parser.calls


def splits(text: str, seed: int = 7) -> Iterator[list[str]]:
    """The same text in one piece, one character at a time, and in random pieces."""
    yield [text]
    yield list(text)
    rng = random.Random(seed)
    for _ in range(20):
        cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(1, 8))))
        yield [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


# --- the prompt ----------------------------------------------------------------------------------
def test_instructions_list_every_tool_compactly() -> None:
    text = tool_instructions(TOOLS)
    assert "- web_search(query: string, max_results?: integer): Search the web." in text
    assert "    query: what to look for" in text
    assert '- todo(action: "set"|"get", tasks?: array of string): Keep a task list.' in text
    assert '<tool_call>{"name": "TOOL_NAME", "arguments": {"ARGUMENT": "VALUE"}}</tool_call>' in text
    assert '<tool_response name="TOOL_NAME">' in text


def test_history_becomes_text_with_results_as_user_turns() -> None:
    call = ToolCall(name="todo", arguments={"action": "get"})
    broken = ToolCall.from_raw("todo", "{oops")
    out = to_text_messages(
        [
            Message.system("persona"),
            Message.user("what is on my list?"),
            Message.assistant("Checking.", tool_calls=[call, broken]),
            Message.tool("1. milk", tool_call_id=call.id, name="todo"),
            Message.tool("error: bad arguments", tool_call_id=broken.id, name="todo"),
        ],
        TOOLS,
    )
    assert [m.role for m in out] == ["system", "user", "assistant", "user", "user", "system"]
    assert out[2].text == (
        'Checking.\n<tool_call>{"name": "todo", "arguments": {"action": "get"}}</tool_call>\n'
        '<tool_call>{"name": "todo", "arguments": "{oops"}</tool_call>'
    )
    assert out[3].text == '<tool_response name="todo">\n1. milk\n</tool_response>'
    assert out[-1].text == tool_instructions(TOOLS)


# --- the parser ----------------------------------------------------------------------------------
REPLY = (
    "Let me look that up.\n"
    '<tool_call>{"name": "web_search", "arguments": {"query": "Oslo weather"}}</tool_call>\n'
    '<tool_call>\n{"name": "todo", "arguments": {"action": "set", "tasks": ["a < b"]}}\n</tool_call>'
)


def test_calls_are_parsed_whatever_the_pieces() -> None:
    for pieces in splits(REPLY):
        shown, rest, calls = parse(REPLY, pieces)
        text = "".join(shown) + rest
        assert text == "Let me look that up.\n\n", pieces
        assert [(c.name, c.arguments) for c in calls] == [
            ("web_search", {"query": "Oslo weather"}),
            ("todo", {"action": "set", "tasks": ["a < b"]}),
        ]


def test_text_streams_before_the_reply_ends() -> None:
    pieces = [
        "Sure, ",
        "searching",
        " now <to",
        "ol_call>",
        '{"name": "web_search", ',
        '"arguments": {}}',
        "</tool_call>",
    ]
    shown, _, calls = parse("", pieces)
    assert shown[:2] == ["Sure, ", "searching"]
    assert shown[2] == " now "  # "<to" is held back: it may open a call
    assert shown[3:] == ["", "", "", ""]
    assert calls[0].name == "web_search"


def test_plain_text_with_angle_brackets_is_all_shown() -> None:
    reply = "Use a <b>bold</b> tag, and 3 < 4, and <tool_ends here."
    for pieces in splits(reply):
        shown, rest, calls = parse(reply, pieces)
        assert "".join(shown) + rest == reply and calls == []


@pytest.mark.parametrize(
    "reply",
    [
        '{"name": "web_search", "arguments": {"query": "news"}}',
        '  ```json\n{"name": "web_search", "arguments": {"query": "news"}}\n```\n',
        '```\n{"name": "web_search", "parameters": {"query": "news"}}\n```',
        '{"tool_call": {"name": "web_search", "arguments": {"query": "news"}}}',
        '{"name": "web_search", "arguments": "{\\"query\\": \\"news\\"}"}',
    ],
)
def test_a_reply_that_is_only_a_json_call_is_a_call(reply: str) -> None:
    for pieces in splits(reply):
        shown, rest, calls = parse(reply, pieces)
        assert "".join(shown) + rest == ""
        assert [(c.name, c.arguments) for c in calls] == [("web_search", {"query": "news"})]


@pytest.mark.parametrize(
    "reply",
    [
        '{"name": "Ada", "age": 36}',  # JSON the user asked for, not a call
        '{"name": "unknown_tool", "arguments": {}}',
        "```python\nprint({'name': 'web_search'})\n```",
        '{"name": "web_search", "arguments": {}} and then some words',
    ],
)
def test_json_that_is_not_a_call_is_shown_as_text(reply: str) -> None:
    shown, rest, calls = parse(reply, list(reply))
    assert "".join(shown) + rest == reply and calls == []


def test_fenced_code_that_is_not_json_streams_early() -> None:
    shown, _, _ = parse("", ["```python\n", "x = 1\n", "```"])
    assert "".join(shown[:2]) == "```python\nx = 1\n"


def test_broken_block_naming_a_tool_becomes_a_failed_call() -> None:
    _, rest, calls = parse('<tool_call>{"name": "todo", "arguments": {"action": </tool_call>')
    assert rest == ""
    (call,) = calls
    assert call.name == "todo" and call.arguments == {}
    assert call.raw_arguments and "not valid JSON" in (call.arguments_error or "")


def test_repairable_block_is_repaired() -> None:
    _, _, calls = parse("<tool_call>{'name': 'todo', 'arguments': {'action': 'get',}}</tool_call>")
    assert [(c.name, c.arguments, c.arguments_error) for c in calls] == [("todo", {"action": "get"}, None)]


def test_block_without_a_recognisable_call_stays_text() -> None:
    reply = "Here: <tool_call>no idea</tool_call> done"
    shown, rest, calls = parse(reply)
    assert calls == [] and "".join(shown) + rest == reply


def test_unclosed_blocks_and_invented_results() -> None:
    reply = (
        '<tool_call>{"name": "todo", "arguments": {"action": "get"}}\n'
        '<tool_call>{"name": "web_search", "arguments": {"query": "x"}}\n'
        '<tool_response name="todo">made up</tool_response>'
    )
    shown, rest, calls = parse(reply)
    assert [c.name for c in calls] == ["todo", "web_search"]
    assert "made up" not in "".join(shown) + rest


def test_several_calls_in_one_block() -> None:
    _, _, calls = parse(
        '<tool_call>[{"name": "todo", "arguments": {"action": "get"}}, '
        '{"name": "web_search", "arguments": {"query": "y"}}]</tool_call>'
    )
    assert [c.name for c in calls] == ["todo", "web_search"]
    assert calls_in_block('{"name": "todo", "arguments": {}}\n{"name": "todo", "arguments": {}}') is not None


# --- through the adapters ------------------------------------------------------------------------
def _load(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


@pytest.fixture
def llama_gemma(fake_server: FakeModelServer) -> Iterator[FakeModelServer]:
    """The fake posing as llama-server running a template without tools (recorded /props)."""
    fake_server.llama_cpp = LlamaCppFace(
        props=_load("props_gemma3_template.json"), models=_load("v1_models.json")
    )
    try:
        yield fake_server
    finally:
        fake_server.reset()


async def _run(be: LLMBackend, messages: list[Message], model: str) -> list:
    try:
        return [c async for c in be.stream_complete(messages, CallOptions(model=model), TOOLS)]
    finally:
        await be.aclose()


HISTORY_CALL = ToolCall(name="todo", arguments={"action": "get"})
HISTORY = [
    Message.system("You are Navi."),
    Message.system("Memory: likes tea."),
    Message.user("What is on my list?"),
    Message.assistant("", tool_calls=[HISTORY_CALL]),
    Message.tool("1. milk", tool_call_id=HISTORY_CALL.id, name="todo"),
    Message.user("And the weather?"),
]
MODEL_REPLY = 'Checking.\n<tool_call>{"name": "web_search", "arguments": {"query": "weather"}}</tool_call>'


@pytest.mark.parametrize("kind", ["ollama", "openai-llama.cpp"])
async def test_model_without_native_tools_gets_text_tool_calling(
    kind: str, fake_server: FakeModelServer, llama_gemma: FakeModelServer
) -> None:
    if kind == "ollama":
        be: LLMBackend = OllamaBackend(fake_server.url)
        model = "plain:1b"  # its /api/show capabilities have no "tools"
    else:
        be = OpenAIBackend(fake_server.openai_url)
        model = "whatever-name"  # llama-server serves its one model under any name
    fake_server.enqueue(Reply(text=MODEL_REPLY, chunk_chars=5))
    chunks = await _run(be, HISTORY, model)

    seen = fake_server.requests[-1]
    assert "tools" not in seen.raw or not seen.raw["tools"]
    assert [m.role for m in seen.messages] == ["system", "user", "assistant", "user"]
    system = seen.messages[0].text
    assert system.startswith("You are Navi.\n\nMemory: likes tea.\n\n## Tools")
    assert "- web_search(query: string, max_results?: integer): Search the web." in system
    assert seen.messages[2].text == '<tool_call>{"name": "todo", "arguments": {"action": "get"}}</tool_call>'
    assert (
        seen.messages[3].text == '<tool_response name="todo">\n1. milk\n</tool_response>\n\nAnd the weather?'
    )

    texts = [c.text for c in chunks if isinstance(c, TextDelta)]
    assert "".join(texts) == "Checking.\n"
    assert isinstance(chunks[-2], ToolCallsChunk)
    (call,) = chunks[-2].tool_calls
    assert (call.name, call.arguments) == ("web_search", {"query": "weather"})
    assert isinstance(chunks[-1], StreamFinal) and chunks[-1].finish_reason == "tool_calls"


async def test_plain_answer_in_text_mode_streams_unchanged(llama_gemma: FakeModelServer) -> None:
    llama_gemma.enqueue(Reply(text="It is sunny < 20 degrees.", chunk_chars=4))
    chunks = await _run(OpenAIBackend(llama_gemma.openai_url), [Message.user("weather?")], "m")
    assert "".join(c.text for c in chunks if isinstance(c, TextDelta)) == "It is sunny < 20 degrees."
    assert len([c for c in chunks if isinstance(c, TextDelta)]) >= 5
    assert chunks[-1].finish_reason == "stop"


@pytest.mark.parametrize("kind", ["ollama", "openai", "anthropic"])
async def test_native_tools_stay_native(kind: str, fake_server: FakeModelServer) -> None:
    """Models with tool support, and servers that say nothing (plain OpenAI-style), keep schemas."""
    be: LLMBackend = {
        "ollama": lambda: OllamaBackend(fake_server.url),
        "openai": lambda: OpenAIBackend(fake_server.openai_url),
        "anthropic": lambda: AnthropicBackend("k", fake_server.url),
    }[kind]()
    fake_server.enqueue(Reply(tool_calls=[ScriptedCall("web_search", {"query": "x"})]))
    chunks = await _run(be, HISTORY, "gemma4:e2b-it-q8_0")
    seen = fake_server.requests[-1]
    assert seen.tools == NAMES
    assert "## Tools" not in seen.system_text
    assert any(m.role == "tool" for m in seen.messages)
    assert chunks[-1].finish_reason == "tool_calls"
