"""Issue 41, item 1: a process using the SQLite database never drops its own locks on it.

POSIX drops every fcntl lock a process holds on a file when *any* descriptor of that file is closed
in that process. Navi once opened and closed its own database file before each new pooled
connection (for its mode); the server then looked absent to the next `navi` command, which
checkpointed and deleted the -wal and -shm under it, and from then on the two wrote separate
copies: a removed user's token kept working, a denied sender was still answered.

These tests make the pool open new connections while others are open, then let another process use
the file, and check that the -wal stays (the same file, never `(deleted)` under the server) and
that what one process wrote the other sees at once.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from navi.storage.database import Database, sqlite_url
from navi.testing.fake_server import FakeModelServer
from tests.helpers.cli import run_navi
from tests.helpers.locks import held_on
from tests.helpers.mail_servers import (
    SMTP_PASSWORD,
    SMTP_USER,
    Dovecot,
    Outbox,
    dovecot,
    self_signed,
    smtp_server,
)
from tests.security.served import Served, served_navi

ANA, BOB, NAVI = "ana@example.org", "bob@example.org", "navi@example.net"


def _other_process_writes(db: Path, statement: str) -> None:
    """`statement` committed by a separate process that then closes the file: the moment SQLite
    checkpoints and deletes the -wal if it believes it is the file's only user."""
    code = (
        "import sqlite3, sys\n"
        "conn = sqlite3.connect(sys.argv[1], timeout=10)\n"
        "conn.execute(sys.argv[2]); conn.commit(); conn.close()\n"
    )
    subprocess.run([sys.executable, "-c", code, str(db), statement], check=True, timeout=60)


def _inode(path: str) -> int | None:
    try:
        return os.stat(path).st_ino
    except FileNotFoundError:
        return None


async def test_a_new_pooled_connection_keeps_the_locks_of_the_open_ones(tmp_path: Path) -> None:
    db_path = tmp_path / "n.db"
    db = Database(sqlite_url(db_path))
    try:
        await db.write(lambda conn: conn.execute(text("CREATE TABLE t (x INTEGER)")))
        wal = f"{db_path}-wal"
        wal_inode = _inode(wal)
        assert wal_inode is not None
        assert held_on(os.getpid(), db_path), "an open connection in WAL mode holds a shared lock"

        # Two transactions at once: the pool must make a second connection while the first is open.
        both = threading.Barrier(2)

        def meet(conn: Any) -> int:
            both.wait(10)
            return int(conn.execute(text("SELECT count(*) FROM t")).scalar())

        assert await asyncio.gather(db.read(meet), db.read(meet)) == [0, 0]
        assert held_on(os.getpid(), db_path), "the new connection dropped this process's locks"

        _other_process_writes(db_path, "INSERT INTO t VALUES (7)")
        assert _inode(wal) == wal_inode, "the -wal was deleted under an open Navi"
        assert await db.read(lambda conn: conn.execute(text("SELECT x FROM t")).scalars().all()) == [7]
    finally:
        await db.dispose()


# --- a real `navi serve`, real `navi` commands beside it -----------------------------------------
def _open_journals(pid: int, db: Path) -> list[str]:
    """What process `pid` has open of the database and its journals: one link target per descriptor
    (a deleted file's ends in " (deleted)")."""
    names = {str(db), f"{db}-wal", f"{db}-shm"}
    seen: list[str] = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue  # closed meanwhile
        if target.removesuffix(" (deleted)") in names:
            seen.append(target)
    return seen


