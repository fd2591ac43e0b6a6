"""Context compression: before and after a turn, chunked, failing, and the partition rules."""

from __future__ import annotations

import base64
from pathlib import Path

from navi.agent.compression.summary import SUMMARY_PREFIX, format_messages, partition, split_turns, take_chunk
from navi.agent.events import ContextCompressed, Notice
from navi.llm.errors import BackendUnreachable
from navi.llm.messages import Message, ToolCall
from navi.llm.tokens import estimate_messages_tokens, estimate_tokens
from navi.testing.script import Reply
from tests.agent_helpers import collect, scripted_runtime, types


def history(turns: int, first_fact: str = "My locker code is 4711.") -> list[Message]:
    msgs: list[Message] = []
    for i in range(turns):
        text = first_fact if i == 0 else f"Question number {i}: what about topic {i}?"
        msgs.append(Message.user(text))
        if i == 1:
            call = ToolCall(name="web_search", arguments={"query": f"topic {i}"})
            msgs.append(Message.assistant("", tool_calls=[call]))
            msgs.append(
                Message.tool(
                    f"result for topic {i}",
                    tool_call_id=call.id,
                    name="web_search",
                    metadata={"status": "ok"},
                )
            )
        msgs.append(Message.assistant(f"Answer {i}."))
    return msgs


SUMMARY = "- The locker code is 4711.\n- Questions about numbered topics were answered."


async def seeded(tmp_path: Path, turns: int, tokens: int, **settings: object):
    rt, backend, script = await scripted_runtime(
        tmp_path, sql=True, ollama_num_ctx=16384, context_keep_recent=2, **settings
    )
    session = await rt.sessions.create("secretary")
    old = history(turns)
    await rt.sessions.append(session.id, display=old, context=old, context_token_count=tokens)
    return rt, backend, script, session.id, old


async def test_compression_before_a_turn(tmp_path: Path) -> None:
    rt, backend, script, sid, old = await seeded(tmp_path, turns=8, tokens=15000)
    script.summary(SUMMARY)
    script.turn(Reply(text="Your locker code is 4711."))
    events = await collect(rt.agent.run_stream(sid, "What is my locker code?"))
    assert types(events)[0] == "context_compressed"
    compressed = next(e for e in events if isinstance(e, ContextCompressed))
    # everything but the last 2 turns and the new question was summarised
    # the last 2 turns are kept: the previous exchange and the new question
    assert compressed.messages_before == len(old) + 1 and compressed.messages_after == 1 + 2 + 1
    (summary_request,) = script.of_kind("summary")
    assert "My locker code is 4711." in summary_request.last_user_text
    assert "→ web_search(" in summary_request.last_user_text  # tool calls as compact previews
    stored = await rt.sessions.get(sid)
    assert stored is not None
    summary = stored.context[0]
    assert summary.is_summary and summary.role == "user" and "4711" in (summary.content or "")
    assert summary.content.startswith(SUMMARY_PREFIX)
    # The display history is whole: every old message, a compression marker, then the new turn.
    assert stored.messages[: len(old)] == old
    marker = stored.messages[len(old) + 1]
    assert marker.is_compression and "summarised" in (marker.content or "")
    assert [m.content for m in stored.context[1:3]] == ["Question number 7: what about topic 7?", "Answer 7."]
    assert stored.context[3].content == "What is my locker code?"  # the latest instruction, verbatim
    # The model call after compression carries the summary, not the old turns.
    turn = script.of_kind("turn")[0]
    assert any(m.is_summary or "4711" in (m.content or "") for m in turn.messages if m.role == "user")
    assert not any(m.content == "Answer 3." for m in turn.messages)
    assert stored.context_token_count < 15000
    await rt.aclose()


async def test_a_context_past_the_threshold_that_fits_is_answered_first_and_compressed_after(
    tmp_path: Path,
) -> None:
    # 14,000 of 16,384 tokens: past the threshold (0.8), but the answer and its 2,048 tokens of
    # room fit. Summarising first would make the user wait for the summary, then for the rewritten
    # context to be read; answered first, the model reads only the new message from its cache.
    rt, backend, script, sid, old = await seeded(tmp_path, turns=8, tokens=14000)
    script.summary(SUMMARY)
    script.turn(Reply(text="Your locker code is 4711.", prompt_tokens=14020, completion_tokens=8))
    events = await collect(rt.agent.run_stream(sid, "What is my locker code?"))
    assert types(events)[-2:] == ["stream_end", "context_compressed"]
    (answer,) = script.of_kind("turn")
    assert any(m.content == "Answer 3." for m in answer.messages)  # the old turns, as the cache has them
    assert not any(m.is_summary for m in answer.messages)
    stored = await rt.sessions.get(sid)
    assert stored is not None and stored.context[0].is_summary
    assert stored.context[-1].content == "Your locker code is 4711."
    await rt.aclose()


