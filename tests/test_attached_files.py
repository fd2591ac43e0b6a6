"""A message's files as one typed value inside (`navi.llm.attached.AttachedFile`), kept as the same
JSON where they are stored: a message's `metadata.files` and the run queue's rows (issue 42)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from rich.console import Console
from sqlalchemy import Connection, text

from navi.agent.said import user_message
from navi.cli.chat.app import Chat
from navi.cli.chat.commands import attach
from navi.cli.remote import Remote, Target
from navi.llm.attached import AttachedFile, attached, stored
from navi.llm.messages import Message, with_files, without_files
from navi.runs.queue import Queued, SqlQueue
from navi.storage import migrate
from navi.storage.database import Database, sqlite_url
from navi.storage.sessions import SqlSessionStore
from navi.testing.fake_server import FakeModelServer
from tests.server_helpers import live_navi, use_script

NOTES = AttachedFile(name="notes.txt", path="session_files/s/notes.txt")
PLAN = AttachedFile(name="plan.md", path="session_files/s/plan.md")


def test_a_stored_message_keeps_its_files_as_name_and_path_objects() -> None:
    user = user_message("read these", None, [NOTES, PLAN], "m1")
    assert user.metadata.as_json() == {
        "files": [
            {"name": "notes.txt", "path": "session_files/s/notes.txt"},
            {"name": "plan.md", "path": "session_files/s/plan.md"},
        ]
    }
    assert user.content == with_files("read these", [NOTES, PLAN])
    assert without_files(user) == "read these"
    again = Message.model_validate_json(user.model_dump_json())  # as a store reads the row back
    assert attached(again.metadata.files) == [NOTES, PLAN]
    assert attached(None) == [] and stored([]) == []


def test_a_message_without_files_stores_no_files_key() -> None:
    assert "files" not in user_message("hi", None, [], "m1").metadata


async def test_the_queue_row_holds_the_files_as_it_always_did(tmp_path: Path) -> None:
    db = Database(sqlite_url(tmp_path / "navi.db"))
    await migrate.upgrade(db)
    try:
        session = (await SqlSessionStore(db).create("secretary")).id
        queue = SqlQueue(db)
        await queue.add(Queued("m1", session, "queue", "read these", files=[NOTES, PLAN]))

        def column(conn: Connection) -> str:
            return str(conn.execute(text("SELECT files FROM queued_messages")).scalar_one())

        as_before = [{"name": f.name, "path": f.path} for f in (NOTES, PLAN)]  # the dicts rows held
        assert await db.read(column) == json.dumps(as_before)
        [waiting] = await queue.waiting(session)
        assert waiting.files == [NOTES, PLAN] and waiting.view(1)["files"] == ["notes.txt", "plan.md"]
    finally:
        await db.dispose()


def test_an_edit_keeps_the_files_the_message_was_stored_with(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    """A message's files through REST (checked, answered, stored), stored without an answer, and
    again through an edit (read back from the stored message): the same records each time."""
    with live_navi(tmp_path, fake_server, planning_enabled=False) as navi:
        use_script(fake_server).turn("Read.", "Read again.")
        sid = navi.new_session()
        with navi.client() as http:
            up = http.post(f"/sessions/{sid}/files", files={"file": ("notes.txt", b"n", "text/plain")}).json()
            files = [{"name": "notes.txt", "path": up["path"]}]
            said = {"content": "Read it", "files": files}
            assert http.post(f"/sessions/{sid}/messages", json=said).is_success
            kept = {"content": "Keep it", "files": [{"path": up["path"]}], "respond": False}
            assert http.post(f"/sessions/{sid}/messages", json=kept).is_success
            asked, _, stored_only = http.get(f"/sessions/{sid}").json()["messages"]
            assert asked["metadata"]["files"] == files and stored_only["metadata"]["files"] == files
            assert asked["content"] == f"Read it\n\n[Uploaded files on disk:\n- notes.txt → {up['path']}]"
            edit = {"content": "Read it now"}
            edited = http.post(f"/sessions/{sid}/messages/{asked['id']}/edit", json=edit)
            assert edited.is_success, edited.text
            again = http.get(f"/sessions/{sid}").json()["messages"][0]
        assert again["id"] != asked["id"] and again["metadata"]["files"] == files
        assert again["content"] == f"Read it now\n\n[Uploaded files on disk:\n- notes.txt → {up['path']}]"


async def test_navi_chat_sends_its_uploads_as_a_message_frame_names_them(tmp_path: Path) -> None:
    chat = Chat(
        Remote(Target("http://127.0.0.1:9")),
        Console(file=io.StringIO()),
        profile=None,
        history_file=tmp_path / "history",
    )
    sent: list[dict[str, Any]] = []
    notes = tmp_path / "notes.txt"
    notes.write_text("n")

    async def upload(session_id: str, path: Path) -> dict[str, Any]:
        return {"name": path.name, "path": f"/files/{session_id}/{path.name}", "size": 1}

    async def send(frame: dict[str, Any]) -> None:
        sent.append(frame)

    async def nothing(**_: Any) -> None:
        return None

    chat.session = {"id": "s1", "name": "", "profile_id": "secretary"}
    chat.remote.upload = upload  # type: ignore[method-assign]
    chat.conn = SimpleNamespace(send=send)  # type: ignore[assignment]
    chat.follow = nothing  # type: ignore[method-assign]
    await attach(chat, notes)
    await chat.send("read it")
    files = [{"name": "notes.txt", "path": "/files/s1/notes.txt"}]
    assert sent == [{"type": "message", "content": "read it", "files": files}] and chat.files == []