class World:
    """`navi serve` on a fresh SQLite database with the email channel, and the commands beside it."""

    def __init__(self, folder: Path, env: dict[str, str], outbox: Outbox, imap: Dovecot) -> None:
        self.folder = folder
        self.env = env
        self.outbox = outbox
        self.imap = imap
        self.db = folder / "navi.db"
        self.served: Served | None = None
        self.wal_inode = 0

    @property
    def pid(self) -> int:
        assert self.served is not None
        return self.served.process.pid

    def navi(self, *args: str) -> str:
        done = run_navi(self.folder, *args, env=self.env)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        return done.stdout

    def http(self, token: str) -> httpx.Client:
        assert self.served is not None
        return httpx.Client(
            base_url=self.served.url, headers={"Authorization": f"Bearer {token}"}, timeout=30
        )

    def mail(self, sender: str, body: str) -> None:
        message = EmailMessage()
        message["From"], message["To"], message["Subject"] = sender, NAVI, body
        message.set_content(body)
        self.imap.append(message)

    def replies(self, count: int) -> list[str]:
        """The recipients of the first `count` mails Navi sent, once they have arrived."""
        deadline = time.monotonic() + 60
        while len(self.outbox.messages) < count:
            assert time.monotonic() < deadline, f"{len(self.outbox.messages)} of {count} replies"
            time.sleep(0.05)
        return [str(m["To"]) for m in self.outbox.messages]

    def journals_intact(self) -> None:
        """The server still has the -wal it started with open, and it is still there on disk."""
        wal = Path(f"{self.db}-wal")
        assert wal.exists() and wal.stat().st_ino == self.wal_inode, "the -wal was replaced or deleted"
        shm = Path(f"{self.db}-shm")
        assert shm.exists()
        open_now = _open_journals(self.pid, self.db)
        assert str(wal) in open_now and str(shm) in open_now, open_now
        assert not [t for t in open_now if t.endswith("(deleted)")], open_now
        assert held_on(self.pid, self.db), "the server holds no lock on its database"


@pytest.fixture
def world(tmp_path: Path, fake_server: FakeModelServer) -> Iterator[World]:
    cert, tls = self_signed(tmp_path)
    with dovecot() as imap, smtp_server(tls) as (smtp_port, outbox):
        env = {
            "DB_PATH": str(tmp_path / "navi.db"),
            "TOOLS_DIR": str(tmp_path / "tools"),
            "SESSION_FILES_DIR": str(tmp_path / "session_files"),
            "OLLAMA_HOST": fake_server.url,
            "PLANNING_ENABLED": "false",
            "LOG_LEVEL": "WARNING",
            "SSL_CERT_FILE": str(cert),  # Navi trusts the test SMTP server's certificate
            "NAVI_EMAIL_ADDRESS": NAVI,
            "NAVI_EMAIL_IMAP_HOST": "127.0.0.1",
            "NAVI_EMAIL_IMAP_PORT": str(imap.port),
            "NAVI_EMAIL_IMAP_SECURITY": "none",
            "NAVI_EMAIL_SMTP_HOST": "127.0.0.1",
            "NAVI_EMAIL_SMTP_PORT": str(smtp_port),
            "NAVI_EMAIL_SMTP_SECURITY": "starttls",
            "NAVI_EMAIL_USERNAME": imap.user,
            "NAVI_EMAIL_PASSWORD": imap.password,
            "NAVI_EMAIL_SMTP_USERNAME": SMTP_USER,
            "NAVI_EMAIL_SMTP_PASSWORD": SMTP_PASSWORD,
            # The test's mails are appended to the mailbox (a local delivery path), as `navi` sees
            # them; which mail is believed is tests/test_channel_email.py's concern.
            "NAVI_EMAIL_TRUST_LOCAL_DELIVERY": "true",
        }
        yield World(tmp_path, env, outbox, imap)


def _busy(world: World, token: str) -> list[str]:
    """Many requests at once, so that the server's pool opens new connections beside open ones
    (again, a few times, when a busy machine served one burst a request at a time); the
    descriptors of the database the server then has open."""
    for _ in range(10):
        with world.http(token) as http, ThreadPoolExecutor(12) as pool:
            paths = ["/sessions", "/memory/facts", "/schedules"] * 20
            assert {r.status_code for r in pool.map(http.get, paths)} == {200}
        connections = [t for t in _open_journals(world.pid, world.db) if t == str(world.db)]
        if len(connections) >= 2:
            break
    return connections


