"""Compression that runs only when it helps: a pass that cannot shrink the context is not run again
until the context has grown, `context_compressed` goes out only when the context got smaller, and a
turn sends at most one, post-turn work included.

The thrash this guards against was found with Gemma 3 270M in a 4,096-token window: Navi's own
instructions took more than the compression threshold, the model could not summarise, and Navi
condensed a context that was only a summary and the latest request into itself, again and again —
42 `context_compressed` frames in eight turns, most of them `before=2 after=2`.
"""

from __future__ import annotations

from pathlib import Path

from navi.agent.compression.compressor import CompressionSettings, ContextCompressor, Pass
from navi.agent.compression.summary import SUMMARY_PREFIX, FutileCompressions, shrank
from navi.agent.events import AgentEvent, ContextCompressed, Notice, StreamEnd
from navi.llm.base import ModelInfo
from navi.llm.messages import Message
from navi.llm.tokens import estimate_tokens
from navi.sessions.memory_store import InMemorySessionStore
from navi.testing.agent_script import kind_of
from navi.testing.replay import load_exchanges
from navi.testing.script import Reply, ScriptedCall, ScriptRequest
from navi.testing.scripted import ScriptedBackend
from tests.agent_helpers import MODEL, collect, scripted_runtime
from tests.test_agent_compression import SUMMARY, seeded
from tests.test_summaries import GEMMA_ECHO

FIXTURES = Path(__file__).parent / "fixtures" / "real_model"
WINDOW = 4096
FACTS = [
    "My sister Ingrid lives in Tromsø and works as a marine biologist studying cod.",
    "I keep three raspberry bushes and a plum tree in my garden behind the house.",
    "The project I lead at work is called Lighthouse and ships in March next year.",
    "My bicycle is a green steel touring bike I bought second hand in 2019.",
    "On Sundays I bake sourdough bread with rye flour and caraway seeds.",
    "My neighbour Tor repairs old radios in his garage on weekday evenings.",
    "I am learning to play the cello, slowly, with a teacher called Maren.",
    "Tell me one thing you remember about my sister.",
]


def recorded_gemma_answer() -> str:
    """The longest answer Gemma 3 270M gave a greeting through llama-server (it plays the persona
    back, near its 256-token cap): long-answer-gemma3.jsonl, the greeting as it was recorded when
    the real-model tests capped answers at 256 tokens."""
    chat = [x for x in load_exchanges(FIXTURES / "long-answer-gemma3.jsonl") if x.is_chat]
    answer = max((x.text() for x in chat if "Navi" in x.request["messages"][0]["content"][:40]), key=len)
    assert len(answer) > 900  # about 240 tokens: eight of them fill half the window
    return answer


class TextToolsBackend(ScriptedBackend):
    """llama-server with a plain template: tools go into the system message as text, so Navi's
    own instructions take more than half of a 4,096-token window."""

    async def model_info(self, model: str) -> ModelInfo:
        return ModelInfo(name=model, context_length=WINDOW, capabilities=("completion",), probed=True)


GARDEN = "- The user's sister Ingrid lives in Tromsø.\n- The user keeps raspberry bushes and a plum tree."


def frames(events: list[AgentEvent]) -> list[ContextCompressed]:
    return [e for e in events if isinstance(e, ContextCompressed)]


