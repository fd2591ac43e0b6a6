"""`navi schedules` on the database and against a live Navi, and the `schedule` tool through the
agent loop: a scripted model calls it, the reminder is stored for the turn's user in this session,
the tool's answer echoes the time understood in the user's zone, and the reminder then runs."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import httpx
from typer.testing import CliRunner

from navi.cli.main import _register, app
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.server_helpers import live_navi, use_script
from tests.test_schedules_api import _until_status

_register()
runner = CliRunner()


def test_schedules_command_without_a_server(tmp_path: Path) -> None:
    env = {"DB_PATH": str(tmp_path / "navi.db"), "LOG_LEVEL": "WARNING", "TZ": "Europe/Berlin"}

    def cli(*args: str, **more: str) -> object:
        return runner.invoke(app, ["schedules", *args], env={**env, **more})

    assert cli("list").stdout.strip() == "No schedules yet."
    added = cli("add", "Check the disks", "--cron", "0 3 * * *", "--title", "Disks")
    assert added.exit_code == 0, added.output
    sid = added.stdout.split()[1].rstrip(":")
    assert "Disks — cron '0 3 * * *', next" in added.stdout and "(Europe/Berlin)" in added.stdout
    bad = cli("add", "x", "--cron", "0 3 * * *", "--every", "60")
    assert bad.exit_code == 1 and "exactly one of cron, every_seconds or at" in bad.stderr
    assert cli("add", "x", "--at", "2001-01-01T00:00").exit_code == 1
    unknown = cli("add", "x", "--every", "60", "--user", "bob")
    assert unknown.exit_code == 2 and "no user 'bob'" in unknown.stderr
    assert runner.invoke(app, ["users", "add", "bob"], env=env).exit_code == 0
    for_bob = cli("add", "x", "--every", "60", "--user", "bob")
    assert for_bob.exit_code == 0, for_bob.output
    bobs = for_bob.stdout.split()[1].rstrip(":")

    # Each user's own: the owner's by default, bob's with --user bob; another's id is not found.
    listed = json.loads(cli("list", "--json").stdout)
    assert [(s["title"], s["owner"]) for s in listed] == [("Disks", "local")]
    assert [s["id"] for s in json.loads(cli("list", "--json", "--user", "bob").stdout)] == [bobs]
    assert cli("pause", bobs).exit_code == 1 and cli("remove", bobs).exit_code == 1
    assert cli("pause", sid).stdout.startswith(f"paused {sid}: Disks")
    assert json.loads(cli("list", "--json").stdout)[0]["paused"] is True
    assert " paused " in cli("list").stdout.splitlines()[0]
    assert cli("resume", sid).stdout.startswith(f"resumed {sid}: Disks — cron")
    assert cli("remove", sid).stdout.strip() == f"removed {sid}"
    missing = cli("remove", sid)
    assert missing.exit_code == 1 and f"no schedule '{sid}'" in missing.stderr
    assert cli("pause", sid).exit_code == 1
    assert cli("list").stdout.strip() == "No schedules yet."
    assert cli("remove", bobs, "--user", "bob").stdout.strip() == f"removed {bobs}"

    # --deliver CHANNEL:TO: each answer also goes to a channel address (a Matrix room id has colons),
    # on a channel this Navi has set up.
    unset = cli("add", "Brief me", "--every", "1h", "--deliver", "Matrix:!room:example.org")
    assert unset.exit_code == 1 and "deliver to matrix: that channel is not set up" in unset.stderr
    assert "NAVI_MATRIX_HOMESERVER" in unset.stderr and "No schedules yet." in cli("list").stdout
    matrix = {"NAVI_MATRIX_HOMESERVER": "http://127.0.0.1:9", "NAVI_MATRIX_USER": "@navi:example.org"}
    mailed = cli("add", "Brief me", "--every", "1h", "--deliver", "Matrix:!room:example.org", **matrix)
    assert mailed.exit_code == 0, mailed.output
    assert mailed.stdout.rstrip().endswith("; answers also go to matrix:!room:example.org")
    assert json.loads(cli("list", "--json").stdout)[0]["deliver"] == {
        "channel": "matrix",
        "to": "!room:example.org",
    }
    assert cli("list").stdout.rstrip().endswith(" → matrix:!room:example.org")
    for bad in ("ana@example.org", ":ana@example.org", "email:", "e mail:ana@example.org"):
        refused = cli("add", "x", "--every", "60", "--deliver", bad)
        assert refused.exit_code != 0 and "deliver" in refused.stderr, (bad, refused.output)
    assert len(json.loads(cli("list", "--json").stdout)) == 1  # nothing half-made


def test_schedules_run_asks_the_running_navi(tmp_path: Path, fake_server: FakeModelServer) -> None:
    use_script(fake_server).turn("Briefing: all quiet.")
    with live_navi(tmp_path, fake_server) as navi:
        env = {
            "NAVI_PORT": navi.url.rsplit(":", 1)[1],
            "DB_PATH": str(tmp_path / "navi.db"),
            "LOG_LEVEL": "ERROR",
        }
        added = runner.invoke(app, ["schedules", "add", "Brief me", "--cron", "0 7 * * *"], env=env)
        sid = added.stdout.split()[1].rstrip(":")
        started = runner.invoke(app, ["schedules", "run", sid], env=env)
        assert started.exit_code == 0, started.output
        assert started.stdout.startswith("started run ") and sid in started.stdout
        with navi.client() as http:
            for _ in range(300):
                runs = http.get(f"/schedules/{sid}").json()["runs"]
                if runs and runs[0]["status"] == "ok":
                    break
                time.sleep(0.05)
            assert runs[0]["preview"] == "Briefing: all quiet." and runs[0]["manual"] is True
        missing = runner.invoke(app, ["schedules", "run", "nope"], env=env)
        assert missing.exit_code == 1 and "no schedule 'nope'" in missing.stderr


async def test_the_schedule_tool_through_the_agent_loop(tmp_path: Path, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn(
        Reply(
            tool_calls=[
                ScriptedCall(
                    "schedule",
                    {
                        "action": "set",
                        "prompt": "Remind the user to call Anna",
                        "at": "tomorrow at 9",
                        "title": "Call Anna",
                        "deliver": {"channel": "email", "to": "ana@example.org"},
                    },
                )
            ]
        ),
        "Done: I will remind you tomorrow at 9.",
        Reply(
            tool_calls=[
                ScriptedCall(
                    "schedule",
                    # Relative to when the tool runs, however long the server took to start.
                    {"action": "set", "prompt": "Say: stretch!", "at": "in 3 seconds"},
                )
            ]
        ),
        "Set.",
        "Stretch!",  # the reminder's own run
    )
    mail = {  # set up, so the answer may go by mail (the server is never reached here)
        "navi_email_address": "navi@example.org",
        "navi_email_imap_host": "127.0.0.1",
        "navi_email_imap_port": 9,
        "navi_email_smtp_host": "127.0.0.1",
        "navi_email_smtp_port": 9,
        "navi_email_poll_seconds": 3600,
    }
    with live_navi(tmp_path, fake_server, tz="Asia/Tokyo", navi_schedule_poll_seconds=0.2, **mail) as navi:
        session = navi.new_session()
        async with httpx.AsyncClient(base_url=navi.url, headers=navi.auth, timeout=30) as http:
            answer = await http.post(
                f"/sessions/{session}/messages", json={"content": "remind me tomorrow at 9 to call Anna"}
            )
            assert answer.json()["content"] == "Done: I will remind you tomorrow at 9."
            stored = (await http.get(f"/sessions/{session}")).json()["messages"]
            result = next(m for m in stored if m["role"] == "tool")["content"]
            tomorrow = datetime.now(ZoneInfo("Asia/Tokyo")) + timedelta(days=1)
            assert result.startswith(f"Reminder set for {tomorrow:%a %d %b %Y} 09:00 (Asia/Tokyo): Call Anna")
            assert "and the answer is sent to email:ana@example.org" in result
            made = (await http.get("/schedules")).json()
            assert len(made) == 1 and made[0]["session_id"] == session and made[0]["owner"] == "local"
            assert made[0]["profile_id"] == "secretary" and made[0]["kind"] == "at"
            assert made[0]["deliver"] == {"channel": "email", "to": "ana@example.org"}
            at = datetime.fromisoformat(made[0]["at"]).astimezone(ZoneInfo("Asia/Tokyo"))
            assert (at.date(), at.hour, at.minute) == (tomorrow.date(), 9, 0)

            await http.post(
                f"/sessions/{session}/messages", json={"content": "and tell me to stretch in a second"}
            )
            soon_id = (await http.get("/schedules")).json()[1]["id"]
            detail = await _until_status(http, soon_id, "ok")
            assert detail["runs"][0]["session_id"] == session and detail["runs"][0]["preview"] == "Stretch!"
            texts = [m["content"] for m in (await http.get(f"/sessions/{session}")).json()["messages"]]
            assert texts[-2:] == ["Say: stretch!", "Stretch!"]  # the reminder ran in this conversation