@pytest.mark.slow
def test_navi_commands_take_effect_at_once_in_a_running_server(world: World) -> None:
    alice = world.navi("users", "add", "alice").strip()
    world.navi("channels", "allow", "email", ANA)
    world.navi("channels", "allow", "email", BOB)
    with served_navi(world.folder, **world.env) as served:
        world.served = served
        owner = (world.folder / "navi_token").read_text().strip()
        world.wal_inode = Path(f"{world.db}-wal").stat().st_ino
        connections = _busy(world, owner)
        assert len(connections) >= 2, "the server's pool made a connection beside an open one"
        world.journals_intact()

        # Ana is answered while she is on the list.
        world.mail(ANA, "first")
        assert world.replies(1) == [ANA]

        # `navi users remove`: alice's token stops working at once.
        with world.http(alice) as http:
            assert http.get("/sessions").status_code == 200
        world.navi("users", "remove", "alice")
        world.journals_intact()
        with world.http(alice) as http:
            assert http.get("/sessions").status_code == 401

        # `navi memory add`: the server knows the fact at once.
        _busy(world, owner)
        world.navi("memory", "add", "personal", "home_city", "Porto")
        world.journals_intact()
        with world.http(owner) as http:
            facts = http.get("/memory/facts").json()
        assert [(f["key"], f["value"]) for f in facts] == [("home_city", "Porto")]

        # `navi channels deny`: Ana's next mail gets no answer; Bob's, read after it, does.
        _busy(world, owner)
        world.navi("channels", "deny", "email", ANA)
        world.journals_intact()
        world.mail(ANA, "second")
        world.mail(BOB, "third")
        assert world.replies(2) == [ANA, BOB]
        time.sleep(0.5)
        assert len(world.outbox.messages) == 2, "Ana was answered after `navi channels deny`"

        # And the other way round: what the server wrote, the commands see.
        with world.http(owner) as http:
            made = http.post("/sessions", json={"name": "made by the server"}).json()["session_id"]
        listed = json.loads(world.navi("sessions", "list", "--json"))
        assert made in [s["id"] for s in listed]
        world.journals_intact()

    conn = sqlite3.connect(world.db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT count(*) FROM users WHERE name = 'alice'").fetchone()[0] == 0
        assert conn.execute("SELECT address FROM channel_allow").fetchall() == [(BOB,)]
    finally:
        conn.close()


def test_sessions_export_never_writes_over_the_database(tmp_path: Path) -> None:
    """`navi sessions export -o` naming the database, a journal or another of Navi's own files (as
    written, through a symlink or a hard link): one line, exit 1, and nothing is touched."""
    from navi.llm.messages import Message
    from navi.sessions.archive import export_session
    from navi.sessions.models import Session, new_session_id

    said = [Message.user("keep me")]
    session = Session(id=new_session_id(), profile_id="secretary", messages=said, context=said)
    (tmp_path / "in.json").write_text(json.dumps(export_session(session)))
    imported = run_navi(tmp_path, "sessions", "import", "in.json")
    assert imported.returncode == 0, imported.stderr
    sid = imported.stdout.split()[1]
    db = tmp_path / "navi.db"
    (tmp_path / "navi_token").write_text("token-secret\n")
    os.symlink(db, tmp_path / "via-link.json")
    os.link(db, tmp_path / "hard.json")
    before = db.read_bytes()
    for target, own in (
        ("navi.db", db),
        (f"{db}-wal", Path(f"{db}-wal")),
        ("via-link.json", db),
        ("hard.json", db),
        ("navi_token", tmp_path / "navi_token"),
    ):
        done = run_navi(tmp_path, "sessions", "export", sid, "-o", target)
        assert (done.returncode, done.stdout) == (1, ""), (target, done.stdout, done.stderr)
        assert (
            done.stderr == f"navi: cannot write {target}: it is Navi's own file {own} — give another file\n"
        )
    assert db.read_bytes() == before and (tmp_path / "navi_token").read_text() == "token-secret\n"
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT id FROM sessions").fetchall() == [(sid,)]
    finally:
        conn.close()
    assert run_navi(tmp_path, "sessions", "export", sid, "-o", "out.json").returncode == 0
    assert json.loads((tmp_path / "out.json").read_text())["messages"][0]["content"] == "keep me"