async def test_a_small_window_and_a_model_that_cannot_summarise_compress_a_handful_of_times(
    tmp_path: Path,
) -> None:
    # The settings of the real-model scenario (tests/real_model/test_compression.py), where a
    # threshold of half the window is below what Navi's instructions alone take.
    rt, _, script = await scripted_runtime(
        tmp_path,
        sql=True,
        context_length=WINDOW,
        planning_enabled=False,
        llm_max_tokens_answer=256,
        llm_max_tokens_summary=160,
        context_keep_recent=1,
        context_compression_threshold=0.5,
    )
    rt.backends.register_instance(
        "ollama", TextToolsBackend(script, context_length=WINDOW), default_model=MODEL
    )
    answer = recorded_gemma_answer()
    echo = Reply(text=GEMMA_ECHO, finish_reason="length")  # Gemma's recorded answer to the summary prompt

    def respond(request: ScriptRequest) -> Reply:
        kind = kind_of(request)
        return echo if kind == "summary" else Reply(text=answer if kind == "turn" else "Sister and garden")

    script.responder = respond
    session = await rt.sessions.create("secretary")
    per_turn = []
    notices = 0
    for text in FACTS:
        events = await collect(rt.agent.run_stream(session.id, text))
        assert any(isinstance(e, StreamEnd) for e in events), events[-1]
        sent = frames(events)
        per_turn.append(len(sent))
        notices += sum(isinstance(e, Notice) and "short form" in e.message for e in events)
        for frame in sent:  # only a context that got smaller is announced
            assert frame.messages_after < frame.messages_before, frame
    # On main: 31 frames in these eight turns, 18 of them `2 → 2`, five in most turns.
    assert max(per_turn) <= 1, per_turn  # at most one a turn, post-turn work included
    assert 1 <= sum(per_turn) <= len(FACTS) - 1, per_turn
    assert notices <= sum(per_turn)  # the condensing notice once a pass, not once a step
    assert len(script.of_kind("summary")) == 2  # tried and retried once; then Navi condenses
    stored = await rt.sessions.get(session.id)
    assert stored is not None
    markers = [m for m in stored.messages if m.is_compression]
    assert len(markers) == sum(per_turn)  # one marker for each announced pass, none for the others
    assert stored.context[0].is_summary and "Ingrid" not in "".join(
        m.content or "" for m in stored.context[1:]
    )
    await rt.aclose()


async def test_a_context_a_pass_cannot_shrink_is_left_alone_until_it_grows() -> None:
    sessions = InMemorySessionStore()
    compressor = ContextCompressor(CompressionSettings(keep_recent=1), sessions)
    session = await sessions.create("secretary")
    summary = Message.user(f"{SUMMARY_PREFIX}\n- The locker code is 4711.", is_summary=True)
    context = [summary, Message.user("What is my locker code?")]
    await sessions.append(session.id, context=context)
    backend = ScriptedBackend([])  # never called: condensing needs no model

    async def condense(ctx: list[Message]):
        return await compressor.run_pass(
            session.id,
            ctx,
            backend,
            MODEL,
            overhead_tokens=100,
            persistent=True,
            plan=Pass(condense=True, keeps=[1, 0], budget_tokens=500),
        )

    outcome = await condense(context)
    assert outcome.done is None and outcome.failure is None  # condensed into itself: no compression
    stored = await sessions.get(session.id)
    assert stored is not None and stored.context == context  # nothing stored, no marker
    assert not any(m.is_compression for m in stored.messages)
    assert not await compressor.may_run(session.id, context)
    # The answer makes the context grow: a pass may run again, and now it shrinks something.
    grown = [*context, Message.assistant("It is 4711."), Message.user("Thanks. And my bike?")]
    assert await compressor.may_run(session.id, grown)
    outcome = await condense(grown)
    assert outcome.done is not None
    assert (outcome.done.event.messages_before, outcome.done.event.messages_after) == (4, 2)
    assert "4711" in (outcome.done.context[0].content or "")
    assert await compressor.may_run(session.id, outcome.done.context)  # it helped: judged afresh next time


async def test_smaller_means_fewer_messages_or_fewer_tokens() -> None:
    summary = Message.user(f"{SUMMARY_PREFIX}\n- A note.", is_summary=True)
    request = Message.user("Go on")
    assert not shrank([summary, request], [summary.model_copy(), request])
    assert shrank([summary, Message.assistant("ok"), request], [summary, request])
    assert shrank([Message.user("x" * 400), request], [Message.user("x" * 40), request])
    futile = FutileCompressions()
    await futile.failed("s", [summary, request])
    assert not await futile.allows("s", [summary, request]) and await futile.allows(
        "other", [summary, request]
    )
    await futile.forget("s")
    assert await futile.allows("s", [summary, request])