async def test_compression_after_a_turn(tmp_path: Path) -> None:
    rt, backend, script, sid, old = await seeded(tmp_path, turns=6, tokens=600)
    script.summary(SUMMARY)
    script.turn(Reply(text="Noted.", prompt_tokens=14000, completion_tokens=10))
    events = await collect(rt.agent.run_stream(sid, "Remember that my bike is blue."))
    assert types(events)[-2:] == ["stream_end", "context_compressed"]
    assert events[-2].context_tokens == 14010
    stored = await rt.sessions.get(sid)
    assert stored is not None
    assert stored.context[0].is_summary and "4711" in (stored.context[0].content or "")
    assert stored.context[-1].content == "Noted."
    assert stored.messages[-1].is_compression and stored.messages[-2].content == "Noted."
    assert stored.context_token_count < 14010  # reset to the estimate of the compressed context
    await rt.aclose()


async def test_a_failed_summary_leaves_the_context_alone(tmp_path: Path) -> None:
    rt, backend, script, sid, old = await seeded(tmp_path, turns=8, tokens=15000)
    script.summary(Reply(exception=BackendUnreachable("cannot reach Ollama")))
    script.turn("Answer without compression.")
    events = await collect(rt.agent.run_stream(sid, "Carry on"))
    assert "context_compressed" not in types(events)
    assert events[-1].type == "stream_end"
    stored = await rt.sessions.get(sid)
    assert stored is not None
    assert stored.context[: len(old)] == old  # untouched, and no placeholder summary
    assert not any(m.is_summary or m.is_compression for m in stored.messages + stored.context)
    assert len(script.of_kind("summary")) == 1  # tried once; not again on every step of the run
    await rt.aclose()


async def test_a_summary_that_echoes_the_prompt_is_refused_and_the_user_told(tmp_path: Path) -> None:
    rt, backend, script, sid, old = await seeded(tmp_path, turns=8, tokens=15000)
    echo = "## Current goal\n\n## Work state\n- Done:\n- Pending:\n\n## Key facts"  # headings, nothing under
    script.summary(echo, echo)
    script.turn("Answer without compression.")
    events = await collect(rt.agent.run_stream(sid, "Carry on"))
    assert "context_compressed" not in types(events) and events[-1].type == "stream_end"
    # (Another notice may say which tools were left out: the window holds the prompt without them.)
    (notice,) = [e for e in events if isinstance(e, Notice) and "summarised" in e.message]
    assert "could not be summarised" in notice.message
    assert "the model's summary had headings with nothing under them, twice in a row" in notice.message
    assert len(script.of_kind("summary")) == 2  # retried once
    stored = await rt.sessions.get(sid)
    assert stored is not None and stored.context[: len(old)] == old
    assert not any(m.is_summary or m.is_compression for m in stored.messages + stored.context)
    await rt.aclose()


async def test_long_histories_are_summarised_in_chunks_not_cut(tmp_path: Path) -> None:
    rt, backend, script, sid, old = await seeded(
        tmp_path, turns=40, tokens=15000, context_summary_max_input_tokens=600
    )
    script.summary(*[SUMMARY] * 40)
    script.turn("ok")
    await collect(rt.agent.run_stream(sid, "continue"))
    requests = script.of_kind("summary")
    assert len(requests) >= 3
    # (600: the prompt, a retry note and the summary so far take ~250; the chunk at least half the cap)
    for request in requests:  # the cap is in tokens and bounds each call's whole input
        assert estimate_messages_tokens(request.messages) <= 600
    assert all("Summary so far" in r.last_user_text for r in requests[1:])
    seen = "\n".join(r.last_user_text for r in requests)
    for i in range(1, 38):  # every summarised turn reached the summariser
        assert f"Question number {i}:" in seen
    stored = await rt.sessions.get(sid)
    assert stored is not None and "4711" in (stored.context[0].content or "")  # folded through every chunk
    await rt.aclose()


def pictures(count: int) -> list[str]:
    return [base64.b64encode(f"picture {i}".encode()).decode() for i in range(count)]


async def test_a_model_that_reads_images_sees_the_newest_images_of_what_it_summarises(tmp_path: Path) -> None:
    rt, backend, script, sid, old = await seeded(tmp_path, turns=8, tokens=15000)
    images = pictures(5)
    old[0].images = images[:2]  # the locker photo and another, in the first turn
    old[6].images = images[2:]  # three more, later; the turns kept verbatim have none
    await rt.sessions.replace_context(sid, old, context_token_count=15000)
    # A number read off a photo is not in the transcript: with the photos it is no "changed number".
    script.summary(SUMMARY + "\n- The photo shows the serial 88-2041-77.")
    script.turn("Done.")
    events = await collect(rt.agent.run_stream(sid, "Carry on"))
    assert "context_compressed" in types(events)
    (request,) = script.of_kind("summary")
    asked = [m for m in request.messages if m.role == "user"]
    assert [m.images for m in asked] == [images[-3:]]  # the newest three, oldest first, in one call
    assert "[2 image(s)]" in asked[0].content and "[3 image(s)]" in asked[0].content
    stored = await rt.sessions.get(sid)
    assert stored is not None and "88-2041-77" in (stored.context[0].content or "")
    await rt.aclose()


