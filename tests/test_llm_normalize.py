"""Messages any chat template accepts: the shapes Navi sends, through Gemma 3's and a ChatML template.

The templates are rendered as model servers render them (jinja2's sandbox, `raise_exception`), so a
shape that passes here is one a strict template really accepts; the raw shapes are shown to fail.
"""

from __future__ import annotations

import base64
import itertools
import json

import pytest

from navi.llm.anthropic_backend import to_anthropic
from navi.llm.messages import Message, ToolCall, ToolSpec
from navi.llm.normalize import OPENING_TEXT, alternation_problems, normalize_messages
from navi.llm.openai_backend import to_openai_messages, to_openai_tools
from navi.llm.text_tools import to_text_messages
from navi.testing.templates import CHATML_TOOLS, GEMMA3, TemplateError, render

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 24).decode()
TOOLS = [
    ToolSpec(
        name="web_search",
        description="Search the web.",
        parameters={
            "type": "object",
            "properties": {"query": {"type": "string", "description": "search terms"}},
            "required": ["query"],
        },
    ),
    ToolSpec(name="todo", description="Keep a task list."),
]

PERSONA = Message.system("You are Navi, a personal assistant.")
MEMORY = Message.system("What you know about the user: likes green tea.")


def _call(name: str, **arguments: object) -> ToolCall:
    return ToolCall(name=name, arguments=dict(arguments))


def shapes() -> dict[str, list[Message]]:
    """Conversations as the agent builds them, including the ones that broke strict templates."""
    search = _call("web_search", query="weather in Oslo")
    plan = _call("todo", action="set", tasks=["look up", "answer"])
    return {
        "two system messages": [PERSONA, MEMORY, Message.user("Hello there")],
        "summary then user": [
            PERSONA,
            Message.user("Summary of the earlier conversation: we planned a trip.", is_summary=True),
            Message.user("Where were we?"),
        ],
        "trailing system note": [
            PERSONA,
            Message.user("Do the thing"),
            Message.assistant("I tried and failed."),
            Message.system("Note: the step limit was reached; answer with what you have."),
        ],
        "plan then tools": [
            PERSONA,
            MEMORY,
            Message.user("What is the weather in Oslo?"),
            Message.assistant("Plan: search, then answer.", is_plan=True),
            Message.assistant("", tool_calls=[search]),
            Message.tool("Oslo: 4 degrees and rain", tool_call_id=search.id, name="web_search"),
            Message.assistant("It is 4 degrees and raining in Oslo."),
        ],
        "tool results then user": [
            PERSONA,
            Message.user("Plan my day"),
            Message.assistant("Setting up tasks.", tool_calls=[plan, search]),
            Message.tool("2 tasks set", tool_call_id=plan.id, name="todo"),
            Message.tool("Sunny all day", tool_call_id=search.id, name="web_search"),
            Message.user("Also add groceries"),
        ],
        "images": [
            PERSONA,
            Message.user("Look at this", images=[PNG]),
            Message.user("and this one too", images=[PNG]),
            Message.assistant("Two pictures of cats."),
            Message.user("Which is cuter?"),
        ],
        "starts with the assistant": [
            PERSONA,
            Message.assistant("Earlier I said hello."),
            Message.user("Hi again"),
        ],
        "empty and stopped turns": [
            PERSONA,
            Message.user("First question"),
            Message.assistant("", stopped=True),
            Message.user("Second question"),
            Message.system("Memory summary arrives late."),
        ],
        "orphaned tool result": [
            PERSONA,
            Message.tool("an old result whose call was compressed away", tool_call_id="gone", name="todo"),
            Message.user("Continue please"),
        ],
    }


def texts_in_order(messages: list[Message]) -> list[str]:
    """What must reach the model, in the order it must appear: system texts, then the rest."""
    systems = [m.text for m in messages if m.role == "system"]
    rest: list[str] = []
    for m in messages:
        if m.role == "system":
            continue
        if m.text.strip():
            rest.append(m.text.strip())
        rest.extend(c.name for c in m.tool_calls)
    return systems + rest


def assert_in_order(output: str, pieces: list[str]) -> None:
    at = 0
    for piece in pieces:
        found = output.find(piece, at)
        assert found >= 0, f"{piece!r} missing (or out of order) in:\n{output}"
        at = found + len(piece)


def native(messages: list[Message]) -> list[dict]:
    return to_openai_messages(normalize_messages(messages))


def text_mode(messages: list[Message]) -> list[dict]:
    return to_openai_messages(normalize_messages(to_text_messages(messages, TOOLS)))


@pytest.mark.parametrize("name", list(shapes()))
def test_every_shape_renders_on_gemma_in_order(name: str) -> None:
    messages = shapes()[name]
    uses_tools = any(m.role == "tool" or m.tool_calls for m in messages)
    # Gemma 3's template has no tools: such a model always gets text tool calling.
    wire = text_mode(messages) if uses_tools else native(messages)
    prompt = render(GEMMA3, wire)
    assert prompt.startswith("<bos><start_of_turn>user\n")
    assert prompt.endswith("<start_of_turn>model\n")
    assert_in_order(prompt, texts_in_order(messages))
    assert "<start_of_turn>system" not in prompt and "<start_of_turn>tool" not in prompt


