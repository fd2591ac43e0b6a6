"""Issue 49, items 15 and 16 over REST and the CLI: a ChatGPT or Claude export as the `.zip` the
service sends (conversations.json beside the account's other files) and a Navi archive through
one `from=auto` import; a conversation exported as Markdown and as PDF (its text read back with
the documents' PDF reader); folders, the archive, temporary chats — each per user (another user's
conversation is 404) and on both stores."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from navi.archive.markdown import conversation_markdown
from navi.cli.main import _register, app
from navi.documents.extract import extract
from navi.llm.messages import Message
from navi.sessions import temporary
from navi.sessions.store import SessionStore
from navi.sessions.unpack import ExportError, load_json
from navi.testing.fake_server import FakeModelServer
from tests.helpers.session_stores import STORES, opened_store
from tests.server_helpers import live_navi, use_script

_register()
runner = CliRunner()
FIXTURES = Path(__file__).parent / "fixtures"
CHATGPT = FIXTURES / "chatgpt" / "conversations.json"
CLAUDE = FIXTURES / "claude" / "conversations.json"


def export_zip(conversations: Path, *, folder: str = "") -> bytes:
    """A data export shaped as ChatGPT sends it: conversations.json among the account's files."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(f"{folder}user.json", json.dumps({"id": "user-abc", "email": "ana@example.org"}))
        z.writestr(f"{folder}chat.html", "<html><body>Your conversations</body></html>")
        z.writestr(f"{folder}message_feedback.json", "[]")
        z.writestr(f"{folder}file-Xyz123-photo.png", b"\x89PNG\r\n\x1a\n" + bytes(64))
        z.writestr(f"{folder}conversations.json", conversations.read_bytes())
    return out.getvalue()


def test_a_zip_is_read_and_a_bad_file_is_one_sentence(tmp_path: Path) -> None:
    data = load_json(export_zip(CHATGPT, folder="export/"), "not a ChatGPT export")
    assert isinstance(data, list) and data == json.loads(CHATGPT.read_text(encoding="utf-8"))
    with pytest.raises(ExportError, match="neither JSON text nor a zip"):
        load_json(b"\x87\xff\x00binary", "not a ChatGPT export")
    empty = io.BytesIO()
    with zipfile.ZipFile(empty, "w") as z:
        z.writestr("user.json", "{}")
    with pytest.raises(ExportError, match=r"holds no conversations\.json"):
        load_json(empty.getvalue(), "not a ChatGPT export")
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("conversations.json", b"[" + b" " * 300_000 + b"]")
    with pytest.raises(ExportError, match="unpacks to more than"):
        load_json(bomb.getvalue(), "not a ChatGPT export", max_bytes=100_000)
    # The CLI: the zip as ChatGPT sends it is imported (it refused it with a codec's message).
    (tmp_path / "export.zip").write_bytes(export_zip(CHATGPT))
    env = {"DB_PATH": str(tmp_path / "navi.db"), "LOG_LEVEL": "WARNING"}
    done = runner.invoke(
        app, ["sessions", "import", "--from", "chatgpt", str(tmp_path / "export.zip")], env=env
    )
    assert done.exit_code == 0, done.output
    assert (
        done.stdout.splitlines()[-1] == "imported 2 conversations from ChatGPT (6 messages); 0 already there"
    )
    (tmp_path / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x87" + bytes(32))
    refused = runner.invoke(
        app, ["sessions", "import", "--from", "chatgpt", str(tmp_path / "photo.png")], env=env
    )
    assert (
        refused.exit_code == 1 and "neither JSON text nor a zip holding conversations.json" in refused.stderr
    )
    assert "codec" not in refused.stderr


@pytest.fixture(params=STORES)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionStore]:
    async with opened_store(request.param, tmp_path, request) as made:
        yield made


async def test_folders_archive_and_temporary_on_both_stores(store: SessionStore) -> None:
    kept = await store.create("secretary", owner="ana")
    temp = await store.create("secretary", owner="ana", temporary=True)
    assert await store.set_place(kept.id, owner="ana", folder="Trips", archived=True)
    assert not await store.set_place(kept.id, owner="bob", folder="Mine")  # not bob's
    listed = {s.id: s for s in await store.list(owner="ana")}
    assert (listed[kept.id].folder, listed[kept.id].archived, listed[kept.id].temporary) == (
        "Trips",
        True,
        False,
    )
    assert listed[temp.id].temporary
    assert await store.set_place(kept.id, owner="ana", archived=False)  # the folder stays
    got = await store.get(kept.id)
    assert got is not None and (got.folder, got.archived) == ("Trips", False)
    assert await store.set_place(kept.id, owner="ana", folder=None)
    got = await store.get(kept.id)
    assert got is not None and got.folder is None
    # A temporary chat no page deleted goes once idle (the clock moved, not waited for).
    assert await temporary.sweep(store, idle_hours=1) == 0
    assert await temporary.sweep(store, idle_hours=-1) == 1
    assert [s.id for s in await store.list(owner="ana")] == [kept.id]


