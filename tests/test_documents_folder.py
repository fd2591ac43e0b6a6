"""A watched folder (navi/documents/folder.py): real files on disk, the real watcher (watchfiles),
the SQLite documents store. The first scan; then a file added, edited (only it queued again, the
same document), renamed, deleted, a folder renamed; and what is skipped and reported — a link out
of the folder, hidden files and folders, a FIFO, a file over the cap, a kind not read, a file that
cannot be opened.

Waiting for the watcher is a bounded poll of the store, never a fixed sleep."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from navi.documents import folder as folder_module
from navi.documents.base import Chunk
from navi.documents.folder import FolderSync
from navi.storage.database import sqlite_url
from navi.storage.documents import SqlDocumentStore

OWNER = "alice"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqlDocumentStore]:
    s = SqlDocumentStore.at(sqlite_url(tmp_path / "d.db"))
    await s.open()
    try:
        yield s
    finally:
        await s.aclose()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    (folder / "work").mkdir(parents=True)
    (folder / "plan.md").write_text("# Plan\n\nShip the documents feature by Friday.\n")
    (folder / "work" / "budget.txt").write_text("The budget for the garden is 400 euros.\n")
    return folder


async def until(check: Callable[[], Awaitable[bool]], seconds: float = 15.0) -> None:
    """Poll `check` until it holds; fail after `seconds`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not await check():
        if loop.time() > deadline:
            raise AssertionError("the watched folder did not get there in time")
        await asyncio.sleep(0.05)


async def names(store: SqlDocumentStore, sync: FolderSync) -> dict[str, str]:
    assert sync.collection is not None
    return {d.name: d.state for d in await store.list_documents(OWNER, sync.collection.id)}


async def index_all(store: SqlDocumentStore) -> None:
    """Play the indexer: every queued document made ready."""
    while (doc := await store.claim("w", 60)) is not None:
        chunk = Chunk(0, await asyncio.to_thread(Path(doc.path or "").read_text))
        assert await store.finish(
            doc.id, "w", kind="text", pages=1, chunks=[chunk], vectors=None, embedder=None
        )


@contextlib.asynccontextmanager
async def following(sync: FolderSync) -> AsyncIterator[asyncio.Task[None]]:
    task = asyncio.create_task(sync.run())
    try:
        await asyncio.wait_for(sync.ready.wait(), 15)
        yield task
    finally:
        sync.stop()
        await asyncio.wait_for(task, 15)


async def test_first_scan_adds_files_and_removes_documents_whose_file_is_gone(
    store: SqlDocumentStore, root: Path
) -> None:
    pokes: list[int] = []
    sync = FolderSync(store, OWNER, root, lambda: pokes.append(1))
    await sync.scan()
    assert sync.collection is not None and sync.collection.kind == "folder"
    assert sync.collection.path == str(root) and sync.collection.name == "notes"
    docs = {d.name: d for d in await store.list_documents(OWNER, sync.collection.id)}
    assert set(docs) == {"plan.md", "work/budget.txt"}
    plan = docs["plan.md"]
    assert plan.source == "folder" and plan.state == "queued" and plan.path == str(root / "plan.md")
    assert plan.sha256 == hashlib.sha256((root / "plan.md").read_bytes()).hexdigest()
    assert plan.size == (root / "plan.md").stat().st_size
    assert await store.document_bytes(OWNER, plan.id) is None  # the bytes stay on disk
    assert pokes == [1]

    # While nothing followed the folder: one file edited, one deleted, one added.
    await index_all(store)
    (root / "plan.md").write_text("# Plan\n\nShip it on Monday instead.\n")
    (root / "work" / "budget.txt").unlink()
    (root / "ideas.txt").write_text("Plant tomatoes in April.\n")
    again = FolderSync(store, OWNER, root)
    await again.scan()
    assert again.collection is not None and again.collection.id == sync.collection.id
    docs_after = {d.name: d for d in await store.list_documents(OWNER, sync.collection.id)}
    assert set(docs_after) == {"plan.md", "ideas.txt"}
    assert docs_after["plan.md"].id == plan.id and docs_after["plan.md"].state == "queued"

    # A scan with nothing changed queues nothing again.
    await index_all(store)
    await FolderSync(store, OWNER, root).scan()
    assert set((await names(store, sync)).values()) == {"ready"}


