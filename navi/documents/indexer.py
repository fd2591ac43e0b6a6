"""The indexer: reads queued documents into chunks and vectors, in the background, once each.

One `Indexer` runs per Navi process (`navi/compose/services.py` starts and stops it with the other
background loops). `run()` claims the next queued document from the store (`DocumentStore.claim`:
atomic, so with several workers on one database each document is indexed by one of them), reads
its bytes (kept in the database for an upload, the file itself for a folder's), extracts its text
in a child process under `Limits` (`isolate.extract_isolated`: a hostile file costs a process,
never the server's event loop), cuts it into chunks (`chunking.chunk`, in a thread), embeds the
chunks' text in small batches when an embedding model is set (memory's; none: keyword search
only) and hands all of it to `store.finish`. A document that cannot be read is `failed` with the
reason (`ExtractionError`).

**Progress and the lease.** The claim is a lease on the database's clock: `progress` records how
far the indexing is (extraction 0–0.8, embedding the rest) at most every `progress_every` seconds
and renews the lease, and a heartbeat renews it meanwhile, so a slow page never lets another
worker take a document this one is still reading. When the lease is no longer this worker's (the
document was deleted, replaced or queued again) the work stops and its result is dropped.

**Restarts.** Nothing is kept in the process: a queued row stays queued until some worker claims
it, and an `indexing` row whose worker died is claimed again once its lease has run out
(`lease_seconds`). `poke()` wakes the loop when this process adds a document; documents other
workers add are found by polling every `poll_seconds`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from navi.documents.base import Chunk, Document, DocumentStore, Extracted, ExtractionError
from navi.documents.chunking import chunk
from navi.documents.extract.common import Limits
from navi.documents.folder import read_folder_file
from navi.documents.isolate import close_reader, extract_isolated
from navi.logging import get_logger

log = get_logger(__name__)

EXTRACTION_SHARE = 0.8  # of the progress bar, when embedding follows; the rest is embedding


class Embedder(Protocol):
    """What the indexer needs of an embedding model (memory's `Embedder` is one): a name that
    says which model made the vectors, and texts → one vector each."""

    name: str

    def __call__(self, texts: list[str]) -> Awaitable[list[list[float]]]: ...


class LeaseLost(Exception):
    """The document is no longer this worker's to index (deleted, replaced, queued again)."""


@dataclass
class Outcome:
    """What indexing one document came to: `ready`, `failed` (with the reason) or `lost`."""

    document: Document
    state: str
    reason: str | None = None
    chunks: int = 0


@dataclass(frozen=True, kw_only=True)
class Tuning:
    """The indexer's pace: how long a claim lasts unrenewed (`lease_seconds`), how often to look
    for documents other workers added (`poll_seconds`), how often progress is recorded
    (`progress_every`), and how many chunks are embedded in one call (`batch`)."""

    lease_seconds: float = 60.0
    poll_seconds: float = 5.0
    progress_every: float = 0.5
    batch: int = 16


class Indexer:
    """Indexes queued documents of `store`, as `worker_id`, one at a time."""

    def __init__(
        self,
        store: DocumentStore,
        embedder: Embedder | None,
        limits: Limits,
        worker_id: str,
        *,
        tuning: Tuning = Tuning(),
        extract: Callable[..., Awaitable[Extracted]] = extract_isolated,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.limits = limits
        self.worker_id = worker_id
        self.lease_seconds = tuning.lease_seconds
        self.poll_seconds = tuning.poll_seconds
        self.progress_every = tuning.progress_every
        self.batch = max(1, tuning.batch)
        self._extract = extract
        self._wake = asyncio.Event()
        # Called with each document's outcome (the CLI prints it); never raises into the loop.
        self.on_done: Callable[[Outcome], None] | None = None

    def poke(self) -> None:
        """A document was added in this process: look now instead of at the next poll."""
        self._wake.set()

    async def run(self) -> None:
        """Index queued documents until cancelled: every one there is, then wait for a poke or
        the next poll. A failure of the store (the database away) is logged and retried later."""
        log.info("documents.indexer_started", worker=self.worker_id, embedder=self._embedder_name())
        try:
            await self._loop()
        finally:  # the reader process goes with the loop that used it
            await asyncio.shield(close_reader())

    async def _loop(self) -> None:
        while True:
            # Cleared before looking, not after: a poke while this look runs (a document added
            # after its claim found nothing) makes the wait below return at once.
            self._wake.clear()
            try:
                while await self.index_next() is not None:
                    pass
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the database away: try again at the next poll
                log.warning("documents.indexer_failed", error=f"{type(exc).__name__}: {exc}")
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.poll_seconds):
                    await self._wake.wait()

    async def index_next(self) -> Outcome | None:
        """Claim and index one document; None when none is waiting."""
        document = await self.store.claim(self.worker_id, self.lease_seconds)
        if document is None:
            return None
        outcome = await self.index(document)
        if self.on_done is not None:
            try:
                self.on_done(outcome)
            except Exception:  # a printer's problem is not the indexer's
                log.exception("documents.on_done_failed")
        return outcome

    async def index(self, document: Document) -> Outcome:
        """Index a document this worker has claimed; its outcome is recorded in the store."""
        started = time.monotonic()
        progress = _Progress(self, document)
        pump = asyncio.create_task(progress.pump())
        work = asyncio.create_task(self._work(document, progress))
        progress.work = work
        try:
            outcome = await work
        except asyncio.CancelledError:
            if progress.lost and not _cancelling():
                outcome = Outcome(document, "lost")
            else:
                raise
        except ExtractionError as exc:
            outcome = Outcome(document, "failed", exc.reason)
            await self._fail(document, exc.reason)
        except LeaseLost:
            outcome = Outcome(document, "lost")
        except Exception as exc:
            log.exception("documents.index_crashed", document=document.id)
            reason = f"indexing failed unexpectedly ({type(exc).__name__}); try Re-index"
            outcome = Outcome(document, "failed", reason)
            await self._fail(document, reason)
        finally:
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pump
        log.info(
            "documents.indexed",
            document=document.id,
            state=outcome.state,
            chunks=outcome.chunks,
            reason=outcome.reason,
            seconds=round(time.monotonic() - started, 3),
        )
        return outcome

    async def _fail(self, document: Document, reason: str) -> None:
        with contextlib.suppress(Exception):
            await self.store.fail(document.id, self.worker_id, reason)

    async def _work(self, document: Document, progress: _Progress) -> Outcome:
        data = await self._bytes(document)
        embedding = self.embedder is not None
        share = EXTRACTION_SHARE if embedding else 0.95
        extracted = await self._extract(
            data, document.name, self.limits, lambda f: progress.report(f * share)
        )
        del data
        chunks = await asyncio.to_thread(chunk, extracted)
        for warning in extracted.warnings:  # stored with the document too (`finish`)
            log.info("documents.warning", document=document.id, warning=warning)
        progress.report(share)
        vectors = await self._embed(document, chunks, progress, share) if embedding else None
        name = self._embedder_name() if vectors is not None else None
        progress.finishing = True  # from here `finish` itself says whether the claim held
        done = await self.store.finish(
            document.id,
            self.worker_id,
            kind=extracted.kind,
            pages=extracted.pages,
            chunks=chunks,
            vectors=vectors,
            embedder=name,
            warnings=extracted.warnings,
        )
        if not done:
            raise LeaseLost(document.id)
        return Outcome(document, "ready", chunks=len(chunks))

    async def _bytes(self, document: Document) -> bytes:
        if document.source == "folder" and document.path:
            # Checked again as it is read (folder.read_folder_file): since the scan the file may have
            # become a link out of its folder, a FIFO, or too large.
            path = document.path
            collection = await self.store.get_collection(document.owner, document.collection_id)
            if collection is None or not collection.path:
                raise LeaseLost(document.id)  # its folder's collection is gone
            root = collection.path
            try:
                return await asyncio.to_thread(read_folder_file, path, root, self.limits.max_bytes)
            except OSError as exc:
                raise ExtractionError(
                    "unreadable", f"the file {path} cannot be read ({exc.strerror or exc})"
                ) from None
        data = await self.store.document_bytes(document.owner, document.id)
        if data is None:
            raise LeaseLost(document.id)  # deleted since it was claimed
        return data

    async def _embed(
        self, document: Document, chunks: list[Chunk], progress: _Progress, start: float
    ) -> list[list[float]] | None:
        """One vector per chunk, in batches (the event loop serves others between them); None
        when the model cannot embed (a model server away): the document is searched by its words."""
        assert self.embedder is not None
        vectors: list[list[float]] = []
        try:
            for at in range(0, len(chunks), self.batch):
                texts = [c.text for c in chunks[at : at + self.batch]]
                made = await self.embedder(texts)
                if len(made) != len(texts):
                    raise ValueError(f"{len(made)} vectors for {len(texts)} texts")
                vectors.extend(made)
                progress.report(start + (1 - start) * len(vectors) / max(1, len(chunks)))
                await asyncio.sleep(0)
        except (asyncio.CancelledError, LeaseLost):
            raise
        except Exception as exc:
            log.warning(
                "documents.embed_failed",
                document=document.id,
                error=f"{type(exc).__name__}: {exc}",
                detail="indexed for keyword search only",
            )
            return None
        return vectors

    def _embedder_name(self) -> str | None:
        return None if self.embedder is None else self.embedder.name


def _cancelling() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


class _Progress:
    """One document's progress: reported as often as the extractor likes, written to the store at
    most every `progress_every` seconds, and the lease renewed at least every third of it."""

    def __init__(self, indexer: Indexer, document: Document) -> None:
        self.indexer = indexer
        self.document = document
        self.fraction = 0.0
        self.written = -1.0
        self.lost = False
        # The results are being written: a beat that finds the document no longer "indexing" has
        # met that write (it committed, the work has not resumed yet), not a lost claim.
        self.finishing = False
        self.work: asyncio.Task[Outcome] | None = None

    def report(self, fraction: float) -> None:
        self.fraction = max(self.fraction, min(1.0, fraction))

    async def pump(self) -> None:
        indexer = self.indexer
        heartbeat = max(0.05, indexer.lease_seconds / 3)
        last = time.monotonic()
        while True:
            await asyncio.sleep(indexer.progress_every)
            now = time.monotonic()
            if self.fraction == self.written and now - last < heartbeat:
                continue
            fraction = self.fraction
            try:
                kept = await indexer.store.progress(self.document.id, indexer.worker_id, fraction)
            except Exception as exc:  # the database away for a moment: the next beat tries again
                log.warning("documents.progress_failed", document=self.document.id, error=str(exc))
                continue
            self.written, last = fraction, now
            if not kept and not self.finishing:
                self.lost = True
                if self.work is not None:
                    self.work.cancel()
                return
