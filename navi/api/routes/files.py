"""Uploads: `POST /sessions/{id}/files` (multipart), streamed to `SESSION_FILES_DIR/{id}/`."""

from __future__ import annotations

from fastapi import Request
from pydantic import BaseModel

from navi.api.deps import OwnedSessionId, SharedFilesDep, UploadsDep
from navi.api.routing import api_router
from navi.api.uploads import receive_upload

router = api_router(prefix="/sessions", tags=["files"])


class FileOut(BaseModel):
    name: str
    path: str
    size: int
    media_type: str


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
    session_id: OwnedSessionId, request: Request, uploads: UploadsDep, shared: SharedFilesDep
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
    files = [FileOut(name=f.name, path=f.path, size=f.size, media_type=f.media_type) for f in stored]
    return UploadResult(**files[0].model_dump(), files=files)
