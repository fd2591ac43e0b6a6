"""Archives through REST and the `navi sessions` command."""

from __future__ import annotations

import asyncio
import gzip
import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from navi.api.app import create_app
from navi.cli.main import _register, app
from navi.compose import build_runtime
from navi.llm.messages import Message, ToolCall
from tests.server_helpers import app_client, live_navi, use_script

_register()
runner = CliRunner()


async def seed(settings) -> str:
    rt = await build_runtime(settings)
    try:
        s = await rt.sessions.create("server_admin", name="Disk check")
        call = ToolCall(name="ssh_exec", arguments={"host": "nas", "command": "df -h"})
        msgs = [
            Message.user("Is the NAS full?"),
            Message.assistant("", tool_calls=[call]),
            Message.tool(
                "/dev/sda1 91%",
                tool_call_id=call.id,
                name="ssh_exec",
                metadata={"status": "ok", "duration_ms": 240},
            ),
            Message.assistant("It is 91% full."),
        ]
        await rt.sessions.append(s.id, display=msgs, context=msgs, context_token_count=88)
        return s.id
    finally:
        await rt.aclose()


async def test_rest_export_then_import(make_settings) -> None:
    settings = make_settings()
    sid = await seed(settings)
    with app_client(create_app(settings)) as client:
        resp = client.get(f"/sessions/{sid}/export")
        assert resp.status_code == 200
        archive = resp.json()
        assert archive["session"]["profile_id"] == "server_admin"
        assert "Mode: server administrator" in archive["session"]["system_prompt"]
        assert archive["session"]["model"] == settings.ollama_default_model
        created = client.post("/sessions/import", json=archive)
        assert created.status_code == 201
        new_id = created.json()["session_id"]
        assert new_id != sid and created.json()["messages"] == 4
        again = client.get(f"/sessions/{new_id}/export").json()
        assert again["messages"] == archive["messages"]
        assert again["context"] == archive["context"]
        assert client.get("/sessions/00000000-0000-4000-8000-000000000000/export").status_code == 404
        bad = client.post("/sessions/import", json={"schema_version": "session-archive/v1", "session": {}})
        assert bad.status_code == 422
        assert "required property" in bad.json()["detail"]
        assert (
            client.post(
                "/sessions/import", content=b"{not json", headers={"content-type": "application/json"}
            ).status_code
            == 422
        )


def test_cli_list_export_import(make_settings, tmp_path: Path, monkeypatch) -> None:
    settings = make_settings()
    monkeypatch.setenv("DB_PATH", settings.db_path)
    sid = asyncio.run(seed(settings))
    listed = runner.invoke(app, ["sessions", "list"])
    assert listed.exit_code == 0 and sid in listed.output and "Disk check" in listed.output
    out = tmp_path / "disk.json"
    exported = runner.invoke(app, ["sessions", "export", sid, "-o", str(out)])
    assert exported.exit_code == 0, exported.output
    assert json.loads(out.read_text())["session"]["name"] == "Disk check"
    imported = runner.invoke(app, ["sessions", "import", str(out)])
    assert imported.exit_code == 0, imported.output
    new_id = imported.stdout.split()[1]
    as_json = json.loads(runner.invoke(app, ["sessions", "list", "--json"]).stdout)
    assert {s["id"] for s in as_json} == {sid, new_id}
    assert all(s["message_count"] == 4 for s in as_json)
    missing = runner.invoke(app, ["sessions", "export", "00000000-0000-4000-8000-000000000000"])
    assert missing.exit_code == 1 and "no session" in missing.output
    (tmp_path / "junk.json").write_text("[1, 2]")
    junk = runner.invoke(app, ["sessions", "import", str(tmp_path / "junk.json")])
    assert junk.exit_code == 1 and "JSON object" in junk.output
    assert runner.invoke(app, ["sessions", "import", str(tmp_path / "absent.json")]).exit_code == 1


