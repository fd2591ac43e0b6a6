"""`navi chat` in a real terminal (tmux): /continue goes on with an answer its length limit cut off,
and a reopened conversation shows the parts as one answer."""

from __future__ import annotations

from pathlib import Path

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply
from tests.helpers.terminal import NAVI, Terminal
from tests.server_helpers import live_navi, use_script
from tests.test_chat_keys import env_for


def test_continue_a_cut_off_answer(tmp_path: Path, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn(Reply(text="Roses are red, violets", finish_reason="length"), Reply(text=" are blue."))
    with live_navi(tmp_path, fake_server, planning_enabled=False) as navi:
        term = Terminal([*NAVI, "chat", "--new"], env_for(navi, tmp_path))
        try:
            term.wait_for_prompt()
            term.type("/continue")
            term.send("Enter")
            term.wait_for("nothing here yet")
            term.type("A poem?")
            term.send("Enter")
            term.wait_for("/continue goes on with it")
            term.type("/continue")
            term.send("Enter")
            term.wait_for("are blue.")
            term.type("/continue")
            term.send("Enter")
            term.wait_for("there is no cut-off answer to continue")
        finally:
            term.close()
        with navi.client() as http:
            (session,) = http.get("/sessions").json()
            shown = http.get(f"/sessions/{session['id']}").json()["messages"]
    assert [m["content"] for m in shown] == ["A poem?", "Roses are red, violets are blue."]
    assert script.of_kind("turn")[-1].last_user_text.startswith("[Note from Navi]")