async def test_a_folder_is_renamed_for_its_owner_alone_on_each_store(store: SessionStore) -> None:
    trip = await store.create("secretary", owner="ana")
    old = await store.create("secretary", owner="ana")
    home = await store.create("secretary", owner="ana")
    bobs = await store.create("secretary", owner="bob")
    for sid, owner, folder in ((trip.id, "ana", "Trips"), (old.id, "ana", "Trips"), (home.id, "ana", "Home")):
        assert await store.set_place(sid, owner=owner, folder=folder)
    assert await store.set_place(old.id, owner="ana", archived=True)
    assert await store.set_place(bobs.id, owner="bob", folder="Trips")
    seen: list[str] = []
    store.on_change(lambda change: seen.append(change.session_id))
    assert sorted(await store.rename_folder("Trips", "Travel", owner="ana")) == sorted([trip.id, old.id])
    assert sorted(seen) == sorted([trip.id, old.id])  # each move announced (open pages follow)
    folders = {s.id: s.folder for s in await store.list()}
    assert folders == {trip.id: "Travel", old.id: "Travel", home.id: "Home", bobs.id: "Trips"}
    assert await store.rename_folder("Travel", "Home", owner="ana")  # into an existing one: merged
    assert {s.folder for s in await store.list(owner="ana")} == {"Home"}
    assert await store.rename_folder("Nowhere", "X", owner="ana") == []
    assert await store.rename_folder("Home", "Mine", owner="bob") == []  # ana's folder, not bob's
    assert {s.folder for s in await store.list(owner="ana")} == {"Home"}


def test_markdown_of_a_conversation() -> None:
    from navi.sessions.models import Session

    at = datetime(2026, 12, 6, 14, 3, tzinfo=UTC)
    session = Session(
        id="0" * 8 + "-0000-4000-8000-" + "0" * 12,
        profile_id="secretary",
        name="Trip",
        created_at=at,
        messages=[
            Message.user("# Packing?", created_at=at),
            Message.assistant(None, created_at=at),  # a tool call's turn: nothing a person saw
            Message.tool("ok", tool_call_id="c", name="x", created_at=at),
            Message.assistant(
                "## List\n\n- socks\n\n```\n# not a heading\n```", created_at=at + timedelta(minutes=1)
            ),
        ],
    )
    assert conversation_markdown(session) == (
        "# Trip\n\nStarted 2026-12-06 14:03 UTC.\n\n"
        "### You · 2026-12-06 14:03 UTC\n\n#### Packing?\n\n"
        "### Navi · 2026-12-06 14:04 UTC\n\n##### List\n\n- socks\n\n```\n# not a heading\n```\n"
    )


