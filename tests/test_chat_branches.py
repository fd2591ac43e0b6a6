"""`navi chat` in a real terminal (tmux): /edit runs the last message again with new text, /branch
shows the versions and switches back to the old one, /regenerate gives another answer."""

from __future__ import annotations

from pathlib import Path

from navi.testing.fake_server import FakeModelServer
from tests.helpers.terminal import NAVI, Terminal
from tests.server_helpers import live_navi, use_script
from tests.test_chat_keys import env_for


def test_edit_branch_and_regenerate(tmp_path: Path, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn("Paris.", "Rome.", "Paris, once more.")
    with live_navi(tmp_path, fake_server, planning_enabled=False) as navi:
        term = Terminal([*NAVI, "chat", "--new"], env_for(navi, tmp_path))
        try:
            term.wait_for_prompt()
            term.type("Capital of France?")
            term.send("Enter")
            term.wait_for("Paris.")
            term.type("/edit Capital of Italy?")
            term.send("Enter")
            term.wait_for("Rome.")
            term.type("/branch")
            term.send("Enter")
            term.wait_for("Version 2 of 2 of your message")
            term.type("/branch prev")
            term.send("Enter")
            redrawn = term.wait_for("Version 1 of 2").rsplit("› /branch prev", 1)[1]
            assert "Capital of France?" in redrawn and "Paris." in redrawn, redrawn
            assert "Rome." not in redrawn and "Italy" not in redrawn, redrawn
            term.type("/regenerate")
            term.send("Enter")
            term.wait_for("Paris, once more.")
            term.type("/branch")
            term.send("Enter")
            term.wait_for("Version 2 of 2 of the answer")
        finally:
            term.close()
    asked = [r.last_user_text for r in script.of_kind("turn")]
    assert asked == ["Capital of France?", "Capital of Italy?", "Capital of France?"]
    with live_navi(tmp_path, fake_server) as again, again.client() as http:
        (session,) = http.get("/sessions").json()
        shown = http.get(f"/sessions/{session['id']}").json()["messages"]
        assert [m["content"] for m in shown] == ["Capital of France?", "Paris, once more."]
