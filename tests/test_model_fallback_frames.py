"""The live line when a model chain switches mid-turn (issue 48): a `model_fallback` frame on the
socket as the chain moves on from a dead first endpoint, before the answer's first token; again,
marked `cooling`, on the next turn while that endpoint cools down; and the same line in `navi chat`
(tmux). The first endpoint is a closed port, the second the fake model server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from navi.cli.chat.turn import fallback_line
from navi.protocol import parse_server_frame
from navi.testing.fake_server import FakeModelServer
from navi.testing.ports import free_port
from navi.testing.script import Reply
from tests.helpers.terminal import NAVI, Terminal, chat_env
from tests.server_helpers import frames_until, live_navi

BIG = "gemma4:26b-a4b-it-q4_K_M"
SMALL = "gemma4:e2b-it-q8_0"


def models_file(tmp_path: Path, fake: FakeModelServer) -> Path:
    """`big` on a port nothing listens on, then `small` on the fake server."""
    path = tmp_path / "models.toml"
    path.write_text(
        f"""
[[models]]
id = "big"
backend = "ollama"
url = "http://127.0.0.1:{free_port()}"
model = "{BIG}"

[[models]]
id = "small"
backend = "ollama"
url = "{fake.url}"
model = "{SMALL}"

[chains]
default = ["big", "small"]
""",
        encoding="utf-8",
    )
    return path


def settings(tmp_path: Path, fake: FakeModelServer) -> dict[str, Any]:
    return {"models_file": str(models_file(tmp_path, fake)), "planning_enabled": False}


async def test_the_socket_says_the_switch_before_the_answer_and_while_the_endpoint_cools_down(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    fake_server.enqueue(Reply(text="small answers", chunk_chars=3))
    fake_server.enqueue("a title")  # naming, after the answer
    with live_navi(tmp_path, fake_server, **settings(tmp_path, fake_server)) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await ws.send('{"type": "message", "content": "hello"}')
            frames = await frames_until(ws, "stream_end", "error")
            kinds = [f["type"] for f in frames]
            assert kinds[-1] == "stream_end" and frames[-1]["content"] == "small answers", frames[-1]
            switch = frames[kinds.index("model_fallback")]
            parse_server_frame(switch)  # typed in navi/protocol
            assert (switch["endpoint"], switch["model"]) == ("big", BIG)
            assert (switch["next_endpoint"], switch["next_model"]) == ("small", SMALL)
            assert switch["cooling"] is False and "127.0.0.1" in switch["reason"], switch
            assert kinds.count("model_fallback") == 1
            assert kinds.index("model_fallback") < kinds.index("stream_delta")  # said before the answer
            assert switch["run_id"] == frames[0]["run_id"] and switch["seq"] > frames[0]["seq"]

            # The next turn, within the cool-down: big is skipped without being asked, and says so.
            fake_server.enqueue("small again")
            await ws.send('{"type": "message", "content": "and now?"}')
            frames = await frames_until(ws, "stream_end", "error")
            kinds = [f["type"] for f in frames]
            assert frames[-1]["content"] == "small again"
            skipped = [f for f in frames if f["type"] == "model_fallback"]
            assert len(skipped) == 1 and skipped[0]["cooling"] is True, skipped
            assert skipped[0]["endpoint"] == "big" and skipped[0]["reason"].startswith("it failed recently (")
            assert kinds.index("model_fallback") < kinds.index("stream_delta")
        # The stored answer keeps the same reasons for the record.
        with navi.client() as http:
            messages = http.get(f"/sessions/{sid}").json()["messages"]
        answers = [m for m in messages if m["role"] == "assistant"]
        assert answers[0]["metadata"]["fallback"][0].startswith("big: ")
        assert answers[1]["metadata"]["fallback"][0].startswith("big: skipped, it failed recently")
        assert all(m["metadata"]["endpoint"] == "small" for m in answers)


def test_the_line_the_terminal_prints() -> None:
    said = fallback_line(
        {
            "type": "model_fallback",
            "endpoint": "big",
            "model": BIG,
            "reason": "it failed recently (unreachable: down)",
            "next_endpoint": "small",
            "next_model": SMALL,
            "cooling": True,
        }
    )
    assert said == f"↪ big ({BIG}) skipped, it failed recently (unreachable: down) — asking small ({SMALL})"


def test_navi_chat_shows_the_switch_in_the_turn(tmp_path: Path, fake_server: FakeModelServer) -> None:
    fake_server.enqueue("The small model answered.")
    fake_server.enqueue("a title")
    with live_navi(tmp_path, fake_server, **settings(tmp_path, fake_server)) as navi:
        port = navi.url.rsplit(":", 1)[1]
        env = chat_env(tmp_path, NAVI_PORT=port, DB_PATH=str(tmp_path / "navi.db"))
        term = Terminal([*NAVI, "chat", "--new"], env)
        try:
            term.wait_for_prompt()
            term.type("hello")
            term.send("Enter")
            screen = term.wait_for("The small model answered.")
            said = " ".join(screen.split())  # the line wraps at the terminal's width
            assert f"↪ big ({BIG}) failed: cannot reach Ollama at http://127.0.0.1:" in said
            assert f"— asking small ({SMALL}) The small model answered." in said  # the line, then the answer
        finally:
            term.close()