async def test_a_model_that_reads_no_images_is_sent_none(tmp_path: Path) -> None:
    rt, backend, script, sid, old = await seeded(tmp_path, turns=8, tokens=15000)
    backend.capabilities = ("completion", "tools")
    old[0].images = pictures(2)
    await rt.sessions.replace_context(sid, old, context_token_count=15000)
    script.summary(SUMMARY)
    script.turn("Done.")
    await collect(rt.agent.run_stream(sid, "Carry on"))
    (request,) = script.of_kind("summary")
    assert all(m.images == [] for m in request.messages)
    assert "[2 image(s)]" in request.last_user_text  # as before: the transcript says they were there
    await rt.aclose()


def test_partition_keeps_tool_groups_and_folds_summaries() -> None:
    call = ToolCall(name="todo")
    earlier = Message.user("summary of before", is_summary=True)
    ctx = [
        earlier,
        Message.user("u1"),
        Message.assistant("a1"),
        Message.user("u2"),
        Message.assistant("", tool_calls=[call]),
        Message.tool("[]", tool_call_id=call.id, name="todo"),
        Message.user("[image]", images=["x"], metadata={"synthetic": "image"}),
        Message.assistant("a2"),
    ]
    assert [len(t) for t in split_turns(ctx)] == [1, 2, 5]
    to_summarize, to_keep = partition(ctx, keep_recent=1)
    assert [m.content for m in to_summarize] == ["summary of before", "u1", "a1"]
    assert to_keep[0].content == "u2" and to_keep[-1].content == "a2" and len(to_keep) == 5
    lines = format_messages(to_summarize)
    assert lines[0].startswith("Earlier summary:")
    assert partition(ctx, keep_recent=5)[0] == [earlier]  # only the old summary is left to fold


def test_previews_are_compact() -> None:
    call = ToolCall(name="http_request", arguments={"url": "http://x/" + "a" * 500})
    lines = format_messages(
        [
            Message.assistant("", tool_calls=[call]),
            Message.tool("b" * 5000, tool_call_id=call.id, name="http_request"),
        ]
    )
    assert len(lines[0]) < 160 and lines[0].endswith("…)")
    assert len(lines[1]) < 340


def test_chunks_never_drop_text() -> None:
    lines = ["word " * 500, "short", "y" * 10, "z" * 900]
    rebuilt = []
    remaining = lines
    while remaining:
        chunk, remaining = take_chunk(remaining, 100)  # tokens, as the estimator counts them
        assert 0 < estimate_tokens(chunk) <= 100
        rebuilt.append(chunk)
    assert len(rebuilt) > 10 and max(len(c) for c in rebuilt) > 300  # ~3.5 characters a token
    assert "".join(rebuilt).replace("\n", "") == "".join(lines)


def test_last_resort_keeps_the_instruction_and_the_newest_results() -> None:
    calls = [ToolCall(name="web_view") for _ in range(3)]
    ctx = [
        Message.user("old question"),
        Message.assistant("old answer"),
        Message.user("Research X thoroughly"),
    ]
    for i, call in enumerate(calls):
        ctx += [
            Message.assistant("", tool_calls=[call]),
            Message.tool(f"page {i}", tool_call_id=call.id, name="web_view"),
        ]
    to_summarize, to_keep = partition(ctx, keep_recent=0)
    assert [m.content for m in to_keep] == ["Research X thoroughly", "", "page 2"]
    assert [m.content for m in to_summarize][:2] == ["old question", "old answer"]
    assert "page 0" in [m.content for m in to_summarize] and "page 1" in [m.content for m in to_summarize]


async def test_a_turn_that_outgrows_the_window_is_compressed_inside(tmp_path: Path) -> None:
    from navi.testing.script import ScriptedCall

    rt, backend, script = await scripted_runtime(tmp_path, ollama_num_ctx=16384, context_keep_recent=1)
    script.summary(*["- Researching X: a long note is in scratchpad section a."] * 4)
    session = await rt.sessions.create("secretary")
    big = "x" * 3000
    script.turn(
        Reply(
            tool_calls=[ScriptedCall("scratchpad", {"action": "write", "section": "a", "content": big})],
            prompt_tokens=6000,
            completion_tokens=3600,
        ),
        Reply(
            tool_calls=[ScriptedCall("scratchpad", {"action": "read", "section": "a"})],
            prompt_tokens=10000,
            completion_tokens=3600,
        ),
        Reply(text="Done with the research.", prompt_tokens=5000, completion_tokens=10),
    )
    events = await collect(rt.agent.run_stream(session.id, "Research X thoroughly"))
    assert "context_compressed" in types(events) and events[-1].type in ("stream_end", "context_compressed")
    last_turn = script.of_kind("turn")[-1]
    users = [m for m in last_turn.messages if m.role == "user"]
    # The summary comes first, then the instruction verbatim (one user message or two: a backend
    # that needs alternating roles merges them).
    said = "\n".join(m.content or "" for m in users)
    assert said.startswith(SUMMARY_PREFIX) and "\nResearch X thoroughly" in said
    await rt.aclose()
