"""`navi docs add|list|search|rm|collections`, run in-process as the real command against a real
SQLite database: files and folders added (hidden ones skipped) and read right here when no Navi
server runs, or only queued; search with citations; one user's documents never another's."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest
from fpdf import FPDF
from typer.testing import CliRunner

from navi.cli.main import _register, app

_register()
runner = CliRunner()


@functools.cache
def lease_pdf() -> bytes:
    doc = FPDF()
    doc.set_font("Helvetica", size=12)
    for text in ("Tenancy agreement.", "Rent is paid monthly.", "The deposit is returned within two weeks."):
        doc.add_page()
        doc.multi_cell(0, 8, text)
    return bytes(doc.output())


class World:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.env = {
            "DB_PATH": str(folder / "n.db"),
            "SESSION_FILES_DIR": str(folder / "files"),
            "TOOLS_DIR": str(folder / "tools"),
            "LOG_LEVEL": "WARNING",
            "NAVI_PORT": "9",  # nothing listens there: no server is running
        }
        assert self.navi("users", "add", "alice").exit_code == 0

    def navi(self, *args: str) -> Any:
        return runner.invoke(app, list(args), env=self.env)

    def ok(self, *args: str) -> str:
        result = self.navi(*args)
        assert result.exit_code == 0, result.output
        return str(result.stdout)

    def listed(self, *args: str) -> list[dict[str, Any]]:
        data: list[dict[str, Any]] = json.loads(self.ok("docs", "list", "--json", *args))
        return data


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def test_add_a_folder_read_here_search_and_remove(world: World) -> None:
    notes = world.folder / "notes"
    (notes / "house").mkdir(parents=True)
    (notes / ".obsidian").mkdir()
    (notes / "lease.pdf").write_bytes(lease_pdf())
    (notes / "house" / "boiler.md").write_text("# Boiler\n\nThe boiler is serviced every October.\n")
    (notes / ".obsidian" / "workspace.md").write_text("hidden settings about the boiler")
    (notes / ".secret.txt").write_text("hidden boiler note")
    (notes / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 20)

    out = world.ok("docs", "add", str(notes), "--collection", "Home")
    assert "Reading 2 here (no Navi server is running" in out
    assert "ready   notes/lease.pdf" in out and "ready   notes/house/boiler.md" in out

    docs = world.listed()
    assert sorted(d["name"] for d in docs) == ["notes/house/boiler.md", "notes/lease.pdf"]
    assert {d["state"] for d in docs} == {"ready"}
    lease = next(d for d in docs if d["name"] == "notes/lease.pdf")
    assert lease["pages"] == 3 and lease["kind"] == "pdf"

    found = world.ok("docs", "search", "deposit returned")
    assert found.splitlines()[0].startswith("1. notes/lease.pdf, p. 3")
    assert "two weeks" in found
    assert "serviced every October" in world.ok("docs", "search", "boiler", "--collection", "Home")
    assert "hidden" not in world.ok("docs", "search", "boiler", "--limit", "10")
    one = world.ok("docs", "search", "boiler", "--collection", "Home", "--limit", "1")
    assert one.startswith("1. ") and "\n2. " not in one

    shelves = json.loads(world.ok("docs", "collections", "--json"))
    assert [(c["name"], c["documents"]) for c in shelves] == [("Home", 2)]
    text = world.ok("docs", "list")
    assert "ready" in text and "Home: notes/lease.pdf" in text

    assert world.ok("docs", "rm", lease["id"]).strip() == "Removed notes/lease.pdf."
    assert "No passage matches" in world.ok("docs", "search", "deposit returned")
    gone = world.navi("docs", "rm", lease["id"])
    assert gone.exit_code == 1 and "no document" in gone.stderr


def test_queue_only_and_a_broken_file(world: World) -> None:
    broken = world.folder / "broken.pdf"
    broken.write_bytes(lease_pdf()[:500])
    plain = world.folder / "todo.txt"
    plain.write_text("Call the plumber about the kitchen tap.")

    out = world.ok("docs", "add", str(plain), "--queue")
    assert "Queued 1" in out and "Added" in out
    (queued,) = world.listed("--collection", "Documents")
    assert queued["state"] == "queued"

    # Reading here reads what was queued before too; a broken file fails with its reason.
    failed = world.navi("docs", "add", str(broken), "--now")
    assert failed.exit_code == 1
    assert "ready   todo.txt" in failed.stdout and "failed  broken.pdf:" in failed.stdout
    states = {d["name"]: d for d in world.listed()}
    assert states["todo.txt"]["state"] == "ready"
    assert states["broken.pdf"]["state"] == "failed" and states["broken.pdf"]["error"]
    assert "broken.pdf" in world.ok("docs", "list") and "—" in world.ok("docs", "list")

    missing = world.navi("docs", "add", str(world.folder / "nope.pdf"))
    assert missing.exit_code == 1 and "no such file" in missing.output
    unknown = world.navi("docs", "list", "--collection", "Nope")
    assert unknown.exit_code == 1 and "no collection 'Nope'" in unknown.stderr


def test_each_user_has_their_own_documents(world: World) -> None:
    mine = world.folder / "mine.md"
    mine.write_text("The owner's garage code is written here.")
    hers = world.folder / "hers.md"
    hers.write_text("Alice keeps the garage key under the mat.")
    world.ok("docs", "add", str(mine))
    world.ok("docs", "add", str(hers), "--user", "alice", "--collection", "Alice's")

    assert [d["name"] for d in world.listed()] == ["mine.md"]
    assert [d["name"] for d in world.listed("--user", "alice")] == ["hers.md"]
    assert "hers.md" not in world.ok("docs", "search", "garage") and "mine.md" in world.ok(
        "docs", "search", "garage"
    )
    assert "mine.md" not in world.ok("docs", "search", "garage", "--user", "alice")
    assert [c["name"] for c in json.loads(world.ok("docs", "collections", "--json", "--user", "alice"))] == [
        "Alice's"
    ]

    (alices,) = world.listed("--user", "alice")
    assert world.navi("docs", "rm", alices["id"]).exit_code == 1  # not the owner's
    assert [d["name"] for d in world.listed("--user", "alice")] == ["hers.md"]
    unknown = world.navi("docs", "list", "--user", "nobody")
    assert unknown.exit_code == 2 and "no user 'nobody'" in unknown.stderr


def test_attach_a_collection_to_a_profile(world: World) -> None:
    (world.folder / "r.md").write_text("# Bread\n\nKnead for ten minutes.\n")
    world.ok("docs", "add", str(world.folder / "r.md"), "--collection", "Recipes")
    out = world.ok("docs", "attach", "Recipes", "--profile", "secretary")
    assert "profile 'secretary' reads 'Recipes'" in out
    (shelf,) = json.loads(world.ok("docs", "collections", "--json"))
    assert shelf["profiles"] == ["secretary"]
    assert "[profiles: secretary]" in world.ok("docs", "collections")

    unknown = world.navi("docs", "attach", "Recipes", "--profile", "nobody")
    assert unknown.exit_code == 1 and "no profile 'nobody'" in unknown.stderr
    assert "secretary" in unknown.stderr  # the profiles there are
    missing = world.navi("docs", "attach", "Cakes", "--profile", "secretary")
    assert missing.exit_code == 1 and "no collection 'Cakes'" in missing.stderr
    theirs = world.navi("docs", "attach", "Recipes", "--profile", "secretary", "--user", "alice")
    assert theirs.exit_code == 1 and "no collection 'Recipes'" in theirs.stderr  # alice has none

    assert "no longer read" in world.ok("docs", "detach", "Recipes", "--profile", "secretary")
    again = world.navi("docs", "detach", "Recipes", "--profile", "secretary")
    assert again.exit_code == 1 and "is not attached" in again.stderr
    (shelf,) = json.loads(world.ok("docs", "collections", "--json"))
    assert shelf["profiles"] == []


def test_the_list_says_what_reading_noticed(world: World) -> None:
    from tests.documents import makers

    (world.folder / "mixed.pdf").write_bytes(makers.pdf({1: "Text.", 3: "More text."}, count=3))
    world.ok("docs", "add", str(world.folder / "mixed.pdf"))
    line = next(x for x in world.ok("docs", "list").splitlines() if "mixed.pdf" in x)
    assert "ready" in line and "⚠ page 2 has no text layer" in line, line
    (doc,) = world.listed()
    assert doc["warnings"] == ["page 2 has no text layer (scanned? Navi does no OCR)"]
