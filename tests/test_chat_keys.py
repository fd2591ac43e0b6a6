"""`navi chat` keys in a real terminal (tmux): Ctrl-C stops a reply and pressing it again does not
quit (only Ctrl-D, or Ctrl-C twice at an empty prompt); Tab completes slash commands and
/profile's profiles; text typed at the start-up [Y/n] question is kept, not swallowed."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply
from tests.helpers.terminal import NAVI, Terminal, chat_env
from tests.server_helpers import LiveNavi, live_navi, use_script


def env_for(navi: LiveNavi, tmp_path: Path) -> dict[str, str]:
    return chat_env(tmp_path, NAVI_PORT=navi.url.rsplit(":", 1)[1], DB_PATH=str(tmp_path / "navi.db"))


def a_line(text: str) -> Callable[[str], bool]:
    """The screen has a line that is `text` (the screen's lines are trimmed at the end)."""
    return lambda screen: text in screen.splitlines()


def test_ctrl_c_twice_during_a_reply_stops_it_and_does_not_quit(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    words = " ".join(f"w{i}" for i in range(400))
    script.turn(Reply(text=f"Counting slowly: {words}", chunk_chars=4, delay=0.05), "Still here.")
    with live_navi(tmp_path, fake_server, planning_enabled=False) as navi:
        term = Terminal([*NAVI, "chat", "--new"], env_for(navi, tmp_path))
        try:
            term.wait_for_prompt()
            term.type("Count for me")
            term.send("Enter")
            term.wait_for("Counting slowly: w0 w1")
            term.send("C-c")
            term.send("C-c")  # pressed twice, as people do
            term.wait_for("■ stopped")
            time.sleep(1.0)  # room for a late second press to land at the prompt
            screen = term.screen(history=True)
            assert "[exited" not in screen, screen
            assert "w399" not in screen

            term.type("Are you still there?")
            term.send("Enter")
            term.wait_for("Still here.")
            assert "[exited" not in term.screen(history=True)

            term.send("C-c")  # at an empty prompt: a hint first…
            term.wait_for("(Ctrl-C again, or Ctrl-D, quits)")
            term.send("C-c")  # …then it quits
            term.wait_for("[exited 0]")
        finally:
            term.close()
    asked = [r.last_user_text for r in script.of_kind("turn")]
    assert asked[-1].endswith("Are you still there?")


def test_tab_completes_commands_and_profiles(tmp_path: Path, fake_server: FakeModelServer) -> None:
    use_script(fake_server)
    with live_navi(tmp_path, fake_server) as navi:
        term = Terminal([*NAVI, "chat", "--new"], env_for(navi, tmp_path))
        try:
            term.wait_for_prompt()
            term.type("/ses")
            term.send("Tab")
            term.wait_for(a_line("› /sessions"))  # one match: completed at once (with a space after)
            term.send("C-u")
            term.type("/se")
            term.send("Tab")  # two: /sessions and /search, each with what it does
            term.wait_for("find messages in all your conversations")
            term.send("Escape")
            term.send("C-u")
            term.type("/sea")
            term.send("Tab")
            term.wait_for(a_line("› /search"))
            term.send("C-u")
            term.type("/")
            term.send("Tab")  # many: a menu with what each does
            screen = term.wait_for("rename this conversation")
            assert "/profile" in screen and "/export" in screen
            term.send("Escape")
            term.send("C-u")
            term.type("/pro")
            term.send("Tab")
            term.wait_for(a_line("› /profile"))
            term.type("serv")
            term.send("Tab")
            term.wait_for(a_line("› /profile server_admin"))
            term.send("Enter")
            term.wait_for("Profile: ")
            term.wait_for_prompt(after="Profile: ")
            term.send("C-d")
            term.wait_for("[exited 0]")
        finally:
            term.close()


def test_text_typed_at_the_start_question_is_kept(tmp_path: Path, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn("First answer.", "Second answer.")
    with live_navi(tmp_path, fake_server, planning_enabled=False) as navi:
        sid = navi.new_session()
        with navi.client() as http:
            http.post(f"/sessions/{sid}/messages", json={"content": "Earlier question"})
        term = Terminal([*NAVI, "chat"], env_for(navi, tmp_path))
        try:
            term.wait_for("Continue “")
            term.type("what did I ask before?")  # meant for the chat, typed at the question
            term.send("Enter")
            term.wait_for("(what you typed is in the prompt: Enter sends it)")
            term.wait_for("› what did I ask before?")
            screen = term.screen(history=True)
            assert "First answer." in screen  # the conversation was continued, not a new one
            term.send("Enter")
            term.wait_for("Second answer.")
            term.wait_for_prompt(after="Second answer.")  # a Ctrl-D sent before the prompt is lost
            term.send("C-d")
            term.wait_for("[exited 0]")
        finally:
            term.close()
        with navi.client() as http:
            sessions = http.get("/sessions").json()
    assert [s["id"] for s in sessions] == [sid]
    assert script.of_kind("turn")[-1].last_user_text == "what did I ask before?"


def test_ctrl_d_during_a_reply_quits_once_it_and_the_lines_before_are_done(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    """Ctrl-D on an empty line while a reply streams quits, as at the prompt — after the reply
    and after a line typed before it is sent and answered. Before, the key was dropped."""
    script = use_script(fake_server)
    words = " ".join(f"w{i}" for i in range(120))
    script.turn(Reply(text=f"Slowly: {words}", chunk_chars=4, delay=0.05), "The second answer.")
    with live_navi(tmp_path, fake_server, planning_enabled=False) as navi:
        term = Terminal([*NAVI, "chat", "--new"], env_for(navi, tmp_path))
        try:
            term.wait_for_prompt()
            term.type("Count slowly")
            term.send("Enter")
            term.wait_for("Slowly: w0 w1")
            term.type("One more thing")
            term.send("Enter")
            term.send("C-d")
            screen = term.wait_for("(Ctrl-D: quits after this reply)")
            assert "w119" not in screen
            screen = term.wait_for("[exited 0]")
            assert screen.index("w119") < screen.index("The second answer.")
        finally:
            term.close()
    asked = [r.last_user_text for r in script.of_kind("turn")]
    assert asked == ["Count slowly", "One more thing"]


def test_the_start_question_offers_the_latest_conversation_and_a_bare_n_starts_a_new_one(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    """Sessions are listed pinned first, but the question offers the one last active; `n` answers
    at once, so the first message typed after it goes to a new conversation."""
    script = use_script(fake_server)
    script.turn("Older answer.", "Newer answer.", "A fresh answer.")
    with live_navi(tmp_path, fake_server, planning_enabled=False) as navi:
        older, newer = navi.new_session(), navi.new_session()
        with navi.client() as http:
            for sid, name in ((older, "Pinned and older"), (newer, "Latest talk")):
                http.post(f"/sessions/{sid}/messages", json={"content": f"About {name}"})
                assert http.patch(f"/sessions/{sid}", json={"name": name}).status_code == 200
            assert http.patch(f"/sessions/{older}/pin", json={"pinned": True}).status_code == 200
            assert http.get("/sessions").json()[0]["id"] == older  # listed first
        term = Terminal([*NAVI, "chat"], env_for(navi, tmp_path))
        try:
            term.wait_for("Continue “Latest talk”")
            term.type("n")  # no Enter
            term.wait_for("Type a message")
            term.type("hello there")
            term.send("Enter")
            term.wait_for("A fresh answer.")
            term.wait_for_prompt(after="A fresh answer.")
            term.send("C-d")
            term.wait_for("[exited 0]")
        finally:
            term.close()
        with navi.client() as http:
            ids = [s["id"] for s in http.get("/sessions").json()]
    assert len(ids) == 3 and older in ids and newer in ids
    assert script.of_kind("turn")[-1].last_user_text == "hello there"