async def test_a_turn_that_compressed_before_its_first_call_does_not_compress_again(tmp_path: Path) -> None:
    rt, _, script, sid, old = await seeded(tmp_path, turns=8, tokens=15000)  # 16,384 window, 0.8
    script.summary(SUMMARY, SUMMARY, SUMMARY)
    write = ScriptedCall("scratchpad", {"action": "write", "section": "a", "content": "notes"})
    # After the tool the count is past the threshold again (but the prompt still fits), and so it
    # is after the answer: the compression before the turn was this turn's one.
    script.turn(
        Reply(tool_calls=[write], prompt_tokens=13_400, completion_tokens=20),
        Reply(text="Written.", prompt_tokens=13_500, completion_tokens=10),
    )
    events = await collect(rt.agent.run_stream(sid, "Write it down"))
    assert isinstance(events[-1], StreamEnd) or isinstance(events[-2], StreamEnd)
    assert len(frames(events)) == 1, [e.type for e in events]
    assert len(script.of_kind("summary")) == 1
    stored = await rt.sessions.get(sid)
    assert stored is not None and sum(m.is_compression for m in stored.messages) == 1
    await rt.aclose()


async def test_a_fact_kept_word_for_word_lets_a_long_session_compress(tmp_path: Path) -> None:
    rt, _, script = await scripted_runtime(tmp_path, sql=True, ollama_num_ctx=16384, context_keep_recent=2)
    session = await rt.sessions.create("secretary")
    old: list[Message] = []
    for i in range(12):
        said = "Remember FACT:blue_door_42 for later." if i == 0 else f"Question {i}: what about topic {i}?"
        old += [Message.user(said), Message.assistant(f"Topic {i} is covered; nothing more to add.")]
    await rt.sessions.append(session.id, display=old, context=old, context_token_count=15_000)
    script.summary("- FACT:blue_door_42")
    script.turn("It was FACT:blue_door_42.")
    events = await collect(rt.agent.run_stream(session.id, "What was the fact?"))
    assert not any(isinstance(e, Notice) for e in events)  # not "copied the conversation, twice"
    (frame,) = frames(events)
    assert frame.messages_after < frame.messages_before
    stored = await rt.sessions.get(session.id)
    assert stored is not None and stored.context[0].content == f"{SUMMARY_PREFIX}\n- FACT:blue_door_42"
    assert len(script.of_kind("summary")) == 1
    await rt.aclose()


async def test_a_small_window_compresses_after_the_answer_not_before_the_next_one(tmp_path: Path) -> None:
    # Fewer turns than `context_keep_recent` (10) fill a 4,096-token window: the pass after the
    # answer keeps only that turn, while the user reads, instead of leaving it to the next turn,
    # which would make the user wait for the summary before the answer starts (45 s on SmolLM2).
    rt, _, script = await scripted_runtime(
        tmp_path, sql=True, context_length=WINDOW, planning_enabled=False, llm_max_tokens_answer=256
    )
    answer = recorded_gemma_answer()
    script.responder = lambda request: Reply(
        text={"summary": GARDEN, "naming": "Sister and garden"}.get(kind_of(request), answer)
    )
    session = await rt.sessions.create("secretary")
    turns = 0
    for text in FACTS:
        turns += 1
        events = await collect(rt.agent.run_stream(session.id, text))
        kinds = [type(e).__name__ for e in events]
        if "ContextCompressed" in kinds:
            break
    else:
        raise AssertionError("the window never filled")
    assert turns < 10  # fewer turns than are kept
    # Announced after the turn's answer ended, not before it started.
    assert kinds.index("ContextCompressed") > kinds.index("StreamEnd"), kinds
    (summary_call,) = script.of_kind("summary")
    # The summary may take at most half of what it summarises (estimated), not the whole cap.
    source = summary_call.last_user_text
    half = estimate_tokens(source) // 2 + 1  # as Navi estimates tokens (not a flat 4 characters each)
    assert 0 < summary_call.options["max_tokens"] <= max(128, half), summary_call.options
    stored = await rt.sessions.get(session.id)
    assert stored is not None
    assert stored.context[0].is_summary and [m.role for m in stored.context[1:]] == ["user", "assistant"]
    assert stored.context[1].content == text  # the turn just answered is kept as it was
    events = await collect(rt.agent.run_stream(session.id, "And my bicycle?"))
    assert not [e for e in events if isinstance(e, ContextCompressed)]  # the next turn starts at once
    await rt.aclose()
