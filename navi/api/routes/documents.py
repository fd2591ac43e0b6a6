"""Documents (issue 43): collections, the documents in them, their files, search with citations,
and which collections a conversation reads.

Every route acts on the caller's own collections and documents: another user's id answers 404,
exactly like one that does not exist, and a search finds only the caller's chunks. Uploads are
streamed and capped per file (`DOCUMENTS_MAX_BYTES`, 413 beyond it) as the conversation uploads
are (navi/api/document_files.py), kept in the database and queued; this process's indexer is
woken, and the document's `state` and `progress` say how far it is. Without a database there are
no documents: every route answers 503.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Annotated

from fastapi import Path, Query, Request, Response
from pydantic import BaseModel, ConfigDict, StringConstraints

from navi.api.deps import (
    CurrentUser,
    DocumentsDep,
    IndexerDep,
    OwnedSessionId,
    RuntimeDep,
    UploadsDep,
)
from navi.api.document_files import file_headers, receive_documents
from navi.api.errors import BadRequest, Conflict, NotFound
from navi.api.routing import api_router
from navi.documents.base import Collection, Document, DocumentStore, Hit
from navi.logging import get_logger
from navi.memory.embedders import Embedder

log = get_logger(__name__)
router = api_router(tags=["documents"])

Id = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[0-9a-f]+$")]
ProfileId = Annotated[str, Path(min_length=1, max_length=64)]
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
MAX_CHUNK_ID = 2**63 - 1


class CollectionOut(BaseModel):
    id: str
    name: str
    kind: str  # user | session (a conversation's own) | folder
    session_id: str | None = None
    path: str | None = None
    created_at: datetime | None = None
    documents: int = 0
    profiles: list[str] = []  # the profiles it is attached to (every conversation with one reads it)

    @classmethod
    def of(cls, c: Collection) -> CollectionOut:
        return cls(
            id=c.id,
            name=c.name,
            kind=c.kind,
            session_id=c.session_id,
            path=c.path,
            created_at=c.created_at,
            documents=c.documents,
            profiles=list(c.profiles),
        )


class NewCollection(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: Name


class DocumentOut(BaseModel):
    id: str
    collection_id: str
    name: str
    # known once indexed: pdf docx xlsx pptx odt ods odp html markdown text csv epub eml
    kind: str
    size: int
    sha256: str
    source: str  # upload | folder
    path: str | None = None
    state: str  # queued | indexing | ready | failed
    progress: float  # 0..1 while indexing
    error: str | None = None  # why it failed, in words
    pages: int
    chunks: int
    created_at: datetime | None = None
    updated_at: datetime | None = None
    # What reading it noticed, in words: pages without a text layer, text cut at the limit…
    warnings: list[str] = []

    @classmethod
    def of(cls, d: Document) -> DocumentOut:
        return cls(
            id=d.id,
            collection_id=d.collection_id,
            name=d.name,
            kind=d.kind,
            size=d.size,
            sha256=d.sha256,
            source=d.source,
            path=d.path,
            state=d.state,
            progress=d.progress,
            error=d.error,
            pages=d.pages,
            chunks=d.chunks,
            created_at=d.created_at,
            updated_at=d.updated_at,
            warnings=list(d.warnings),
        )


class PlaceOut(BaseModel):
    page: int | None = None
    slide: int | None = None
    sheet: str | None = None
    cells: str | None = None
    headings: list[str] = []


class HitOut(BaseModel):
    chunk_id: int
    document_id: str
    document_name: str
    collection_id: str
    citation: str  # "contract.pdf, p. 12, § 9 Termination"
    place: PlaceOut
    text: str
    score: float

    @classmethod
    def of(cls, h: Hit) -> HitOut:
        p = h.place
        return cls(
            chunk_id=h.chunk_id,
            document_id=h.document_id,
            document_name=h.document_name,
            collection_id=h.collection_id,
            citation=h.citation(),
            place=PlaceOut(
                page=p.page, slide=p.slide, sheet=p.sheet, cells=p.cells, headings=list(p.headings)
            ),
            text=h.text,
            score=h.score,
        )


class PassageOut(BaseModel):
    hit: HitOut
    passage: str  # the chunk with its neighbours


# --- collections ---------------------------------------------------------------------------------


@router.get("/collections", response_model=list[CollectionOut], summary="Your collections")
async def list_collections(store: DocumentsDep, user: CurrentUser) -> list[CollectionOut]:
    return [CollectionOut.of(c) for c in await store.list_collections(user)]


@router.post("/collections", status_code=201, response_model=CollectionOut, summary="Make a collection")
async def create_collection(body: NewCollection, store: DocumentsDep, user: CurrentUser) -> CollectionOut:
    try:
        return CollectionOut.of(await store.create_collection(user, body.name))
    except ValueError as exc:
        raise Conflict(str(exc)) from exc


@router.delete(
    "/collections/{collection_id}",
    status_code=204,
    response_class=Response,
    summary="Delete a collection with its documents",
)
async def delete_collection(collection_id: Id, store: DocumentsDep, user: CurrentUser) -> Response:
    if not await store.delete_collection(user, collection_id):
        raise NotFound(f"no collection {collection_id}")
    return Response(status_code=204)


@router.post(
    "/collections/{collection_id}/documents",
    status_code=202,
    response_model=list[DocumentOut],
    summary="Add documents (multipart/form-data, one or more `file` parts); they are queued for indexing",
    openapi_extra={
        "requestBody": {
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "properties": {
                            "file": {"type": "array", "items": {"type": "string", "format": "binary"}}
                        },
                    }
                }
            },
            "required": True,
        }
    },
)
async def add_documents(
    collection_id: Id,
    request: Request,
    store: DocumentsDep,
    user: CurrentUser,
    runtime: RuntimeDep,
    uploads: UploadsDep,
    indexer: IndexerDep,
) -> list[DocumentOut]:
    if await store.get_collection(user, collection_id) is None:
        raise NotFound(f"no collection {collection_id}")
    added = []
    async with receive_documents(
        dict(request.headers),
        request.stream(),
        uploads.root / ".documents",
        max_bytes=runtime.document_settings.limits.max_bytes,
    ) as received:
        for f in received:
            try:
                added.append(await store.add_document(user, collection_id, f.name, data=await f.read()))
            except LookupError:  # the collection was deleted meanwhile
                raise NotFound(f"no collection {collection_id}") from None
    if indexer is not None:
        indexer.poke()
    return [DocumentOut.of(d) for d in added]


# --- documents -----------------------------------------------------------------------------------


@router.get("/documents", response_model=list[DocumentOut], summary="Your documents, or one collection's")
async def list_documents(
    store: DocumentsDep,
    user: CurrentUser,
    collection: Annotated[str | None, Query(max_length=64, description="A collection's id")] = None,
) -> list[DocumentOut]:
    if collection is not None and await store.get_collection(user, collection) is None:
        raise NotFound(f"no collection {collection}")
    return [DocumentOut.of(d) for d in await store.list_documents(user, collection)]


@router.get(
    "/documents/search",
    response_model=list[HitOut],
    summary="The passages that best match ?q=, with their citations",
)
async def search(
    store: DocumentsDep,
    user: CurrentUser,
    runtime: RuntimeDep,
    q: Annotated[str, Query(min_length=1, max_length=1000, description="What to look for")],
    collection: Annotated[list[str] | None, Query(description="Only these collections")] = None,
    document: Annotated[list[str] | None, Query(description="Only these documents")] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 5,
) -> list[HitOut]:
    if not q.strip():
        raise BadRequest("q: say what to look for")
    vector, model = await query_vector(runtime.embedder, q)
    hits = await store.search(
        user,
        q,
        collections=collection,
        documents=document,
        limit=limit,
        query_vector=vector,
        embedder=model,
    )
    return [HitOut.of(h) for h in hits]


async def query_vector(embedder: Embedder | None, text: str) -> tuple[list[float] | None, str | None]:
    """The query's vector by memory's embedding model, or (None, None): no model, or it failed
    (the search is by words alone then)."""
    if embedder is None:
        return None, None
    try:
        (vector,) = await embedder([text])
    except Exception as exc:
        log.warning("documents.query_embed_failed", error=f"{type(exc).__name__}: {exc}")
        return None, None
    return list(vector), embedder.name


@router.get(
    "/documents/chunks/{chunk_id}",
    response_model=PassageOut,
    summary="A passage found by a search, with the text around it",
)
async def passage(
    chunk_id: Annotated[int, Path(ge=1, le=MAX_CHUNK_ID)], store: DocumentsDep, user: CurrentUser
) -> PassageOut:
    found = await store.passage(user, chunk_id)
    if found is None:
        raise NotFound(f"no passage {chunk_id}")
    hit, text = found
    return PassageOut(hit=HitOut.of(hit), passage=text)


async def _document(store: DocumentStore, user: str, document_id: str) -> Document:
    document = await store.get_document(user, document_id)
    if document is None:
        raise NotFound(f"no document {document_id}")
    return document


@router.get(
    "/documents/{document_id}", response_model=DocumentOut, summary="A document and its indexing state"
)
async def get_document(document_id: Id, store: DocumentsDep, user: CurrentUser) -> DocumentOut:
    return DocumentOut.of(await _document(store, user, document_id))


@router.delete(
    "/documents/{document_id}", status_code=204, response_class=Response, summary="Delete a document"
)
async def delete_document(document_id: Id, store: DocumentsDep, user: CurrentUser) -> Response:
    if not await store.delete_document(user, document_id):
        raise NotFound(f"no document {document_id}")
    return Response(status_code=204)


@router.post(
    "/documents/{document_id}/reindex",
    status_code=202,
    response_model=DocumentOut,
    summary="Index a document again (its passages stay searchable until the new ones replace them)",
)
async def reindex(
    document_id: Id, store: DocumentsDep, user: CurrentUser, indexer: IndexerDep
) -> DocumentOut:
    if not await store.requeue(user, document_id):
        raise NotFound(f"no document {document_id}")
    if indexer is not None:
        indexer.poke()
    return DocumentOut.of(await _document(store, user, document_id))


@router.get(
    "/documents/{document_id}/file",
    response_class=Response,
    summary="The document's file, inline (a PDF opens in the browser's viewer; HTML is shown as text)",
)
async def document_file(document_id: Id, store: DocumentsDep, user: CurrentUser) -> Response:
    document = await _document(store, user, document_id)
    if document.source == "folder" and document.path:
        try:
            data: bytes | None = await asyncio.to_thread(_read, document.path)
        except OSError:
            raise NotFound(f"the file of document {document_id} is no longer in its folder") from None
    else:
        data = await store.document_bytes(user, document_id)
    if data is None:
        raise NotFound(f"no document {document_id}")
    media, headers = file_headers(document.kind, document.name)
    return Response(content=data, media_type=media, headers=headers)


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


# --- a conversation's collections ----------------------------------------------------------------


@router.get(
    "/sessions/{session_id}/collections",
    response_model=list[CollectionOut],
    summary="The collections a conversation reads (attached ones, and its own once it has documents)",
)
async def session_collections(
    session_id: OwnedSessionId, store: DocumentsDep, user: CurrentUser
) -> list[CollectionOut]:
    return [CollectionOut.of(c) for c in await store.attached(user, session_id)]


@router.put(
    "/sessions/{session_id}/collections/{collection_id}",
    status_code=204,
    response_class=Response,
    summary="Attach a collection to a conversation",
)
async def attach(
    session_id: OwnedSessionId, collection_id: Id, store: DocumentsDep, user: CurrentUser
) -> Response:
    if not await store.attach(user, session_id, collection_id):
        raise NotFound(f"no collection {collection_id}")
    return Response(status_code=204)


@router.delete(
    "/sessions/{session_id}/collections/{collection_id}",
    status_code=204,
    response_class=Response,
    summary="Detach a collection from a conversation",
)
async def detach(
    session_id: OwnedSessionId, collection_id: Id, store: DocumentsDep, user: CurrentUser
) -> Response:
    if not await store.detach(user, session_id, collection_id):
        raise NotFound(f"collection {collection_id} is not attached to this conversation")
    return Response(status_code=204)


# --- a profile's collections ---------------------------------------------------------------------


@router.put(
    "/collections/{collection_id}/profiles/{profile_id}",
    status_code=204,
    response_class=Response,
    summary="Attach a collection to a profile: every conversation of yours with it reads the collection",
)
async def attach_profile(
    collection_id: Id, profile_id: ProfileId, store: DocumentsDep, runtime: RuntimeDep, user: CurrentUser
) -> Response:
    if profile_id not in runtime.profiles:
        raise NotFound(f"no profile {profile_id!r}; the profiles: {', '.join(runtime.profiles.ids())}")
    if not await store.attach_profile(user, profile_id, collection_id):
        raise NotFound(f"no collection {collection_id}")
    return Response(status_code=204)


@router.delete(
    "/collections/{collection_id}/profiles/{profile_id}",
    status_code=204,
    response_class=Response,
    summary="Detach a collection from a profile",
)
async def detach_profile(
    collection_id: Id, profile_id: ProfileId, store: DocumentsDep, user: CurrentUser
) -> Response:
    if not await store.detach_profile(user, profile_id, collection_id):
        raise NotFound(f"collection {collection_id} is not attached to profile {profile_id!r}")
    return Response(status_code=204)