@pytest.mark.parametrize("mode", ["native", "text"])
@pytest.mark.parametrize("name", list(shapes()))
def test_every_shape_renders_on_chatml_with_tools_in_order(name: str, mode: str) -> None:
    messages = shapes()[name]
    wire = native(messages) if mode == "native" else text_mode(messages)
    prompt = render(CHATML_TOOLS, wire, to_openai_tools(TOOLS) if mode == "native" else None)
    assert prompt.count("<|im_start|>system") == 1
    assert_in_order(prompt, texts_in_order(messages))
    if mode == "text":
        assert "## Tools" in prompt and "- web_search(query: string): Search the web." in prompt


@pytest.mark.parametrize(
    "name", ["two system messages", "summary then user", "trailing system note", "images"]
)
def test_the_raw_shapes_fail_on_gemma(name: str) -> None:
    with pytest.raises(TemplateError, match="Conversation roles must alternate"):
        render(GEMMA3, to_openai_messages(shapes()[name]))


@pytest.mark.parametrize("name", list(shapes()))
def test_normalised_shapes_alternate(name: str) -> None:
    messages = shapes()[name]
    assert alternation_problems(normalize_messages(messages)) == []
    assert alternation_problems(normalize_messages(to_text_messages(messages, TOOLS))) == []


def test_alternation_problems_are_found() -> None:
    problems = alternation_problems(shapes()["summary then user"])
    assert problems == ["messages 0 and 1 are both user"]
    assert "more than one system message" in alternation_problems(shapes()["two system messages"])[0]
    assert alternation_problems([Message.assistant("hi")]) == ["the first message is assistant, not user"]


def test_one_system_message_first_with_every_text_in_order() -> None:
    out = normalize_messages(shapes()["trailing system note"])
    assert [m.role for m in out] == ["system", "user", "assistant"]
    assert out[0].text == (
        "You are Navi, a personal assistant.\n\nNote: the step limit was reached; answer with what you have."
    )


def test_unchanged_messages_are_the_same_objects() -> None:
    """Identity is what the Ollama adapter's per-message encoding cache is keyed by."""
    messages = [PERSONA, Message.user("a"), Message.assistant("b"), Message.user("c")]
    out = normalize_messages(messages)
    assert all(x is y for x, y in zip(out, messages, strict=True))


def test_same_role_neighbours_merge_keeping_images_and_calls() -> None:
    first, second = _call("todo"), _call("web_search", query="x")
    out = normalize_messages(
        [
            Message.user("one", images=["AAA"]),
            Message.user("two", images=["BBB"]),
            Message.assistant("thinking aloud", tool_calls=[first]),
            Message.assistant("more", tool_calls=[second]),
        ]
    )
    assert [m.role for m in out] == ["user", "assistant"]
    assert out[0].text == "one\n\ntwo" and out[0].images == ["AAA", "BBB"]
    assert out[1].text == "thinking aloud\n\nmore"
    assert [c.id for c in out[1].tool_calls] == [first.id, second.id]


def test_tool_results_stay_after_their_call() -> None:
    out = normalize_messages(shapes()["tool results then user"])
    assert [m.role for m in out] == ["system", "user", "assistant", "tool", "tool", "user"]


def test_a_conversation_that_opens_otherwise_gets_a_neutral_user_turn() -> None:
    out = normalize_messages(shapes()["starts with the assistant"])
    assert [m.role for m in out] == ["system", "user", "assistant", "user"]
    assert out[1].text == OPENING_TEXT
    only_system = normalize_messages([PERSONA])
    assert [m.role for m in only_system] == ["system", "user"]


def test_trailing_assistant_is_left_for_the_caller() -> None:
    out = normalize_messages([PERSONA, Message.user("Write a haiku"), Message.assistant("Autumn")])
    assert out[-1].role == "assistant" and out[-1].text == "Autumn"


def test_orphaned_tool_result_becomes_user_text() -> None:
    out = normalize_messages(shapes()["orphaned tool result"])
    assert [m.role for m in out] == ["system", "user"]
    assert "Result of the todo tool" in out[1].text and out[1].text.endswith("Continue please")


def test_text_mode_sends_no_tool_role_and_shows_calls_as_text() -> None:
    messages = shapes()["plan then tools"]
    out = normalize_messages(to_text_messages(messages, TOOLS))
    assert {m.role for m in out} == {"system", "user", "assistant"}
    assert all(not m.tool_calls for m in out)
    call = next(m for m in out if m.role == "assistant" and "<tool_call>" in m.text)
    block = call.text.split("<tool_call>")[1].split("</tool_call>")[0]
    assert json.loads(block) == {"name": "web_search", "arguments": {"query": "weather in Oslo"}}
    result = next(m for m in out if m.role == "user" and "<tool_response" in m.text)
    assert result.role == "user"
    assert '<tool_response name="web_search">\nOslo: 4 degrees and rain\n</tool_response>' in result.text
    # The tool listing closes the one system text, after persona and memory.
    assert out[0].text.index("likes green tea") < out[0].text.index("## Tools\n")


@pytest.mark.parametrize("name", list(shapes()))
def test_anthropic_turns_alternate_with_results_in_user_turns(name: str) -> None:
    system, turns = to_anthropic(shapes()[name])
    assert system.startswith("You are Navi")
    assert turns[0]["role"] == "user"
    assert all(a["role"] != b["role"] for a, b in itertools.pairwise(turns))
    for turn in turns:
        kinds = [block["type"] for block in turn["content"]]
        if "tool_result" in kinds:
            assert turn["role"] == "user"
            assert kinds[: kinds.count("tool_result")] == ["tool_result"] * kinds.count("tool_result")
    for text in [m.text for m in shapes()[name] if m.role == "system"]:
        assert text in system