def test_cli_archives_named_gz_are_gzipped_both_ways(make_settings, tmp_path: Path, monkeypatch) -> None:
    settings = make_settings()
    monkeypatch.setenv("DB_PATH", settings.db_path)
    sid = asyncio.run(seed(settings))
    packed = tmp_path / "disk.json.gz"
    exported = runner.invoke(app, ["sessions", "export", sid, "-o", str(packed)])
    assert exported.exit_code == 0, exported.output
    raw = packed.read_bytes()
    assert raw[:2] == b"\x1f\x8b" and packed.stat().st_mode & 0o777 == 0o600
    archive = json.loads(gzip.decompress(raw))
    assert archive["session"]["name"] == "Disk check" and len(archive["messages"]) == 4
    imported = runner.invoke(app, ["sessions", "import", str(packed)])
    assert imported.exit_code == 0, imported.output
    new_id = imported.stdout.split()[1]
    plain = runner.invoke(app, ["sessions", "export", new_id])
    assert json.loads(plain.stdout)["messages"] == archive["messages"]

    def refused(name: str, data: bytes) -> Any:
        (tmp_path / name).write_bytes(data)
        return runner.invoke(app, ["sessions", "import", str(tmp_path / name)])

    for name, data in (
        ("cut.json.gz", raw[: len(raw) // 2]),  # ends before the end of the stream
        ("plain.json.gz", b'{"schema_version": "session-archive/v1"}'),  # not gzip at all
        ("flipped.json.gz", raw[:20] + bytes(b ^ 0xFF for b in raw[20:40]) + raw[40:]),
    ):
        bad = refused(name, data)
        assert bad.exit_code == 2, (name, bad.output)
        lines = bad.stderr.strip().splitlines()
        assert len(lines) == 1 and "is not a readable gzip file" in lines[0] and "Traceback" not in bad.output
    named_json = refused("packed.json", raw)  # by the name: a .json file is read as JSON
    assert named_json.exit_code == 1 and "not JSON" in named_json.stderr
    monkeypatch.setenv("NAVI_IMPORT_MAX_MB", "1")  # a small file that unpacks beyond the limit
    bomb = refused("bomb.json.gz", gzip.compress(b" " * (2 * 1024 * 1024)))
    assert bomb.exit_code == 1 and "larger than the 1 MB limit" in bomb.stderr
    listed = json.loads(runner.invoke(app, ["sessions", "list", "--json"]).stdout)
    assert {s["id"] for s in listed} == {sid, new_id}  # nothing refused made a session


async def test_rest_history_windows(make_settings) -> None:
    settings = make_settings()
    sid = await seed(settings)
    rt = await build_runtime(settings)
    try:
        await rt.sessions.replace_context(
            sid, [Message.user("Summary: NAS disk check", is_summary=True)], context_token_count=10
        )
    finally:
        await rt.aclose()
    with app_client(create_app(settings)) as client:
        last = client.get(f"/sessions/{sid}/messages", params={"last": 1}).json()
        assert [m["content"] for m in last["messages"]] == ["It is 91% full."] and last["total"] == 4
        budget = client.get(f"/sessions/{sid}/messages", params={"token_budget": 40}).json()
        assert budget["summary_prepended"] is True
        assert budget["messages"][0]["content"] == "Summary: NAS disk check"
        plain = client.get(
            f"/sessions/{sid}/messages", params={"token_budget": 40, "include_summary": "false"}
        ).json()
        assert plain["summary_prepended"] is False and plain["messages"]
        assert all(m["content"] != "Summary: NAS disk check" for m in plain["messages"])
        everything = client.get(f"/sessions/{sid}/messages").json()
        assert len(everything["messages"]) == 4 and everything["summary_prepended"] is False
        assert client.get(f"/sessions/{sid}/messages", params={"last": -1}).status_code == 422
        assert client.get(f"/sessions/{sid}/messages", params={"since": "not-a-date"}).status_code == 422


ABSTRACTCORE = Path(__file__).parent / "fixtures" / "abstractcore-session.json"


def test_an_abstractcore_archive_through_rest(tmp_path: Path, fake_server) -> None:
    """Imported, continued with the history the model saw, and exported with what it brought."""
    original = json.loads(ABSTRACTCORE.read_text(encoding="utf-8"))
    script = use_script(fake_server)
    script.turn("Yes: sow it indoors now and plant it out in late May.")
    with live_navi(tmp_path, fake_server) as navi, navi.client() as http:
        created = http.post("/sessions/import", json=original)
        assert created.status_code == 201, created.text
        sid = created.json()["session_id"]
        assert created.json()["messages"] == 7
        detail = http.get(f"/sessions/{sid}").json()
        assert detail["profile_id"] == navi.runtime.profiles.default_id  # AbstractCore has no profile
        context = http.get(f"/sessions/{sid}/context").json()["messages"]
        assert [m["content"] for m in context] == [m["content"] for m in original["messages"][1:]]
        analysis = http.get(f"/sessions/{sid}/analysis").json()
        assert all(analysis[k] == original["session"][k] for k in ("summary", "assessment", "facts"))

        sent = http.post(f"/sessions/{sid}/messages", json={"content": "Can I start basil indoors?"})
        assert sent.status_code == 200, sent.text
        turn = script.of_kind("turn")[-1]
        assert [m.role for m in turn.messages].count("system") == 1
        # Navi's own prompt, with the archive's after it as the session's own layer.
        system = turn.system_text
        assert system.startswith("You are Navi")
        assert system.index("Mode: personal secretary") < system.index("gardening assistant")
        said = "\n".join(m.content or "" for m in turn.messages)
        assert "When should I plant tomatoes on my balcony in Lyon?" in said and '"tonight_low_c": 9' in said

        out = http.get(f"/sessions/{sid}/export").json()
    meta = out["session"]
    assert meta["project"] == original["session"]["project"]
    assert meta["assessment"] == original["session"]["assessment"]
    assert out["messages"][1]["metadata"] == original["messages"][1]["metadata"]
    assert out["messages"][3]["metadata"]["stderr"] is None
    assert [m["content"] for m in out["messages"][-2:]] == [
        "Can I start basil indoors?",
        "Yes: sow it indoors now and plant it out in late May.",
    ]


def test_an_abstractcore_archive_through_the_cli(make_settings, tmp_path: Path, monkeypatch) -> None:
    settings = make_settings()
    monkeypatch.setenv("DB_PATH", settings.db_path)
    imported = runner.invoke(app, ["sessions", "import", str(ABSTRACTCORE)])
    assert imported.exit_code == 0, imported.output
    assert imported.stdout.startswith("imported ") and "(7 messages)" in imported.stdout
    new_id = imported.stdout.split()[1]
    exported = runner.invoke(app, ["sessions", "export", new_id])
    assert exported.exit_code == 0, exported.output
    out = json.loads(exported.stdout)
    original = json.loads(ABSTRACTCORE.read_text(encoding="utf-8"))
    assert out["session"]["profile_id"] == "secretary"
    assert out["session"]["project"] == original["session"]["project"]
    assert out["session"]["facts"] == original["session"]["facts"]
    assert out["messages"][1]["metadata"]["location"] == "Lyon, France"
    assert len(out["context"]) == 6 and all("ref" in c for c in out["context"])
