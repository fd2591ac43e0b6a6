"""`navi chat` in a real terminal (tmux): /search lists the messages of every conversation with the
words, numbered; /open N opens a hit's conversation on the version (branch) that holds the message,
its exchange drawn even when older than the latest ones. And how a hit's line is drawn."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from navi.cli.chat.finding import MARK, hit_line
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply
from tests.helpers.terminal import NAVI, Terminal
from tests.server_helpers import live_navi, talk, use_script
from tests.test_chat_keys import env_for


def test_search_finds_a_message_on_another_branch_and_opens_it_there(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn(
        "Booked the zeppelin for Friday.", "Hotel Fjord.", "Fish soup.", "The Munch museum.", "Sunny."
    )
    script.turn("Booked the night train.", "Rain tomorrow.")
    with live_navi(tmp_path, fake_server, planning_enabled=False) as navi:
        trip, old = talk(
            navi,
            "Oslo trip",
            ["Book the zeppelin to Oslo", "And a hotel?", "And dinner?", "And a museum?", "Weather there?"],
        )
        with navi.client() as http:  # the first question edited: the zeppelin is on the old branch only
            edited = http.post(
                f"/sessions/{trip}/messages/{old[0]['id']}/edit", json={"content": "Book the train to Oslo"}
            )
            assert edited.status_code == 200, edited.text
            shown = [m["content"] for m in http.get(f"/sessions/{trip}").json()["messages"]]
            assert shown == ["Book the train to Oslo", "Booked the night train."]
        home, _ = talk(navi, "Weather at home", ["Weather here?"])

        term = Terminal([*NAVI, "chat", home], env_for(navi, tmp_path))
        try:
            term.wait_for_prompt("Rain tomorrow.")
            term.type("/search")
            term.send("Enter")
            term.wait_for("✗ /search WORDS: the messages of all your conversations with every word")
            term.type("/search quetzalcoatl")
            term.send("Enter")
            term.wait_for("✗ no matches for “quetzalcoatl” in your conversations")

            term.type("/search zeppel")  # the last word also as a prefix
            term.send("Enter")
            listed = term.wait_for("that holds the message").rsplit("› /search zeppel", 1)[1]
            assert "  1  Oslo trip · " in listed and "  2  Oslo trip · " in listed, listed
            assert "Book the zeppelin to Oslo" in listed and "Booked the zeppelin for Friday." in listed
            assert "  3  " not in listed and "train" not in listed, listed
            number = (
                1 if listed.index("Book the zeppelin to Oslo") < listed.index("Booked the zeppelin") else 2
            )

            term.type(f"/open {number}")  # the question: on the old branch, older than the last 3 exchanges
            term.send("Enter")
            opened = term.wait_for("that one is shown now (/branch)").rsplit(f"› /open {number}", 1)[1]
            assert "Oslo trip" in opened
            assert "Book the zeppelin to Oslo" in opened and "Booked the zeppelin for Friday." in opened
            assert "… 2 later messages" in opened, opened
            assert "And a museum?" in opened and "Sunny." in opened  # the latest exchanges too
            assert "Hotel Fjord." not in opened and "train" not in opened, opened
            term.type("/branch")
            term.send("Enter")
            term.wait_for("Version 1 of 2 of your message")

            term.type("/search weather")  # a hit on the shown branch: opened as it is, no switch
            term.send("Enter")
            listed = term.wait_for(lambda s: s.count("that holds the message") == 2).rsplit(
                "› /search weather", 1
            )[1]
            assert "Weather at home" in listed and "Oslo trip" in listed, listed
            lines = listed.splitlines()
            home_at = next(line for line in lines if "Weather at home" in line).split()[0]
            typed = f"› /open {home_at}"
            before = term.screen(history=True).count(typed)  # an earlier /open may have been the same
            term.type(f"/open {home_at}")
            term.send("Enter")
            opened = term.wait_for(
                lambda s: s.count(typed) > before and "Rain tomorrow." in s.rsplit(typed, 1)[1]
            ).rsplit(typed, 1)[1]
            assert "that one is shown now" not in opened and "Weather at home" in opened, opened
        finally:
            term.close()
        with navi.client() as http:  # the switch is the session's: the next message goes on that branch
            again = [m["content"] for m in http.get(f"/sessions/{trip}").json()["messages"]]
    assert again[0] == "Book the zeppelin to Oslo" and again[-1] == "Sunny.", again


def test_a_hit_on_another_branch_while_a_reply_runs_there_opens_what_is_answered(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    """The branch cannot change under a running reply (409 busy): said, and the conversation opens
    on the version being answered, whose reply is followed; nothing is switched."""
    script = use_script(fake_server)
    script.turn("Booked the zeppelin.", "Booked the train.")
    script.turn(Reply(text="Slowly: " + " ".join(f"w{i}" for i in range(60)), chunk_chars=3, delay=0.1))
    with live_navi(tmp_path, fake_server, planning_enabled=False) as navi:
        trip, old = talk(navi, "Oslo trip", ["Book the zeppelin to Oslo"])
        with navi.client() as http:
            edit = http.post(
                f"/sessions/{trip}/messages/{old[0]['id']}/edit", json={"content": "Book the train"}
            )
            assert edit.status_code == 200, edit.text

        def slow_turn() -> None:
            with navi.client() as http:
                http.post(f"/sessions/{trip}/messages", json={"content": "And slowly?"}, timeout=60)

        term = Terminal([*NAVI, "chat", "--new"], env_for(navi, tmp_path))
        running = threading.Thread(target=slow_turn)
        try:
            term.wait_for_prompt()
            term.type("/search zeppelin")
            term.send("Enter")
            term.wait_for("that holds the message")
            running.start()
            with navi.client() as http:  # the reply has started
                deadline = time.monotonic() + 10
                while not http.get(f"/sessions/{trip}").json().get("active"):
                    assert time.monotonic() < deadline, "the slow reply never started"
                    time.sleep(0.05)
            term.type("/open 1")
            term.send("Enter")
            opened = term.wait_for("w59").rsplit("› /open 1", 1)[1]
            assert "✗ a reply is running there: it opens on the version answered" in opened, opened
            assert "Book the train" in opened and "zeppelin" not in opened, opened
        finally:
            running.join(30)
            term.close()
        with navi.client() as http:
            shown = [m["content"] for m in http.get(f"/sessions/{trip}").json()["messages"]]
    assert shown[:3] == ["Book the train", "Booked the train.", "And slowly?"], shown


def test_a_hit_line_marks_the_matches_and_neutralises_control_characters() -> None:
    hit = {
        "session_name": "Evil\x1b[2Jname",
        "created_at": "2026-03-01T10:01:00+00:00",
        "role": "assistant",
        "snippet": "Three hotels\x07 in Lisbon",
        "highlights": [[6, 12], [17, 23], [90, 95]],  # the last is out of range: ignored
    }
    line = hit_line(4, hit)
    assert "\x1b" not in line.plain and "\x07" not in line.plain
    assert line.plain.startswith("  4  Evil�[2Jname · 2026-03-01 ") and line.plain.endswith(
        " · Navi\n     Three hotels� in Lisbon"
    )
    marked = [line.plain[s.start : s.end] for s in line.spans if s.style == MARK]
    assert marked == ["hotels", "Lisbon"]
