"""Uploads: `POST /sessions/{id}/files` (multipart), streamed to `SESSION_FILES_DIR/{id}/`.

A file of a document kind Navi reads (PDF, Office, OpenDocument, Markdown, text, CSV: decided by
its bytes, navi/documents/extract/sniff.py) is also added to the conversation's own collection and
queued for indexing; its `document_id` says which document it became."""

from __future__ import annotations

import asyncio
from pathlib import Path

from fastapi import Request
from pydantic import BaseModel

from navi.api.deps import CurrentUser, IndexerDep, OwnedSessionId, RuntimeDep, SharedFilesDep, UploadsDep
from navi.api.document_files import document_kind, may_be_document
from navi.api.routing import api_router
from navi.api.uploads import StoredFile, receive_upload
from navi.compose import Runtime
from navi.logging import get_logger

log = get_logger(__name__)

router = api_router(prefix="/sessions", tags=["files"])


class FileOut(BaseModel):
    name: str
    path: str
    size: int
    media_type: str
    # The document it became in the conversation's own collection (a document kind only).
    document_id: str | None = None


class UploadResult(FileOut):
    files: list[FileOut]


@router.post(
    "/{session_id}/files",
    status_code=201,
    response_model=UploadResult,
    summary="Upload files (multipart/form-data); the response gives their paths for the message",
    openapi_extra={
        "requestBody": {
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "properties": {"file": {"type": "string", "format": "binary"}},
                    }
                }
            },
            "required": True,
        }
    },
)
async def upload(
    session_id: OwnedSessionId,
    request: Request,
    uploads: UploadsDep,
    shared: SharedFilesDep,
    runtime: RuntimeDep,
    user: CurrentUser,
    indexer: IndexerDep,
) -> UploadResult:
    folder = uploads.folder(session_id)
    stored = await receive_upload(
        dict(request.headers),
        request.stream(),
        folder,
        max_bytes=uploads.max_bytes,
        public_prefix=folder,
    )
    if shared is not None:  # for a run of this session on another machine
        for f in stored:
            await shared.keep(session_id, folder / f.name)
    documents = await _as_documents(runtime, user, session_id, stored)
    if documents and indexer is not None:
        indexer.poke()
    files = [
        FileOut(
            name=f.name, path=f.path, size=f.size, media_type=f.media_type, document_id=documents.get(f.name)
        )
        for f in stored
    ]
    return UploadResult(**files[0].model_dump(), files=files)


async def _as_documents(
    runtime: Runtime, user: str, session_id: str, stored: list[StoredFile]
) -> dict[str, str]:
    """The uploads of a document kind, added to the conversation's collection: name → document id.
    A file over DOCUMENTS_MAX_BYTES stays a file only. Never fails the upload: the file is there."""
    store = runtime.documents
    if store is None:
        return {}
    limit = runtime.document_settings.limits.max_bytes
    added: dict[str, str] = {}
    for f in stored:
        if f.size > limit or not may_be_document(f.name):
            continue
        try:
            data = await asyncio.to_thread(Path(f.path).read_bytes)
            if await asyncio.to_thread(document_kind, data, f.name) is None:
                continue
            collection = await store.session_collection(user, session_id)
            added[f.name] = (await store.add_document(user, collection.id, f.name, data=data)).id
        except Exception as exc:  # the upload itself succeeded; say why it is no document
            log.warning("documents.upload_not_added", session=session_id, file=f.name, error=str(exc))
    return added
