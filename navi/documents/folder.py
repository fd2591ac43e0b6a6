"""A folder kept in sync with a collection (`KNOWLEDGE_DIRS`, `navi docs watch DIR`).

`FolderSync(store, owner, root, poke)` makes (or finds) the owner's collection of kind "folder" for
`root`, scans it — new files are added, changed ones queued again, documents whose file is gone
deleted — and then follows the folder with `watchfiles`. A file's bytes stay on disk: its document
has source "folder" and its real `path`, which the indexer reads. A document is named by the file's
path relative to the folder ("notes/plan.md").

Changes are handled by *state*, not by event kind: for every path an event names, the folder is
looked at again. A path that is a file now is added or, when its size or sha256 differs from the
document's, queued again (the same document: its id stays); a path that is gone takes the document
of that name, and every document under it when it was a folder, out of the index; a folder that
appeared (made, moved in, renamed) is scanned. A rename is thus "old gone, new added" and an edit
queues only that file, whatever events the operating system reported and in whatever batches.

Skipped, and reported in `skipped` (path → reason) and the log: hidden files and folders (a name
starting with "."; not descended into), links whose real path is outside the folder (checked on the
resolved path, so a link inside a linked folder is caught too), what is not a regular file (a FIFO
would block a reader), files over the size cap, files this process cannot open, and kinds the
extractor does not read (`extract.sniff`). A file skipped that was indexed before leaves the index.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from watchfiles import Change, awatch

from navi.documents.base import Collection, Document, DocumentStore, ExtractionError
from navi.documents.extract.common import Limits
from navi.documents.extract.sniff import sniff
from navi.logging import get_logger

log = get_logger(__name__)

MB = 1024 * 1024


@dataclass(frozen=True)
class Entry:
    """A file of the folder that is indexed: its name in the collection, real path, size, hash."""

    name: str
    path: str
    size: int
    sha256: str


@dataclass
class Look:
    """What looking at part of the folder found: files to index and paths skipped with a reason."""

    entries: list[Entry] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)


def hidden(relative: str) -> bool:
    return any(part.startswith(".") for part in relative.split("/"))


def _size(n: int) -> str:
    return f"{n / MB:,.0f} MB" if n >= MB else f"{n:,} bytes"


def read_file(path: str) -> bytes:
    """The file's bytes (a function of its own so tests can make it fail as a root user)."""
    with open(path, "rb") as handle:
        return handle.read()


def read_folder_file(path: str, root: str, max_bytes: int = Limits().max_bytes) -> bytes:
    """A folder document's bytes, for the indexer: checked again when read, since the file may have
    changed since the scan — still inside `root` (the collection's `path`) by its real path, not a
    link (O_NOFOLLOW), a regular file (a FIFO swapped in would block), within `max_bytes`.
    OSError (with a reason a person understands) otherwise."""
    real_root = os.path.realpath(root)
    if os.path.realpath(path) != os.path.normpath(path) or not path.startswith(real_root + os.sep):
        raise OSError(f"{path} is no longer a file inside {root}")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path} is not a regular file")
        if info.st_size > max_bytes:
            raise OSError(f"{path} is {_size(info.st_size)}, over the {_size(max_bytes)} cap")
        return handle.read(max_bytes + 1)[:max_bytes]


