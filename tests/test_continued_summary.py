"""A compression after the answer, on a server that keeps the prompt cached here, asks for the
summary at the end of the conversation's own prompt (navi/agent/compression/continued.py): the same
messages, tools and options as the next answer's, plus one instruction, in the conversation's slot.
Elsewhere, or without room in the window, the summary is a request of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from navi.agent.compression.continued import ConversationPrompt, compress_continuing
from navi.agent.compression.summary import SummaryRejected
from navi.compose.runtime import Runtime
from navi.llm.base import CallOptions
from navi.llm.messages import Message
from navi.testing.agent_script import SUMMARY_MARK, AgentScript, kind_of
from navi.testing.script import Reply, ScriptedCall, ScriptRequest
from navi.testing.scripted import ScriptedBackend
from tests.agent_helpers import EARLY_COMPRESSION, collect, scripted_runtime
from tests.test_prompt_cache import key

ANSWER = "Raspberries like sun and a little shelter from the wind; plant them 45 cm apart. " * 5
SUMMARY = "- The user plans a garden with raspberry bushes and a plum tree."


async def two_turns(
    tmp_path: Path, server: str, *summaries: Reply | str
) -> tuple[Runtime, ScriptedBackend, AgentScript, str]:
    rt, backend, script = await scripted_runtime(tmp_path, **EARLY_COMPRESSION)
    backend.server = server
    script.turn(ANSWER, ANSWER, "", "")  # two answers, then read-aheads (one token each)
    script.summary(*(summaries or (SUMMARY,)))
    sid = (await rt.sessions.create("secretary")).id
    await collect(rt.agent.run_stream(sid, "I want raspberry bushes and a plum tree in my garden."))
    events = await collect(rt.agent.run_stream(sid, "Which side of the house should they go on?"))
    assert "ContextCompressed" in [type(e).__name__ for e in events]
    return rt, backend, script, sid


def answers_and_summaries(
    backend: ScriptedBackend, script: AgentScript
) -> tuple[list[ScriptRequest], list[tuple[CallOptions, ScriptRequest]]]:
    calls = list(zip(backend.options, script.requests, strict=True))
    answers = [r for o, r in calls if o.kind == "answer"]
    return answers, [(o, r) for o, r in calls if kind_of(r) == "summary"]


async def test_the_summary_extends_the_answers_prompt_in_its_slot(tmp_path: Path) -> None:
    rt, backend, script, sid = await two_turns(tmp_path, "llama.cpp")
    answers, summaries = answers_and_summaries(backend, script)
    assert len(summaries) == 1
    options, request = summaries[0]
    answer = answers[-1]
    # The answer's request, then the answer, then the instruction: nothing else changes.
    assert [key(m) for m in request.messages[: len(answer.messages)]] == [key(m) for m in answer.messages]
    reply, instruction = request.messages[len(answer.messages) :]
    assert reply.role == "assistant" and reply.content == ANSWER
    assert instruction.role == "user" and (instruction.content or "").startswith(SUMMARY_MARK)
    # It stops before the turn it keeps, which it names.
    assert 'begins "Which side of the house should they go on?"' in (instruction.content or "")
    assert request.tools == answer.tools
    assert options.kind == "summary" and options.extends_conversation and not options.side
    assert options.num_ctx == backend.options[0].num_ctx  # an Ollama model is not reloaded
    stored = await rt.sessions.get(sid)
    assert stored is not None
    assert stored.context[0].is_summary and SUMMARY in (stored.context[0].content or "")
    assert [(m.role, m.content) for m in stored.context[1:]] == [
        ("user", "Which side of the house should they go on?"),
        ("assistant", ANSWER),
    ]
    await rt.aclose()


async def test_without_a_cache_here_the_summary_is_a_request_of_its_own(tmp_path: Path) -> None:
    rt, backend, script, _ = await two_turns(tmp_path, "openai-compatible")
    _, summaries = answers_and_summaries(backend, script)
    assert len(summaries) == 1
    options, request = summaries[0]
    assert request.system_text.startswith(SUMMARY_MARK) and not request.tools
    assert options.side and not options.extends_conversation
    await rt.aclose()


async def test_a_model_that_cannot_summarise_there_gets_a_request_of_its_own(tmp_path: Path) -> None:
    """One attempt at the end of the conversation (a tool call instead of notes is a bad one), then
    the request of its own; that model is not asked at the end of the conversation again."""
    called = Reply(tool_calls=[ScriptedCall("todo", {"action": "list"})])
    rt, backend, script, sid = await two_turns(tmp_path, "ollama", called, SUMMARY, SUMMARY)
    _, summaries = answers_and_summaries(backend, script)
    assert [o.extends_conversation for o, _ in summaries] == [True, False]
    assert summaries[1][1].system_text.startswith(SUMMARY_MARK)
    stored = await rt.sessions.get(sid)
    assert stored is not None and SUMMARY in (stored.context[0].content or "")
    assert stored.context[0].metadata.summary_calls == 2
    # The next compression (another session, the same model) asks in a request of its own at once.
    script.turns.clear()
    script.turn(ANSWER, ANSWER, "")
    other = (await rt.sessions.create("secretary")).id
    await collect(rt.agent.run_stream(other, "I want raspberry bushes and a plum tree in my garden."))
    await collect(rt.agent.run_stream(other, "Which side of the house should they go on?"))
    _, later = answers_and_summaries(backend, script)
    assert len(later) > 2 and not any(o.extends_conversation for o, _ in later[2:])
    await rt.aclose()


async def test_a_summary_going_round_in_a_loop_is_closed_at_once(tmp_path: Path) -> None:
    """The server stops writing as soon as the summary repeats itself, not at the token cap."""
    loop = Reply(text="- I'm glad you enjoyed it.\n" * 40)
    rt, backend, script, _ = await two_turns(tmp_path, "llama.cpp", loop, SUMMARY)
    _, summaries = answers_and_summaries(backend, script)
    assert [o.extends_conversation for o, _ in summaries] == [True, False]
    assert backend.aborted_streams == 1
    await rt.aclose()


def conversation() -> list[Message]:
    return [
        Message.user("My router is at 192.168.1.10 and the printer will not connect."),
        Message.assistant("Restart the printer and check its address."),
        Message.user("Done, the printer now shows 192.168.1.77."),
        Message.assistant("Good: both are on the same network now."),
    ]


def prompt_of(context: list[Message], room: int) -> ConversationPrompt:
    return ConversationPrompt(
        [Message.system("You are Navi."), *context], [], CallOptions(model="m", num_ctx=4096), room=room
    )


async def test_no_room_for_a_summary_leaves_it_to_a_request_of_its_own() -> None:
    backend = ScriptedBackend([Reply(text="- never asked")])
    context = conversation()
    result = await compress_continuing(
        context, prompt_of(context, room=150), backend, keep_recent=1, temperature=0.3, max_tokens=768
    )
    assert result is None and backend.requests == []


async def test_numbers_of_the_turns_kept_are_the_models_own() -> None:
    """The model sees the kept turns too: a number from there is not a changed number, while one
    from nowhere still is."""
    context = conversation()
    seen = ScriptedBackend([Reply(text="- Router 192.168.1.10; the printer moved to 192.168.1.77.")])
    result = await compress_continuing(
        context, prompt_of(context, room=2_000), seen, keep_recent=1, temperature=0.3, max_tokens=768
    )
    assert result is not None and "192.168.1.77" in (result.summary.content or "")
    assert [m.content for m in result.context[1:]] == [m.content for m in context[2:]]
    wrong = Reply(text="- Router 192.168.1.1.10.")
    made_up = ScriptedBackend([wrong, wrong])
    with pytest.raises(SummaryRejected, match="changed numbers"):
        await compress_continuing(
            context, prompt_of(context, room=2_000), made_up, keep_recent=1, temperature=0.3, max_tokens=768
        )
