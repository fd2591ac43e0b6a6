"""A message's files as one typed value inside (`navi.llm.attached.AttachedFile`), kept as the same
JSON where they are stored: a message's `metadata.files` and the run queue's rows (issue 42)."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import Connection, text

from navi.agent.said import user_message
from navi.llm.attached import AttachedFile, attached, stored
from navi.llm.messages import Message, with_files, without_files
from navi.runs.queue import Queued, SqlQueue
from navi.storage import migrate
from navi.storage.database import Database, sqlite_url
from navi.storage.sessions import SqlSessionStore

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