class FolderSync:
    """Keeps `owner`'s collection for the folder `root` in step with the files in it; `poke()` (the
    indexer's) is called when documents were queued."""

    def __init__(
        self,
        store: DocumentStore,
        owner: str,
        root: str | os.PathLike[str],
        poke: Callable[[], None] | None = None,
        *,
        max_bytes: int = Limits().max_bytes,
        on_look: Callable[[str, Look], None] | None = None,
    ) -> None:
        self.store = store
        self.owner = owner
        self.root = Path(os.path.realpath(Path(root).expanduser()))
        self.poke = poke
        self.max_bytes = max_bytes
        self.on_look = on_look  # told what each scan ("scan") and change ("change") found
        self.collection: Collection | None = None
        self.skipped: dict[str, str] = {}  # relative path → why it is not indexed
        self.ready = asyncio.Event()  # set once the first scan is done and the watcher runs
        self._stop = asyncio.Event()

    @property
    def skipped_list(self) -> list[tuple[str, str]]:
        return sorted(self.skipped.items())

    # The collection

    async def open(self) -> Collection:
        """The owner's folder collection for `root`, made on first use (named after the folder; a
        name the owner already uses for another collection gets the path instead)."""
        if self.collection is not None:
            return self.collection
        for found in await self.store.list_collections(self.owner):
            if found.kind == "folder" and found.path == str(self.root):
                self.collection = found
                return found
        for name in (self.root.name or str(self.root), str(self.root)):
            with contextlib.suppress(ValueError):
                self.collection = await self.store.create_collection(
                    self.owner, name, kind="folder", path=str(self.root)
                )
                return self.collection
        raise ValueError(f"a collection named {str(self.root)!r} exists already")

    # Looking at the folder (in a thread: it reads files)

    def _relative(self, path: str) -> str | None:
        try:
            rel = Path(path).relative_to(self.root).as_posix()
        except ValueError:
            return None
        return None if rel in ("", ".") else rel

    def _inside(self, real: str) -> bool:
        return real == str(self.root) or real.startswith(str(self.root) + os.sep)

    def _look_file(self, path: str, rel: str, look: Look) -> None:
        if hidden(rel):
            look.skipped[rel] = "hidden"
            return
        real = os.path.realpath(path)
        if not self._inside(real):
            look.skipped[rel] = f"a link to {real}, outside the folder"
            return
        try:
            info = os.stat(real)
        except OSError as error:
            look.skipped[rel] = f"cannot be read ({error.strerror or error})"
            return
        if stat.S_ISDIR(info.st_mode):
            look.skipped[rel] = "a link to a folder inside this one (indexed where it points)"
            return
        if not stat.S_ISREG(info.st_mode):
            look.skipped[rel] = "not a regular file"
            return
        if info.st_size > self.max_bytes:
            look.skipped[rel] = f"{_size(info.st_size)}, over the {_size(self.max_bytes)} cap"
            return
        try:
            data = read_file(real)
        except OSError as error:
            look.skipped[rel] = f"cannot be read ({error.strerror or error})"
            return
        if data:
            try:
                sniff(data, rel)
            except ExtractionError as error:
                if error.code == "unsupported":
                    look.skipped[rel] = f"not a kind Navi reads ({error.reason})"
                    return
                # encrypted, corrupt: indexed, so the document shows why it failed
        look.entries.append(Entry(rel, real, len(data), hashlib.sha256(data).hexdigest()))

    def _look_tree(self, top: str, look: Look) -> None:
        """Every file under the folder `top` (itself inside `root`), hidden folders not entered."""

        def unreadable(error: OSError) -> None:
            rel = self._relative(error.filename or top) or "."
            look.skipped[rel] = f"cannot be read ({error.strerror or error})"

        for here, dirs, files in os.walk(top, onerror=unreadable, followlinks=False):
            base = self._relative(here)
            for name in sorted(dirs):
                rel = f"{base}/{name}" if base else name
                full = os.path.join(here, name)
                if name.startswith("."):
                    look.skipped[rel] = "hidden"
                    dirs.remove(name)
                elif os.path.islink(full):  # not walked; a link to a folder is reported
                    self._look_file(full, rel, look)
            for name in sorted(files):
                rel = f"{base}/{name}" if base else name
                self._look_file(os.path.join(here, name), rel, look)

    def _look_paths(self, paths: Iterable[str]) -> tuple[Look, set[str]]:
        """Looks at each changed path; also the relative paths that are no longer files here."""
        look, gone = Look(), set()
        for path in sorted(set(paths)):
            rel = self._relative(path)
            if rel is None or hidden(rel):
                continue
            if os.path.isdir(path) and not os.path.islink(path):
                gone.add(rel)  # a file of that name, if there was one, is gone
                if self._inside(os.path.realpath(path)):
                    self._look_tree(path, look)
                else:  # a folder reached through a link out of the folder
                    look.skipped[rel] = f"a link to {os.path.realpath(path)}, outside the folder"
            elif os.path.lexists(path):
                self._look_file(path, rel, look)
                gone.add(rel)  # taken back below when it is indexed
            else:
                gone.add(rel)
        return look, gone

    # Bringing the collection in step

    async def scan(self) -> Look:
        """The whole folder: new and changed files queued, documents whose file is gone deleted."""
        collection = await self.open()
        if not self.root.is_dir():
            log.warning("knowledge_dir_missing", path=str(self.root))
            return Look()
        look = Look()
        await asyncio.to_thread(self._look_tree, str(self.root), look)
        self.skipped = dict(look.skipped)
        keep = {entry.name for entry in look.entries}
        existing = await self.store.list_documents(self.owner, collection.id)
        removed = 0
        for document in existing:
            if document.name not in keep:
                removed += await self.store.delete_document(self.owner, document.id)
        queued = await self._put(look.entries, {d.name: d for d in existing})
        log.info(
            "knowledge_dir_scanned",
            path=str(self.root),
            files=len(look.entries),
            queued=queued,
            removed=removed,
            skipped=len(look.skipped),
        )
        self._report(look.skipped)
        if self.on_look is not None:
            self.on_look("scan", look)
        return look

    async def apply(self, paths: Iterable[str]) -> Look:
        """Bring the documents of the changed `paths` in step (see the module's docstring)."""
        collection = await self.open()
        look, gone = await asyncio.to_thread(self._look_paths, paths)
        for rel in gone:
            for name in [n for n in self.skipped if n == rel or n.startswith(rel + "/")]:
                del self.skipped[name]
        self.skipped.update(look.skipped)
        existing = {d.name: d for d in await self.store.list_documents(self.owner, collection.id)}
        keep = {entry.name for entry in look.entries}
        for name, document in existing.items():
            under = any(name == rel or name.startswith(rel + "/") for rel in gone)
            if (under or name in look.skipped) and name not in keep:
                await self.store.delete_document(self.owner, document.id)
                log.info("knowledge_file_removed", path=str(self.root), name=name)
        await self._put(look.entries, existing)
        self._report(look.skipped)
        if self.on_look is not None:
            self.on_look("change", look)
        return look

    async def _put(self, entries: list[Entry], existing: dict[str, Document]) -> int:
        assert self.collection is not None
        queued = 0
        for entry in entries:
            had = existing.get(entry.name)
            if had is not None and had.size == entry.size and had.sha256 == entry.sha256:
                continue
            await self.store.add_document(
                self.owner,
                self.collection.id,
                entry.name,
                path=entry.path,
                source="folder",
                size=entry.size,
                sha256=entry.sha256,
            )
            queued += 1
        if queued and self.poke is not None:
            self.poke()
        return queued

    def _report(self, skipped: dict[str, str]) -> None:
        for rel, reason in sorted(skipped.items()):
            log.info("knowledge_file_skipped", path=str(self.root), name=rel, reason=reason)

    # Following the folder

    def _wanted(self, change: Change, path: str) -> bool:
        rel = self._relative(path)
        return rel is not None and not hidden(rel)

    async def run(self) -> None:
        """Scan, then follow the folder until `stop()` (or cancelled). The watcher starts before the
        scan, so a change made while scanning is not missed (handling a path twice is harmless)."""
        batches: asyncio.Queue[set[str] | None] = asyncio.Queue()

        async def watch() -> None:
            async for changes in awatch(
                self.root,
                watch_filter=self._wanted,
                stop_event=self._stop,
                step=50,
                ignore_permission_denied=True,
            ):
                batches.put_nowait({path for _, path in changes})
            batches.put_nowait(None)

        await self.open()
        if not self.root.is_dir():
            log.warning("knowledge_dir_missing", path=str(self.root))
            return
        watcher = asyncio.create_task(watch())
        await asyncio.sleep(0)  # awatch sets its watches up before its first await
        try:
            await self.scan()
            self.ready.set()
            while (batch := await batches.get()) is not None:
                while not batches.empty():  # what piled up while the last batch was handled
                    more = batches.get_nowait()
                    if more is None:
                        self._stop.set()
                        break
                    batch |= more
                try:
                    await self.apply(batch)
                except Exception as error:  # a database hiccup: the next change looks again
                    log.warning("knowledge_dir_sync_failed", path=str(self.root), error=str(error))
                if self._stop.is_set():
                    break
        finally:
            self._stop.set()
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher

    def stop(self) -> None:
        self._stop.set()