async def test_add_edit_rename_delete_followed(store: SqlDocumentStore, root: Path) -> None:
    sync = FolderSync(store, OWNER, root)
    async with following(sync):
        await index_all(store)
        before = {d.name: d.id for d in await store.list_documents(OWNER)}

        (root / "new.md").write_text("# New\n\nA note added while watched.\n")
        await until(lambda: _has(store, sync, "new.md"))

        await index_all(store)
        (root / "work" / "budget.txt").write_text("The budget for the garden is 650 euros now.\n")

        async def edited() -> bool:
            return (await names(store, sync)).get("work/budget.txt") == "queued"

        await until(edited)
        docs = {d.name: d for d in await store.list_documents(OWNER)}
        assert docs["work/budget.txt"].id == before["work/budget.txt"]  # the same document
        # Only the edited file was queued again.
        assert {n: d.state for n, d in docs.items()} == {
            "plan.md": "ready",
            "new.md": "ready",
            "work/budget.txt": "queued",
        }
        await index_all(store)

        (root / "plan.md").rename(root / "work" / "plan-renamed.md")

        async def renamed() -> bool:
            now = await names(store, sync)
            return "plan.md" not in now and now.get("work/plan-renamed.md") == "queued"

        await until(renamed)
        moved = next(d for d in await store.list_documents(OWNER) if d.name == "work/plan-renamed.md")
        assert moved.path == str(root / "work" / "plan-renamed.md")

        (root / "new.md").unlink()

        async def deleted() -> bool:
            return "new.md" not in await names(store, sync)

        await until(deleted)
        hits = await store.search(OWNER, "note added while watched")
        assert hits == []  # a deleted file leaves the index

        # A folder renamed: its files are gone under the old name, found under the new one.
        (root / "work").rename(root / "job")

        async def folder_renamed() -> bool:
            return set(await names(store, sync)) == {"job/budget.txt", "job/plan-renamed.md"}

        await until(folder_renamed)


async def _has(store: SqlDocumentStore, sync: FolderSync, name: str) -> bool:
    return name in await names(store, sync)