def test_import_export_and_places_over_rest(tmp_path: Path, fake_server: FakeModelServer) -> None:
    use_script(fake_server).turn("Pack **light layers** and good walking shoes — and a Привет.")
    with live_navi(tmp_path, fake_server) as navi, navi.client() as http:
        upload = {"file": ("chatgpt-export.zip", export_zip(CHATGPT), "application/zip")}
        done = http.post("/sessions/import", params={"from": "auto"}, files=upload)
        assert done.status_code == 201, done.text
        assert done.json()["source"] == "chatgpt" and len(done.json()["imported"]) == 2
        claude = http.post(
            "/sessions/import",
            params={"from": "auto"},
            content=export_zip(CLAUDE),
            headers={"Content-Type": "application/zip"},
        )
        assert claude.status_code == 201 and claude.json()["source"] == "claude", claude.text
        sid = navi.new_session()
        asked = http.post(f"/sessions/{sid}/messages", json={"content": "What to pack for Lisbon?"})
        assert asked.status_code == 200, asked.text
        http.patch(f"/sessions/{sid}", json={"name": "Lisbon"})
        archive = http.get(f"/sessions/{sid}/export").json()
        back = http.post(
            "/sessions/import",
            params={"from": "auto"},
            files={"file": ("a.json", json.dumps(archive).encode())},
        )
        assert back.status_code == 201 and back.json()["source"] == "navi", back.text
        assert (
            back.json()["imported"][0]["name"] == "Lisbon" and back.json()["imported"][0]["session_id"] != sid
        )
        odd = http.post("/sessions/import", params={"from": "auto"}, files={"file": ("x.json", b'{"a": 1}')})
        assert odd.status_code == 422 and odd.json()["code"] == "bad_archive"

        markdown = http.get(f"/sessions/{sid}/export", params={"format": "markdown"})
        assert markdown.status_code == 200 and markdown.headers["content-type"].startswith("text/markdown")
        assert 'filename="navi-Lisbon-' in markdown.headers["content-disposition"]
        text = markdown.text
        assert text.startswith("# Lisbon\n") and "### You · " in text and "What to pack for Lisbon?" in text
        assert "Pack **light layers** and good walking shoes" in text
        pdf = http.get(f"/sessions/{sid}/export", params={"format": "pdf"})
        assert pdf.status_code == 200 and pdf.headers["content-type"] == "application/pdf"
        read = " ".join(s.text for s in extract(pdf.content, "x.pdf").sections)
        assert "Lisbon" in read and "Pack light layers and good walking shoes" in read and "Привет" in read
        assert http.get(f"/sessions/{sid}/export", params={"format": "docx"}).status_code == 422

        # Folders and the archive: the list leaves archived ones out, `archived=true` lists them.
        moved = http.patch(f"/sessions/{sid}", json={"folder": "  Trips  ", "archived": True})
        assert moved.status_code == 200 and (moved.json()["folder"], moved.json()["archived"]) == (
            "Trips",
            True,
        )
        assert sid not in [s["id"] for s in http.get("/sessions").json()]
        assert [s["id"] for s in http.get("/sessions", params={"archived": True}).json()] == [sid]
        http.patch(f"/sessions/{sid}", json={"archived": False})
        listed = {s["id"]: s for s in http.get("/sessions").json()}
        assert listed[sid]["folder"] == "Trips" and not listed[sid]["archived"]
        assert http.patch(f"/sessions/{sid}", json={"folder": "x" * 101}).status_code == 422

        # A temporary chat: never listed, never read for memory.
        made = http.post("/sessions", json={"temporary": True}).json()
        assert made["temporary"] is True
        assert made["session_id"] not in [s["id"] for s in http.get("/sessions").json()]

        # Another user: 404 for every new surface, and their own import lands with them only.
        added = runner.invoke(
            app, ["users", "add", "bob"], env={"DB_PATH": str(navi.settings.db_path), "LOG_LEVEL": "WARNING"}
        )
        bob = {"Authorization": f"Bearer {added.stdout.strip()}"}
        with httpx.Client(base_url=navi.url, headers=bob, timeout=30) as as_bob:
            for fmt in ("markdown", "pdf", "json"):
                gone = as_bob.get(f"/sessions/{sid}/export", params={"format": fmt})
                assert gone.status_code == 404 and gone.json()["code"] == "session_not_found"
            assert as_bob.patch(f"/sessions/{sid}", json={"folder": "Bob's"}).status_code == 404
            assert as_bob.patch(f"/sessions/{sid}", json={"archived": True}).status_code == 404
            assert as_bob.get("/sessions", params={"archived": True}).json() == []
            mine = as_bob.post("/sessions/import", params={"from": "auto"}, files=upload)
            assert mine.status_code == 201 and len(mine.json()["imported"]) == 2
        assert http.get(f"/sessions/{sid}").json()["folder"] == "Trips"
        anonymous = httpx.get(f"{navi.url}/sessions/{sid}/export", params={"format": "pdf"})
        assert anonymous.status_code == 401


