"""Item 1 of issue 14: Navi's files are its owner's only — 0600 files, 0700 folders — whatever the
umask: the database and its -wal/-shm journals, uploads and their folders, the tools folder and its
seeded files, the token file, and archives written by `navi sessions export -o`.

Each test sets the umask itself (0o022, the common default, and 0o000, the loosest) and puts the
old one back: modes must come from Navi, not from the umask.
"""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from navi.testing.fake_server import FakeModelServer
from tests.helpers.cli import run_navi
from tests.server_helpers import live_navi, use_script


@pytest.fixture(params=[0o022, 0o000], ids=["umask-022", "umask-000"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def mode(path: Path) -> str:
    return oct(stat.S_IMODE(path.stat().st_mode))


def test_a_running_navi_makes_every_file_its_owners_only(
    umask: int, tmp_path: Path, fake_server: FakeModelServer
) -> None:
    use_script(fake_server).turn("Stored.")
    with live_navi(tmp_path, fake_server, log_level="WARNING") as navi:  # no token set: Navi makes one
        sid = navi.new_session()
        with navi.client() as http:
            assert http.post(f"/sessions/{sid}/messages", json={"content": "keep this"}).status_code == 200
            upload = http.post(
                f"/sessions/{sid}/files", files={"file": ("notes.txt", b"private", "text/plain")}
            )
            assert upload.status_code == 201, upload.text
        # While Navi runs, SQLite keeps its write-ahead log and shared-memory index beside the file.
        db = Path(navi.settings.db_path)
        journals = [Path(f"{db}-wal"), Path(f"{db}-shm")]
        assert all(p.exists() for p in journals)
        assert {p.name: mode(p) for p in [db, *journals]} == {p.name: "0o600" for p in [db, *journals]}
        assert mode(Path(navi.settings.token_file)) == "0o600"

        files = tmp_path / "session_files"
        assert mode(files) == "0o700" and mode(files / sid) == "0o700"
        assert mode(files / sid / "notes.txt") == "0o600"

        tools = tmp_path / "tools"
        seeded = sorted(p for p in tools.iterdir() if p.is_file())
        assert seeded, "the tools folder was seeded"
        assert mode(tools) == "0o700"
        assert {p.name: mode(p) for p in seeded} == {p.name: "0o600" for p in seeded}


def test_an_older_database_with_loose_modes_is_tightened(umask: int, tmp_path: Path) -> None:
    """A database (and journals) another Navi or tool left readable by all is made private on open."""
    import asyncio

    from sqlalchemy import text

    from navi.storage.database import Database, sqlite_url

    db_path = tmp_path / "old.db"
    for p in (db_path, Path(f"{db_path}-wal"), Path(f"{db_path}-shm")):
        p.touch()
        p.chmod(0o644)

    async def touch_db() -> None:
        db = Database(sqlite_url(db_path))
        try:
            await db.write(lambda conn: conn.execute(text("CREATE TABLE t (x INTEGER)")))
        finally:
            await db.dispose()

    asyncio.run(touch_db())
    assert mode(db_path) == "0o600"
    assert all(mode(p) == "0o600" for p in (Path(f"{db_path}-wal"), Path(f"{db_path}-shm")) if p.exists())


def test_sessions_export_writes_a_private_file(umask: int, tmp_path: Path) -> None:
    """`navi sessions export -o FILE` (the real command; the umask is inherited by the process)."""
    from navi.llm.messages import Message
    from navi.sessions.archive import export_session
    from navi.sessions.models import Session, new_session_id

    def navi(*args: str) -> subprocess.CompletedProcess[str]:
        return run_navi(tmp_path, *args)

    said = [Message.user("my bank PIN is in the drawer")]
    session = Session(id=new_session_id(), profile_id="secretary", messages=said, context=said)
    (tmp_path / "in.json").write_text(__import__("json").dumps(export_session(session)))
    imported = navi("sessions", "import", "in.json")
    assert imported.returncode == 0, imported.stderr
    sid = imported.stdout.split()[1]

    fresh = tmp_path / "out.json"
    done = navi("sessions", "export", sid, "-o", str(fresh))
    assert done.returncode == 0, done.stderr
    assert mode(fresh) == "0o600" and "bank PIN" in fresh.read_text()

    existing = tmp_path / "shared.json"  # replacing a file others could read makes it private
    existing.write_text("{}")
    existing.chmod(0o644)
    assert navi("sessions", "export", sid, "-o", str(existing)).returncode == 0
    assert mode(existing) == "0o600" and "bank PIN" in existing.read_text()


def test_tools_written_later_are_private_too(umask: int, tmp_path: Path) -> None:
    """What `write_tool` and the enabled list write goes through one function."""
    from navi.tools.user_config import add_enabled, atomic_write_text

    atomic_write_text(tmp_path / "tools" / "my_tool.py", "name = 'my_tool'\n")
    add_enabled(tmp_path / "tools", "my_tool")
    assert mode(tmp_path / "tools" / "my_tool.py") == "0o600"
    assert mode(tmp_path / "tools" / "enabled.json") == "0o600"