async def test_what_is_skipped_is_reported_and_never_indexed(
    store: SqlDocumentStore, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "private"
    outside.mkdir()
    (outside / "diary.txt").write_text("Secret diary entry.\n")
    (root / "diary-link.txt").symlink_to(outside / "diary.txt")
    (root / "private-dir").symlink_to(outside, target_is_directory=True)
    (root / "inside-link.md").symlink_to(root / "plan.md")  # inside: indexed at the real path
    (root / ".obsidian").mkdir()
    (root / ".obsidian" / "workspace.md").write_text("hidden settings\n")
    (root / ".draft.md").write_text("a hidden file\n")
    (root / "photo.png").write_bytes(PNG)
    (root / "big.txt").write_text("x" * 5000)
    os.mkfifo(root / "pipe.txt")  # would block whoever opens it for reading
    locked = root / "work" / "locked.txt"
    locked.write_text("You may not read this.\n")
    locked.chmod(0)
    if os.geteuid() == 0:  # root reads a mode-000 file: make the read fail as it would for a user
        real_read = folder_module.read_file

        def refuse(path: str) -> bytes:
            if path == str(locked):
                raise PermissionError(13, "Permission denied", path)
            return real_read(path)

        monkeypatch.setattr(folder_module, "read_file", refuse)

    sync = FolderSync(store, OWNER, root, max_bytes=4096)
    try:
        await sync.scan()
    finally:
        locked.chmod(0o644)
    assert set(await names(store, sync)) == {"plan.md", "work/budget.txt", "inside-link.md"}
    inside = next(d for d in await store.list_documents(OWNER) if d.name == "inside-link.md")
    assert inside.path == str(root / "plan.md")
    skipped = dict(sync.skipped_list)
    assert skipped["diary-link.txt"] == f"a link to {outside / 'diary.txt'}, outside the folder"
    assert skipped["private-dir"] == f"a link to {outside}, outside the folder"
    assert skipped[".obsidian"] == "hidden" and ".obsidian/workspace.md" not in skipped
    assert skipped[".draft.md"] == "hidden"
    assert skipped["photo.png"].startswith("not a kind Navi reads")
    assert skipped["big.txt"] == "5,000 bytes, over the 4,096 bytes cap"
    assert skipped["pipe.txt"] == "not a regular file"
    assert skipped["work/locked.txt"] == "cannot be read (Permission denied)"
    assert len(skipped) == 8


async def test_changes_that_become_skipped_leave_the_index(
    store: SqlDocumentStore, root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("Not part of the notes.\n")
    sync = FolderSync(store, OWNER, root)
    async with following(sync):
        # A link out of the folder made while watched: reported, never added.
        (root / "sneaky.txt").symlink_to(outside)

        async def reported() -> bool:
            return "sneaky.txt" in sync.skipped

        await until(reported)
        assert "sneaky.txt" not in await names(store, sync)
        assert sync.skipped["sneaky.txt"].endswith("outside the folder")

        # A file in a hidden folder made while watched: never added.
        (root / ".trash").mkdir()
        (root / ".trash" / "old.md").write_text("thrown away\n")
        # A file replaced by a link out of the folder leaves the index.
        (root / "work" / "budget.txt").unlink()
        (root / "work" / "budget.txt").symlink_to(outside)

        async def left() -> bool:
            return "work/budget.txt" not in await names(store, sync) and "work/budget.txt" in sync.skipped

        await until(left)
        (root / "later.md").write_text("after the hidden folder\n")
        await until(lambda: _has(store, sync, "later.md"))
        assert set(await names(store, sync)) == {"plan.md", "later.md"}
        # Deleting the link takes it off the report.
        (root / "sneaky.txt").unlink()

        async def unreported() -> bool:
            return "sneaky.txt" not in sync.skipped

        await until(unreported)


async def test_a_folder_of_the_same_name_as_a_collection_gets_its_path(
    store: SqlDocumentStore, root: Path
) -> None:
    await store.create_collection(OWNER, "notes")
    sync = FolderSync(store, OWNER, root)
    made = await sync.open()
    assert made.name == str(root) and made.kind == "folder"
    assert (await FolderSync(store, OWNER, root).open()).id == made.id


def test_knowledge_dirs_split_on_commas_and_the_path_separator(tmp_path: Path) -> None:
    from navi.compose.parts import knowledge_dirs
    from navi.config import load_settings

    raw = f"{tmp_path}/a, ~/notes{os.pathsep}{tmp_path}/b,,{tmp_path}/a"
    settings = load_settings(db_path=str(tmp_path / "n.db"), knowledge_dirs=raw)
    assert knowledge_dirs(settings) == [tmp_path / "a", Path("~/notes").expanduser(), tmp_path / "b"]


async def test_the_server_follows_knowledge_dirs_in_the_background(tmp_path: Path, root: Path) -> None:
    from navi.compose.services import build_services
    from tests.agent_helpers import scripted_runtime

    rt, _, _ = await scripted_runtime(tmp_path, sql=True, knowledge_dirs=str(root))
    services = build_services(rt, schedules=False, background=True, owns_runtime=True)
    await services.start()
    try:
        documents = rt.documents
        assert documents is not None

        async def listed(*wanted: str) -> bool:
            assert documents is not None
            return {d.name for d in await documents.list_documents("local")} == set(wanted)

        await until(lambda: listed("plan.md", "work/budget.txt"))
        (root / "added.md").write_text("added while the server runs\n")
        await until(lambda: listed("plan.md", "work/budget.txt", "added.md"))
        folders = await documents.list_collections("local")
        assert [(c.kind, c.path) for c in folders] == [("folder", str(root))]
    finally:
        await services.stop()


def test_navi_docs_watch_once_scans_and_reports(tmp_path: Path, root: Path) -> None:
    import typer
    from typer.testing import CliRunner

    from navi.cli.docs_watch import watch

    app = typer.Typer()
    app.command("watch")(watch)
    app.command("noop")(lambda: None)  # a group, as `navi docs` is
    (root / ".hidden.md").write_text("not for the index\n")
    env = {"DB_PATH": str(tmp_path / "n.db"), "TOOLS_DIR": str(tmp_path / "tools")}
    result = CliRunner().invoke(app, ["watch", str(root), "--once"], env=env)
    assert result.exit_code == 0, result.output
    assert result.stdout == f"2 files in {root}\nskipped: .hidden.md — hidden\n"

    async def listed() -> list[tuple[str, str, str]]:
        s = SqlDocumentStore.at(sqlite_url(tmp_path / "n.db"))
        await s.open()
        try:
            return [(d.name, d.source, d.state) for d in await s.list_documents("local")]
        finally:
            await s.aclose()

    assert asyncio.run(listed()) == [("plan.md", "folder", "queued"), ("work/budget.txt", "folder", "queued")]
    missing = CliRunner().invoke(app, ["watch", str(tmp_path / "nowhere"), "--once"], env=env)
    assert missing.exit_code == 2 and "is not a folder" in missing.output


def test_the_indexer_reads_a_folder_file_only_while_it_is_one(root: Path, tmp_path: Path) -> None:
    from navi.documents.folder import read_folder_file

    plan = root / "plan.md"
    assert read_folder_file(str(plan), str(root)) == plan.read_bytes()
    secret = tmp_path / "secret.txt"
    secret.write_text("not in the notes\n")
    plan.unlink()
    plan.symlink_to(secret)  # swapped for a link out of the folder after the scan
    with pytest.raises(OSError, match="no longer a file inside"):
        read_folder_file(str(plan), str(root))
    plan.unlink()
    os.mkfifo(plan)  # or for a FIFO: refused without blocking
    with pytest.raises(OSError, match="not a regular file"):
        read_folder_file(str(plan), str(root))
    with pytest.raises(OSError, match="no longer a file inside"):
        read_folder_file(str(secret), str(root))
    big = root / "big.txt"
    big.write_text("x" * 5000)
    with pytest.raises(OSError, match="over the 4,096 bytes cap"):
        read_folder_file(str(big), str(root), max_bytes=4096)
