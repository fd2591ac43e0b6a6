"""Documents: what every part of the documents feature speaks in.

A document is a file a person gave Navi (an upload, a file of a watched folder). Its text is
*extracted* (`extract/`) into `Section`s, each at a `Place` — a page, a slide, a sheet's cells, the
headings above it — then *chunked* (`chunking.py`) into `Chunk`s that keep that place, so an
answer can cite "contract.pdf, p. 12, § 9 Termination". Chunks are indexed per user (keyword and
vectors) in the one database; documents live in `Collection`s. `DocumentStore` is the interface
the SQL store implements (`navi/storage/documents.py`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

# What a document's indexing is at: waiting for a worker, being read (with a progress fraction),
# searchable, or given up on (with the reason, in words a person understands).
DocumentState = Literal["queued", "indexing", "ready", "failed"]
# Where a document came from: sent to Navi (its bytes are kept in the database), or a file of a
# folder Navi follows (its bytes stay in that folder).
DocumentSource = Literal["upload", "folder"]
# A collection a person made, the one each conversation gets for the files uploaded into it, or
# the one of a watched folder.
CollectionKind = Literal["user", "session", "folder"]


@dataclass(frozen=True)
class Place:
    """Where a passage sits in its document. Every field is optional: a plain text file has none."""

    page: int | None = None  # 1-based page of a PDF (or of an EPUB chapter's order)
    slide: int | None = None  # 1-based slide of a presentation
    sheet: str | None = None  # a spreadsheet's sheet name
    cells: str | None = None  # that sheet's range, "A1:F40"
    headings: tuple[str, ...] = ()  # the heading path above the passage, outermost first

    def label(self) -> str:
        """The place in words: "p. 12, § 9 Termination", "slide 3", "sheet Budget, A1:F40"."""
        parts: list[str] = []
        if self.page is not None:
            parts.append(f"p. {self.page}")
        if self.slide is not None:
            parts.append(f"slide {self.slide}")
        if self.sheet is not None:
            parts.append(f"sheet {self.sheet}" + (f", {self.cells}" if self.cells else ""))
        if self.headings:
            parts.append(f"§ {self.headings[-1]}")
        return ", ".join(parts)


@dataclass(frozen=True)
class Section:
    """A stretch of extracted text at one place (a page, a slide, a sheet range, a heading's body)."""

    text: str
    place: Place = Place()


@dataclass
class Extracted:
    """A document's text, in reading order, and what is known about it."""

    # "pdf", "docx", "xlsx", "pptx", "odt", "ods", "odp", "html", "markdown", "text", "csv", "epub", "eml"
    kind: str
    sections: list[Section]
    pages: int = 0  # pages, slides or sheets: the unit a progress bar counts
    title: str | None = None
    warnings: list[str] = field(default_factory=list)  # said, not fatal ("pages 3-5 have no text layer")

    @property
    def text(self) -> str:
        return "\n\n".join(s.text for s in self.sections if s.text)


class ExtractionError(Exception):
    """A document that cannot be read, with a reason a person understands and a code for clients."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(reason)
        # encrypted | corrupt | too_large | too_many_pages | timeout | no_text | unsupported | limit
        self.code = code
        self.reason = reason


@dataclass(frozen=True)
class Chunk:
    """A piece of a document small enough to search and quote, at its place."""

    ordinal: int  # its order in the document, from 0
    text: str
    place: Place = Place()


@dataclass
class Collection:
    id: str
    owner: str
    name: str
    kind: CollectionKind = "user"
    session_id: str | None = None  # a conversation's own collection
    path: str | None = None  # a watched folder's
    created_at: datetime | None = None
    documents: int = 0
    profiles: list[str] = field(default_factory=list)  # the profiles it is attached to


@dataclass
class Document:
    id: str
    owner: str
    collection_id: str
    name: str
    kind: str = ""
    size: int = 0
    sha256: str = ""
    source: DocumentSource = "upload"
    path: str | None = None  # a folder file's path
    state: DocumentState = "queued"
    progress: float = 0.0  # 0..1 while indexing
    error: str | None = None
    pages: int = 0
    chunks: int = 0
    created_at: datetime | None = None
    updated_at: datetime | None = None
    # What reading it noticed (pages without a text layer, text cut at the limit…), in sentences.
    warnings: list[str] = field(default_factory=list)


@dataclass
class Hit:
    """A chunk a search found, with what citing it needs."""

    chunk_id: int
    document_id: str
    document_name: str
    collection_id: str
    ordinal: int
    text: str
    place: Place
    score: float

    def citation(self) -> str:
        """ "contract.pdf, p. 12, § 9 Termination" """
        where = self.place.label()
        return f"{self.document_name}, {where}" if where else self.document_name


class DocumentStore(ABC):
    """Collections, documents, their chunks and the index, per owner. Every method that takes an
    `owner` sees only that owner's rows: another user's id gives None, [] or False."""

    # Collections
    @abstractmethod
    async def create_collection(
        self,
        owner: str,
        name: str,
        *,
        kind: CollectionKind = "user",
        session_id: str | None = None,
        path: str | None = None,
    ) -> Collection:
        """A new collection; ValueError for an empty name or one the owner already has."""

    @abstractmethod
    async def list_collections(self, owner: str) -> list[Collection]: ...

    @abstractmethod
    async def get_collection(self, owner: str, collection_id: str) -> Collection | None: ...

    @abstractmethod
    async def session_collection(self, owner: str, session_id: str) -> Collection:
        """The conversation's own collection, made on first use."""

    @abstractmethod
    async def delete_collection(self, owner: str, collection_id: str) -> bool:
        """The collection, its documents and their chunks."""

    @abstractmethod
    async def attach(self, owner: str, session_id: str, collection_id: str) -> bool: ...

    @abstractmethod
    async def detach(self, owner: str, session_id: str, collection_id: str) -> bool: ...

    @abstractmethod
    async def attach_profile(self, owner: str, profile_id: str, collection_id: str) -> bool:
        """Attach the owner's collection to a profile: every conversation of theirs with that
        profile reads it. False when the collection is not the owner's."""

    @abstractmethod
    async def detach_profile(self, owner: str, profile_id: str, collection_id: str) -> bool: ...

    @abstractmethod
    async def attached(self, owner: str, session_id: str) -> list[Collection]:
        """The collections a conversation reads: attached to it, attached to its profile, and its
        own (when it has documents)."""

    # Documents
    @abstractmethod
    async def add_document(
        self,
        owner: str,
        collection_id: str,
        name: str,
        *,
        data: bytes | None = None,
        path: str | None = None,
        source: DocumentSource = "upload",
        size: int | None = None,
        sha256: str | None = None,
    ) -> Document:
        """A queued document: its bytes kept (`data`) or its folder file named (`path`). A document
        of the same name in the collection is replaced (queued again). A folder file's `size` and
        `sha256`, as its caller read them, are kept so a later scan tells a changed file."""

    @abstractmethod
    async def list_documents(self, owner: str, collection_id: str | None = None) -> list[Document]: ...

    @abstractmethod
    async def get_document(self, owner: str, document_id: str) -> Document | None: ...

    @abstractmethod
    async def document_bytes(self, owner: str, document_id: str) -> bytes | None:
        """An uploaded document's bytes (None for a folder file: read it from `path`)."""

    @abstractmethod
    async def delete_document(self, owner: str, document_id: str) -> bool: ...

    @abstractmethod
    async def requeue(self, owner: str, document_id: str) -> bool:
        """Index the document again (its chunks are replaced when that is done)."""

    # Indexing: whichever worker claims a queued document indexes it, once
    @abstractmethod
    async def claim(self, worker: str, lease_seconds: float) -> Document | None:
        """The next queued document (or one whose indexing worker's lease ran out), now `indexing`
        and leased to `worker`; None when there is none."""

    @abstractmethod
    async def progress(self, document_id: str, worker: str, fraction: float) -> bool:
        """Record progress and renew the lease; False when the lease is no longer `worker`'s."""

    @abstractmethod
    async def finish(
        self,
        document_id: str,
        worker: str,
        *,
        kind: str,
        pages: int,
        chunks: list[Chunk],
        vectors: list[list[float]] | None,
        embedder: str | None,
        warnings: list[str] | None = None,
    ) -> bool:
        """Replace the document's chunks and make it `ready` (with what reading it noticed);
        False when the lease was lost."""

    @abstractmethod
    async def fail(self, document_id: str, worker: str, reason: str) -> bool: ...

    # Search
    @abstractmethod
    async def search(
        self,
        owner: str,
        query: str,
        *,
        collections: list[str] | None = None,
        documents: list[str] | None = None,
        limit: int = 5,
        query_vector: list[float] | None = None,
        embedder: str | None = None,
    ) -> list[Hit]:
        """The owner's best chunks for `query`: keyword and (with `query_vector`) vector ranks
        fused, best first."""

    @abstractmethod
    async def passage(self, owner: str, chunk_id: int, *, around: int = 1) -> tuple[Hit, str] | None:
        """A chunk and the text of it with `around` neighbours each side (the full passage)."""