def test_a_folder_is_renamed_over_rest(tmp_path: Path, fake_server: FakeModelServer) -> None:
    with live_navi(tmp_path, fake_server) as navi, navi.client() as http:
        trip, old, home = navi.new_session(), navi.new_session(), navi.new_session()
        for sid, folder in ((trip, "Trips"), (old, "Trips"), (home, "Home")):
            assert http.patch(f"/sessions/{sid}", json={"folder": folder}).status_code == 200
        assert http.patch(f"/sessions/{old}", json={"archived": True}).status_code == 200
        renamed = http.post("/sessions/folders/rename", json={"folder": "Trips", "to": "  Far   away "})
        assert renamed.status_code == 200, renamed.text
        assert renamed.json() == {"folder": "Far away", "moved": 2}
        assert {s["id"]: s["folder"] for s in http.get("/sessions").json()} == {
            trip: "Far away",
            home: "Home",
        }
        assert http.get(f"/sessions/{old}").json()["folder"] == "Far away"  # archived ones too
        same = http.post("/sessions/folders/rename", json={"folder": "Home", "to": "Home"})
        assert same.json() == {"folder": "Home", "moved": 1}
        for bad in (
            {"folder": "Home", "to": ""},
            {"folder": "Home", "to": "   "},
            {"folder": "Home", "to": "x" * 101},
            {"folder": "", "to": "Y"},
            {"folder": "Home"},
        ):
            refused = http.post("/sessions/folders/rename", json=bad)
            assert refused.status_code == 422, (bad, refused.text)
        missing = http.post("/sessions/folders/rename", json={"folder": "Nowhere", "to": "Y"})
        assert missing.status_code == 404 and "Nowhere" in missing.json()["detail"]

        added = runner.invoke(
            app, ["users", "add", "bob"], env={"DB_PATH": str(navi.settings.db_path), "LOG_LEVEL": "WARNING"}
        )
        bob = {"Authorization": f"Bearer {added.stdout.strip()}"}
        with httpx.Client(base_url=navi.url, headers=bob, timeout=30) as as_bob:
            taken = as_bob.post("/sessions/folders/rename", json={"folder": "Home", "to": "Bob's"})
            assert taken.status_code == 404
        assert http.get(f"/sessions/{home}").json()["folder"] == "Home"
        # Into an existing folder: the two become one.
        merged = http.post("/sessions/folders/rename", json={"folder": "Far away", "to": "Home"})
        assert merged.json() == {"folder": "Home", "moved": 2}
        assert {http.get(f"/sessions/{sid}").json()["folder"] for sid in (trip, old, home)} == {"Home"}
        anonymous = httpx.post(f"{navi.url}/sessions/folders/rename", json={"folder": "Home", "to": "X"})
        assert anonymous.status_code == 401


def test_navi_sessions_move_archive_and_list(tmp_path: Path) -> None:
    env = {"DB_PATH": str(tmp_path / "navi.db"), "LOG_LEVEL": "WARNING"}
    (tmp_path / "export.zip").write_bytes(export_zip(CHATGPT))
    runner.invoke(app, ["sessions", "import", "--from", "chatgpt", str(tmp_path / "export.zip")], env=env)
    listed = json.loads(runner.invoke(app, ["sessions", "list", "--json"], env=env).stdout)
    sid = next(s["id"] for s in listed if s["name"] == "Packing list")
    moved = runner.invoke(app, ["sessions", "move", sid, " Trips "], env=env)
    assert moved.exit_code == 0 and moved.stdout.strip() == f"moved {sid} to Trips"
    assert "Packing list  [Trips]" in runner.invoke(app, ["sessions", "list"], env=env).stdout
    renamed = runner.invoke(app, ["sessions", "rename-folder", "Trips", "  Far  away"], env=env)
    assert renamed.exit_code == 0 and renamed.stdout.strip() == "renamed Trips to Far away: 1 session(s)"
    assert "Packing list  [Far away]" in runner.invoke(app, ["sessions", "list"], env=env).stdout
    none = runner.invoke(app, ["sessions", "rename-folder", "Trips", "X"], env=env)
    assert none.exit_code == 1 and "no session is in a folder 'Trips'" in none.output
    blank = runner.invoke(app, ["sessions", "rename-folder", "Far away", "  "], env=env)
    assert blank.exit_code == 1 and "not only spaces" in blank.output
    assert runner.invoke(app, ["sessions", "rename-folder", "Far away", "Trips"], env=env).exit_code == 0
    assert runner.invoke(app, ["sessions", "archive", sid], env=env).exit_code == 0
    names = [
        s["name"] for s in json.loads(runner.invoke(app, ["sessions", "list", "--json"], env=env).stdout)
    ]
    assert names == ["Sourdough starter"]
    archived = json.loads(runner.invoke(app, ["sessions", "list", "--archived", "--json"], env=env).stdout)
    assert [(s["name"], s["folder"], s["archived"]) for s in archived] == [("Packing list", "Trips", True)]
    assert runner.invoke(app, ["sessions", "unarchive", sid], env=env).exit_code == 0
    assert len(json.loads(runner.invoke(app, ["sessions", "list", "--json"], env=env).stdout)) == 2
    other = runner.invoke(app, ["sessions", "archive", sid, "--user", "bob"], env=env)
    assert other.exit_code != 0  # bob is no user here, and never reaches this session
    missing = runner.invoke(app, ["sessions", "move", "00000000-0000-4000-8000-000000000000", "X"], env=env)
    assert missing.exit_code == 1 and "no session" in missing.output
