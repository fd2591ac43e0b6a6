"""Long messages kept short: old long messages reach the model as head + tail with a recall key.

The scripted model records what it was sent, so each test reads the request a model really got;
the sessions are in a real SQLite database (recall reads the stored display history).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from navi.agent.compression.shorten import LongMessages
from navi.agent.context import PLAN_HEADING, SystemParts, build_context
from navi.agent.events import ContextCompressed, StreamEnd, ToolEvent
from navi.llm.messages import Message
from navi.llm.tokens import estimate_messages_tokens
from navi.profiles.base import AgentProfile
from navi.testing.script import Reply, ScriptedCall, ScriptRequest
from navi.tools.base import Tool, ToolResult
from tests.agent_helpers import collect, scripted_runtime

SETTINGS: dict[str, Any] = {
    "planning_enabled": False,
    "context_keep_recent": 4,
    "context_long_message_tokens": 300,
}


def long_text(tag: str, chars: int = 6_000) -> str:
    """A text with a recognisable head, middle and tail, none of which repeats elsewhere."""
    filler = "".join(f"{tag}-{i:05d} " for i in range(chars // 12))
    half = len(filler) // 2
    return f"{tag} BEGINS. {filler[:half]} {tag}-MIDDLE-SECRET-4217 {filler[half:]} {tag} ENDS."


class BigTool(Tool):
    name = "big"
    description = "Returns a long text."
    parameters = {"type": "object", "properties": {"tag": {"type": "string"}}, "required": ["tag"]}

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        return ToolResult.ok(long_text(params["tag"], 8_000))


def recall(key: str, **more: Any) -> ScriptedCall:
    return ScriptedCall("recall", {"key": key, "length": 40_000, **more})


def texts(request: ScriptRequest, role: str) -> list[str]:
    return [m.content or "" for m in request.messages if m.role == role]


async def test_old_long_messages_arrive_shortened_and_recall_reads_them_whole(tmp_path: Path) -> None:
    rt, _backend, script = await scripted_runtime(tmp_path, sql=True, **SETTINGS)
    rt.tools.register(BigTool())
    rt.agent.user_tools = lambda: ["big"]
    sid = (await rt.sessions.create("secretary")).id
    first, answer, recent = long_text("PASTE"), long_text("ANSWER"), long_text("NEWPASTE")
    script.turn(Reply(tool_calls=[ScriptedCall("big", {"tag": "RESULT"})]), answer)
    await collect(rt.agent.run_stream(sid, first))
    for i in range(2, 6):
        script.turn(f"reply {i}")
        await collect(rt.agent.run_stream(sid, f"short message {i}"))
    stored = await rt.sessions.get(sid)
    assert stored is not None
    paste, result, reply = stored.messages[0], stored.messages[2], stored.messages[3]
    assert (paste.content, reply.content, result.role) == (first, answer, "tool")

    # Turn 6: the paste is five turns old (4 are recent); the model recalls it by the key it was shown.
    script.turn(Reply(tool_calls=[recall(f"msg_{paste.id}")]), "It says 4217.")
    events = await collect(rt.agent.run_stream(sid, recent))
    asked = script.of_kind("turn")[-2]
    users = texts(asked, "user")
    sent_paste, sent_recent = users[0], users[-1]
    assert sent_recent == recent  # the latest message goes whole
    assert len(sent_paste) < 1_300 < len(first)
    assert sent_paste.startswith(first[:600]) and sent_paste.endswith(first[-300:])
    assert f'call recall with key "msg_{paste.id}"' in sent_paste and "MIDDLE-SECRET" not in sent_paste
    # The old answer and the old tool result are shortened the same way, each with its own key.
    sent_result = texts(asked, "tool")[0]
    assert f'key "msg_{result.id}"' in sent_result and "MIDDLE-SECRET" not in sent_result
    assert sent_result.startswith("RESULT BEGINS") and sent_result.endswith("RESULT ENDS.")
    sent_answer = next(t for t in texts(asked, "assistant") if t.startswith("ANSWER"))
    assert f'key "msg_{reply.id}"' in sent_answer and len(sent_answer) < 1_300
    # Short old messages and the recent turns go as they are.
    assert "short message 2" in users and "reply 5" in texts(asked, "assistant")

    recalled = next(e for e in events if isinstance(e, ToolEvent))
    assert recalled.success and recalled.result.endswith(first)
    assert f"characters 0–{len(first)} of {len(first)}" in recalled.result
    assert "PASTE-MIDDLE-SECRET-4217" in texts(script.of_kind("turn")[-1], "tool")[-1]
    # Nothing stored changed: the display history and the context hold every text whole.
    after = await rt.sessions.get(sid)
    assert after is not None
    assert [m.content for m in after.messages[:4]] == [m.content for m in stored.messages[:4]]
    assert next(m for m in after.context if m.id == paste.id).content == first
    assert next(m for m in after.context if m.id == reply.id).content == answer
    await rt.aclose()


async def test_an_aged_long_message_is_counted_as_sent(tmp_path: Path) -> None:
    """When a long message ages out of the recent turns, the context size drops by what its
    shortening saves before anything is decided on it: no compression for what is not sent."""
    rt, _backend, script = await scripted_runtime(
        tmp_path,
        sql=True,
        planning_enabled=False,
        ollama_num_ctx=16384,  # compression at 0.8 of it: 13,107 tokens
        context_keep_recent=2,
        context_long_message_tokens=1500,
    )
    sid = (await rt.sessions.create("secretary")).id
    paste = long_text("PASTE", 21_000)  # about 6,000 tokens
    script.turn("Noted.")
    await collect(rt.agent.run_stream(sid, paste))
    # The server counts 12,910 tokens after the second turn: close to the threshold, not over it.
    script.turn(Reply(text="ok", prompt_tokens=12_900, completion_tokens=10))
    await collect(rt.agent.run_stream(sid, "a short question"))
    # With 300 more tokens the stored paste would pass the threshold; as sent, it is far below.
    script.turn("Here you are.")
    events = await collect(rt.agent.run_stream(sid, "a question of medium length. " * 36))
    assert script.of_kind("summary") == [] and not any(isinstance(e, ContextCompressed) for e in events)
    sent = script.of_kind("turn")[-1]
    assert 'key "msg_' in texts(sent, "user")[0] and len(texts(sent, "user")[0]) < 6_000
    end = next(e for e in events if isinstance(e, StreamEnd))
    assert end.context_tokens == estimate_messages_tokens(sent.messages) + 4  # "Here you are." costs 4
    stored = await rt.sessions.get(sid)
    assert stored is not None and stored.context[0].content == paste
    await rt.aclose()


async def test_keys_resolve_for_the_owner_only(tmp_path: Path) -> None:
    rt, _backend, script = await scripted_runtime(tmp_path, sql=True, **SETTINGS)
    mine = await rt.sessions.create("secretary", owner="alice")
    my_other = await rt.sessions.create("secretary", owner="alice")
    theirs = await rt.sessions.create("secretary", owner="bob")
    kept, secret = Message.user(long_text("ALICE-OLD")), Message.user(long_text("BOB"))
    await rt.sessions.append(my_other.id, display=[kept], context=[kept])
    await rt.sessions.append(theirs.id, display=[secret], context=[secret])
    script.turn(
        Reply(
            tool_calls=[
                recall(f"msg_{secret.id}"),
                recall(secret.id),  # the bare form, as older keys were written
                recall(f"msg_{kept.id}"),
                recall("../../etc/passwd"),
                recall("msg_" + "x" * 5_000),
            ]
        ),
        "Done.",
    )
    events = await collect(rt.agent.run_stream(mine.id, "recall them"))
    results = [e for e in events if isinstance(e, ToolEvent)]
    assert [r.success for r in results] == [False, False, True, False, False]
    for refused in (results[0], results[1], results[3], results[4]):
        assert "no such key" in refused.result and "BOB" not in refused.result
        assert len(refused.result) < 400  # a hostile key is not echoed whole
    assert results[2].result.endswith(kept.content or "")  # another session of the same owner
    assert not any("BOB-MIDDLE" in t for t in texts(script.of_kind("turn")[-1], "tool"))
    await rt.aclose()


async def test_keys_survive_a_restart(tmp_path: Path) -> None:
    """A new runtime on the same database recalls by the keys the old one showed, new and old form."""
    rt, _backend, script = await scripted_runtime(tmp_path, sql=True, **SETTINGS)
    rt.tools.register(BigTool())
    rt.agent.user_tools = lambda: ["big"]
    rt.agent.config.tool_result_max_chars = 2_000  # the result is clipped in the stored context too
    sid = (await rt.sessions.create("secretary")).id
    paste = long_text("PASTE")
    script.turn(Reply(tool_calls=[ScriptedCall("big", {"tag": "RESULT"})]), "Read it.")
    await collect(rt.agent.run_stream(sid, paste))
    stored = await rt.sessions.get(sid)
    assert stored is not None
    result = next(m for m in stored.context if m.role == "tool")
    assert f'key "msg_{result.id}"' in (result.content or "") and len(result.content or "") < 2_300
    await rt.aclose()

    rt, _backend, script = await scripted_runtime(tmp_path, sql=True, **SETTINGS)
    script.turn(Reply(tool_calls=[recall(f"msg_{stored.messages[0].id}"), recall(result.id)]), "Both read.")
    events = await collect(rt.agent.run_stream(sid, "read them again"))
    recalled = [e for e in events if isinstance(e, ToolEvent)]
    assert [r.success for r in recalled] == [True, True]
    assert recalled[0].result.endswith(paste)
    assert recalled[1].result.endswith(long_text("RESULT", 8_000))
    await rt.aclose()


def test_the_view_shortens_only_old_long_messages() -> None:
    profile = AgentProfile(id="p", name="P", description="", system_prompt="Rules.")
    big = "x" * 5_000
    stored = [
        Message.user("[earlier conversation, summarised] " + big, is_summary=True),
        Message.user(big),
        Message.assistant("short answer"),
        Message.user("second"),
        Message.assistant(big),
        Message.user(big),  # the latest turn: recent
        Message.assistant("plan: " + big, is_plan=True),
    ]
    policy = LongMessages(max_tokens=100, keep_recent=1)
    full: dict[str, str] = {}
    built = build_context(SystemParts("Persona.", profile), stored, long_messages=policy, texts=full)
    contents = [m.content or "" for m in built[1:]]
    assert contents[0] == stored[0].content  # a summary goes whole
    assert contents[1].startswith("x" * 200) and f'"msg_{stored[1].id}"' in contents[1]
    assert len(contents[1]) < 600 and built[2].metadata["truncated_from"] == 5_000
    assert contents[2:4] == ["short answer", "second"]
    assert f'"msg_{stored[4].id}"' in contents[4] and contents[5] == big
    assert len(built) == 8 and contents[6] == f"{PLAN_HEADING}\nplan: {big}"  # a plan goes whole, as a note
    assert full == {stored[1].id: big, stored[4].id: big}
    assert [m.content for m in stored][1] == big  # the stored messages are not touched
    # 0 sends every message whole; so does a limit the note alone would be longer than.
    whole = build_context(SystemParts("Persona.", profile), stored[1:6], long_messages=LongMessages(0, 1))
    assert [m.content for m in whole[1:]] == [m.content for m in stored[1:6]]
    small = [Message.user("y" * 100), Message.assistant("ok"), Message.user("next")]
    tiny = build_context(SystemParts("Persona.", profile), small, long_messages=LongMessages(5, 1))
    assert tiny[1].content == "y" * 100
