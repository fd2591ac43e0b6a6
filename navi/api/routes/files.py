"""A conversation's files: `POST /sessions/{id}/files` (multipart), streamed to
`SESSION_FILES_DIR/{id}/`, and `GET /sessions/{id}/files/{name}`, one of them back — an upload, or
a file Navi wrote there (a research report's `.md` and `.pdf`).

A file is served only to the session's owner (another user's session is 404, as one that does not
exist), as a download (`Content-Disposition: attachment`), `nosniff`, under
`Content-Security-Policy: sandbox`: nothing in it runs on Navi's origin. The name is one file of
the session's own folder: a path, a hidden or partial file, or a link that leads out is refused.

A file of a document kind Navi reads (PDF, Office, OpenDocument, Markdown, text, CSV: decided by
its bytes, navi/documents/extract/sniff.py) is also added to the conversation's own collection and
queued for indexing; its `document_id` says which document it became."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path
from urllib.parse import quote

from fastapi import Request, Response
from pydantic import BaseModel

from navi.api.deps import CurrentUser, IndexerDep, OwnedSessionId, RuntimeDep, SharedFilesDep, UploadsDep
from navi.api.document_files import document_kind, may_be_document
from navi.api.errors import BadRequest, NotFound
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


DOWNLOAD_TYPES = {
    "md": "text/markdown; charset=utf-8",
    "pdf": "application/pdf",
    "txt": "text/plain; charset=utf-8",
    "csv": "text/csv; charset=utf-8",
    "json": "application/json",
}


def _file_name(name: str) -> str:
    """`name` when it can only be a file of the session's folder; `BadRequest` otherwise."""
    if (
        not name
        or len(name) > 255
        or name in (".", "..")
        or name.startswith(".")  # the folder's partial uploads, and nothing anyone named
        or any(c in name for c in "/\\\0")
        or Path(name).name != name
    ):
        raise BadRequest("a file of the conversation is named by its name alone")
    return name


def _read_file(folder: Path, name: str) -> bytes | None:
    """The bytes of `folder/name` when it is a regular file there (a link is not followed)."""
    try:
        fd = os.open(folder / name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return None
        return f.read()


@router.get(
    "/{session_id}/files/{name}",
    response_class=Response,
    summary="One file of the conversation's folder (an upload, a report Navi wrote), as a download",
)
async def download(
    session_id: OwnedSessionId, name: str, uploads: UploadsDep, shared: SharedFilesDep
) -> Response:
    name = _file_name(name)
    folder = uploads.folder(session_id)
    data = await asyncio.to_thread(_read_file, folder, name)
    if data is None and shared is not None and await shared.bring(session_id, folder, [name]):
        data = await asyncio.to_thread(_read_file, folder, name)  # kept by another machine
    if data is None:
        raise NotFound(f"no file '{name[:100]}' in this conversation")
    ext = name.rpartition(".")[2].lower() if "." in name else ""
    headers = {
        "Content-Disposition": f"attachment; filename*=UTF-8''{quote(name, safe='')}",
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "sandbox; default-src 'none'",
    }
    return Response(data, media_type=DOWNLOAD_TYPES.get(ext, "application/octet-stream"), headers=headers)


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
