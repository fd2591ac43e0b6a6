"""`navi fake-model`'s demo: its trigger words are in its --help, and each shows what it says — a
plan, a call that asks for approval, a model error that Retry answers — through a live Navi over
the real wire; titles are the first words of the message, not the naming prompt's quoting."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from typer.testing import CliRunner

from navi.cli.main import _register
from navi.cli.main import app as cli
from navi.llm.messages import Message
from navi.testing.demo import COMMAND, TRIGGERS, demo_script, demo_title
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import ScriptRequest
from tests.server_helpers import frames_until, kinds, live_navi

_register()


def test_the_help_lists_every_trigger_word() -> None:
    result = CliRunner().invoke(cli, ["fake-model", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for words, shows in TRIGGERS:
        assert f"{' / '.join(words)}: {shows}" in result.output


def test_a_title_is_the_first_words_of_the_message() -> None:
    quoted = "Conversation:\nUser: make a plan for Sunday please now\nAssistant: Here it is.\n\nTitle:"
    request = ScriptRequest(api="ollama", model="m", messages=[Message.user(quoted)], tools=[])
    assert demo_title(request) == "Make a plan for Sunday"


def send(text: str) -> str:
    return json.dumps({"type": "message", "content": text})


async def test_the_demo_shows_a_plan_an_approval_and_a_retry(tmp_path: Path) -> None:
    with (
        FakeModelServer(demo_script()) as fake,
        live_navi(tmp_path, fake, navi_approval_mode="smart") as navi,
    ):
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await ws.send(send("Please run a command"))
            frames = await frames_until(ws, "approval_required")
            asked = frames[-1]
            assert (asked["tool"], asked["args"]) == ("terminal", {"command": COMMAND})
            assert asked["always_scope"] == "every terminal command that runs echo"
            await ws.send(json.dumps({"type": "approval", "call_id": asked["call_id"], "decision": "allow"}))
            frames = await frames_until(ws, "stream_end")
            (ran,) = [f for f in frames if f["type"] == "tool_call"]
            assert ran["success"] and "Hello from the Navi demo" in ran["result"]
            assert "The tool `terminal` answered" in frames[-1]["content"]

            await ws.send(send("Make a plan for the weekend"))
            frames = await frames_until(ws, "stream_end")
            (plan,) = [f for f in frames if f["type"] == "plan_ready"]
            assert "todo" in plan["plan"]

            await ws.send(send("This one should fail"))
            frames = await frames_until(ws, "error")
            assert "failed on purpose" in frames[-1]["message"]
            await ws.send(json.dumps({"type": "retry"}))
            frames = await frames_until(ws, "stream_end")
            assert kinds(frames)[0] == "stream_start" and "This one should fail" in frames[-1]["content"]

        # The README's `run` works in any message, not only a conversation's first (whose words
        # decide which tools go whole): here `terminal` is only listed, and the message's note
        # offers it.
        other = navi.new_session()
        async with navi.socket(other) as ws:
            await ws.send(send("Hello there"))
            await frames_until(ws, "stream_end")
            await ws.send(send("Now run a command"))
            frames = await frames_until(ws, "approval_required")
            assert (frames[-1]["tool"], frames[-1]["args"]) == ("terminal", {"command": COMMAND})
            await ws.send(
                json.dumps({"type": "approval", "call_id": frames[-1]["call_id"], "decision": "deny"})
            )
            await frames_until(ws, "stream_end")

        for _ in range(100):  # naming runs after the first answer
            with navi.client() as http:
                name = http.get(f"/sessions/{sid}").json()["name"]
            if name:
                break
            await asyncio.sleep(0.05)
    assert name == "Please run a command"
