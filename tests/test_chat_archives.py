"""`navi chat` in a real terminal (tmux): `/load FILE` imports a session-archive/v1 file and opens
it; `/facts` and `/judge` ask the server's analysis of the conversation and show it."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

from navi.cli.chat.archives import Unreadable, read_archive
from navi.testing.fake_server import FakeModelServer
from tests.helpers.terminal import NAVI, Terminal
from tests.server_helpers import live_navi, talk, use_script
from tests.test_chat_keys import env_for

ABSTRACTCORE = Path(__file__).parent / "fixtures" / "abstractcore-session.json"


def test_load_imports_an_archive_and_opens_it(tmp_path: Path, fake_server: FakeModelServer) -> None:
    packed = tmp_path / "garden.json.gz"
    packed.write_bytes(gzip.compress(ABSTRACTCORE.read_bytes()))
    with live_navi(tmp_path, fake_server, planning_enabled=False) as navi:
        term = Terminal([*NAVI, "chat", "--new"], env_for(navi, tmp_path))
        try:
            term.wait_for_prompt()
            term.type("/load")
            term.send("Enter")
            term.wait_for("✗ /load FILE: a session-archive/v1 file")
            term.type(f"/load {tmp_path / 'nothing.json'}")
            term.send("Enter")
            term.wait_for(f"✗ no file {tmp_path / 'nothing.json'}")
            term.type(f"/load {packed}")
            term.send("Enter")
            term.wait_for("Basil wants it warmer still")  # opened: its last exchanges are drawn
            shown = term.screen(history=True).split("Loaded garden.json.gz: 7 messages", 1)[1]
            assert "untitled conversation · Personal Secretary" in shown, shown
            assert "When should I plant tomatoes on my balcony in Lyon?" in shown, shown
        finally:
            term.close()
        with navi.client() as http:
            (listed,) = http.get("/sessions").json()
            assert listed["message_count"] == 7
            context = http.get(f"/sessions/{listed['id']}/context").json()
            assert "You are a helpful gardening assistant." in context["system_prompt"]


def test_facts_and_judge_show_the_servers_analysis(tmp_path: Path, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn("The NAS disk /dev/sda1 is 91% full; 40 GB are left.")
    script.facts('{"facts": [["/dev/sda1", "is", "91% full"], ["the NAS", "has free", "40 GB"]]}')
    script.assess(
        '{"overall_score": 4, "judge_summary": "Accurate and short.", "strengths": ["exact numbers"], '
        '"actionable_feedback": ["suggest what to delete"]}'
    )
    with live_navi(tmp_path, fake_server, planning_enabled=False) as navi:
        sid, _ = talk(navi, "Disk check", ["Is the NAS full? Check /dev/sda1."])
        term = Terminal([*NAVI, "chat", "--new"], env_for(navi, tmp_path))
        try:
            term.wait_for_prompt()
            term.type("/facts")
            term.send("Enter")
            term.wait_for("✗ nothing to extract facts from yet")
            term.type(f"/open {sid}")
            term.send("Enter")
            term.wait_for_prompt("40 GB are left.")
            term.type("/facts")
            term.send("Enter")
            facts = term.wait_for("Facts (2):").split("› /facts")[-1]
            term.wait_for("the NAS has free 40 GB")
            facts = term.screen(history=True).split("› /facts")[-1]
            assert "• /dev/sda1 is 91% full" in facts, facts
            term.type("/judge accuracy, brevity")
            term.send("Enter")
            judged = term.wait_for("suggest what to delete").split("› /judge")[-1]
            assert "Assessment: 4/5  (accuracy, brevity)" in judged, judged
            assert "Accurate and short." in judged and "• exact numbers" in judged
            assert "To do better:" in judged
        finally:
            term.close()
        (facts_asked,) = script.of_kind("facts")
        assert "/dev/sda1" in facts_asked.last_user_text
        with navi.client() as http:  # kept with the conversation: the next export carries them
            analysis = http.get(f"/sessions/{sid}/analysis").json()
        assert analysis["facts"]["simple_triples"][0] == ["/dev/sda1", "is", "91% full"]
        assert analysis["assessment"]["criteria"] == ["accuracy", "brevity"]


def test_read_archive_says_what_is_wrong(tmp_path: Path) -> None:
    plain = tmp_path / "a.json"
    shutil.copy(ABSTRACTCORE, plain)
    assert read_archive(f"file://{plain}") == (plain, ABSTRACTCORE.read_bytes())
    (tmp_path / "bad.json.gz").write_bytes(b"not gzip")
    for name, words in [
        ("bad.json.gz", "not a readable gzip file"),
        ("missing.json", "no file"),
        ("", "folder"),
    ]:
        try:
            read_archive(str(tmp_path / name))
        except Unreadable as exc:
            assert words in str(exc), exc
        else:
            raise AssertionError(f"{name} was read")
