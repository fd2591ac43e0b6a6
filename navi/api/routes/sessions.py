"""Session resources: create, list, read, rename, pin, delete, context, planning, archives, windows
(their analytics: analysis.py)."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import Body, Query, Request, Response
from pydantic import BaseModel, Field

from navi.api.deps import ConfigDep, CurrentUser, OwnedSessionId, RunsDep, RuntimeDep, SessionDep
from navi.api.errors import BadRequest, NotFound
from navi.api.model_choice import check_model
from navi.api.routing import api_router
from navi.api.turns import new_session
from navi.archive.markdown import conversation_markdown, export_filename, title_of
from navi.files.pdf import markdown_pdf
from navi.llm.messages import Message
from navi.profiles.custom import MAX_PROFILE_PROMPT
from navi.sessions import shown
from navi.sessions.archive import parse_archive, settle_profile
from navi.sessions.foreign import bring_in, parse_any, parse_export
from navi.sessions.models import Session, SessionInfo
from navi.sessions.store import SessionNotFound
from navi.sessions.windows import window

router = api_router(prefix="/sessions", tags=["sessions"])
ZIP_TYPES = ("application/zip", "application/x-zip-compressed", "application/octet-stream")
WINDOW_LOOKUP_SECONDS = 3.0  # a first lookup of a model's window; the configured size meanwhile


class CreateSession(BaseModel):
    profile_id: str | None = Field(
        default=None, description="Profile to start in (default: the first profile)"
    )
    name: str | None = Field(default=None, max_length=200)
    temporary: bool = Field(
        default=False,
        description="A temporary chat: left out of the list and of memory, deleted when the page closes it",
    )


class Created(BaseModel):
    session_id: str
    profile_id: str
    created_at: datetime
    name: str | None = None
    temporary: bool = False


class SessionListItem(SessionInfo):
    active: bool = False
    # A scheduled run answered here since the page last marked it read (POST /sessions/{id}/read).
    unread: bool = False


class SessionDetail(SessionListItem):
    messages: list[shown.ShownMessage]
    max_context_tokens: int
    # The context size from which the session is compressed (None: compression is off).
    compress_at_tokens: int | None = None
    # The leaf the next turn appends below (None: no message yet, or a new first message is next).
    active_leaf: str | None = None
    # The model picked for this conversation, "backend:model" (None: its profile's).
    model: str | None = None
    # This conversation's own instructions, a layer of its system prompt (None: none).
    system_prompt: str | None = None


ContextKind = Literal["stored", "model"]


class ContextView(BaseModel):
    system_prompt: str
    memory: str | None
    messages: list[Message]
    context_token_count: int
    view: ContextKind = "stored"


class Pin(BaseModel):
    pinned: bool


class Update(BaseModel):
    name: str | None = Field(None, max_length=200, description="New name; empty or null clears it")
    profile_id: str | None = None
    model: str | None = Field(
        None,
        max_length=300,
        description="This conversation's model, \"backend:model\" (GET /models); empty: its profile's",
    )
    system_prompt: str | None = Field(
        None, max_length=MAX_PROFILE_PROMPT, description="This conversation's own instructions; empty: none"
    )
    folder: str | None = Field(
        None, max_length=100, description="Put it in this folder (a name); empty or null: in none"
    )
    archived: bool | None = Field(None, description="true: archive it (left out of the list); false: back")


class Ok(BaseModel):
    ok: bool = True


class FolderRename(BaseModel):
    folder: str = Field(min_length=1, max_length=100, description="The folder's name now")
    to: str = Field(min_length=1, max_length=100, description="Its new name (an existing folder's: merged)")


class FolderRenamed(BaseModel):
    folder: str
    moved: int  # the conversations now in it under its new name, archived ones too


class Imported(BaseModel):
    session_id: str
    messages: int


class ImportedConversation(BaseModel):
    session_id: str
    name: str | None
    messages: int


class ImportedExport(BaseModel):
    """What `POST /sessions/import?from=…` stored: new sessions, and how many were there already."""

    imported: list[ImportedConversation]
    skipped: int
    # What the file was: "chatgpt", "claude" or (with `from=auto`) "navi", a Navi archive.
    source: str | None = None


class Window(BaseModel):
    messages: list[Message]
    total: int
    summary_prepended: bool


@router.post("", status_code=201, response_model=Created, summary="Create a session")
async def create_session(
    request: Request,
    runtime: RuntimeDep,
    user: CurrentUser,
    body: Annotated[CreateSession | None, Body()] = None,
) -> Created:
    body = body or CreateSession()
    profile_id = body.profile_id or runtime.profiles.default_id
    runtime.profiles.usable(profile_id, user)
    session = await new_session(runtime, profile_id, user, name=body.name or None, temporary=body.temporary)
    return Created(
        session_id=session.id,
        profile_id=profile_id,
        created_at=session.created_at,
        name=session.name,
        temporary=session.temporary,
    )


@router.get("", response_model=list[SessionListItem], summary="List sessions, pinned first")
async def list_sessions(
    runtime: RuntimeDep,
    runs: RunsDep,
    user: CurrentUser,
    archived: Annotated[
        bool, Query(description="true: only the archived sessions (they are left out otherwise)")
    ] = False,
) -> list[SessionListItem]:
    """Temporary chats are never listed."""
    active = await runs.slots.busy()
    unread = await runtime.schedules.store.unread(owner=user)
    return [
        SessionListItem(**info.model_dump(), active=info.id in active, unread=info.id in unread)
        for info in await runtime.sessions.list(owner=user)
        if info.archived == archived and not info.temporary
    ]


def folder_name(name: str) -> str:
    """A folder's name as kept: runs of white space made one space, none at the ends."""
    return " ".join(name.split())


@router.post("/folders/rename", response_model=FolderRenamed, summary="Rename one of your folders")
async def rename_folder(body: FolderRename, runtime: RuntimeDep, user: CurrentUser) -> FolderRenamed:
    """Every conversation of yours in `folder` (archived ones too) moves to `to`; open pages see each
    move (`session_updated`). No conversation of yours in `folder`: 404, nothing changed."""
    old, new = folder_name(body.folder), folder_name(body.to)
    if not old or not new:
        raise BadRequest("a folder's name needs a letter, a digit or a sign, not only spaces")
    moved = await runtime.sessions.rename_folder(old, new, owner=user) if old != new else None
    if moved is None:
        moved = [i.id for i in await runtime.sessions.list(owner=user) if i.folder == old]
    if not moved:
        raise NotFound(f"no conversation of yours is in a folder {old!r}")
    return FolderRenamed(folder=new, moved=len(moved))


@router.get("/{session_id}", response_model=SessionDetail, summary="A session with its display history")
async def get_session(
    session_id: str,
    runtime: RuntimeDep,
    runs: RunsDep,
    user: CurrentUser,
    branch: Annotated[
        str | None,
        Query(max_length=64, description="A message id: show the path to the newest leaf below it"),
    ] = None,
) -> SessionDetail:
    """The display path: to the active leaf, or with `branch` to another one (the active leaf
    stays: `POST /sessions/{id}/branch` switches)."""
    session = await runtime.sessions.get(session_id, owner=user, branch=branch)
    if session is None:
        raise SessionNotFound(session_id)
    # The window the session's next turn gets: the same service the engine asks (stream_end).
    window = await runtime.agent.windows.for_profile(
        await runtime.agent.session_profile(session), wait=WINDOW_LOOKUP_SECONDS
    )
    return SessionDetail(
        **session.info().model_dump(exclude={"message_count"}),
        message_count=len(session.messages),
        active=session.id in await runs.slots.busy(session.id),
        unread=session.id in await runtime.schedules.store.unread(owner=session.owner),
        messages=shown.path(session),
        active_leaf=session.active_leaf or None,
        max_context_tokens=window,
        compress_at_tokens=runtime.agent.compressor.starts_at(window),
        model=session.model,
        system_prompt=session.system_prompt,
    )


@router.get("/{session_id}/context", response_model=ContextView, summary="What the model sees")
async def get_context(
    session: SessionDep,
    runtime: RuntimeDep,
    view: Annotated[
        ContextKind,
        Query(
            description="`stored`: the context buffer as stored; `model`: the messages the next model "
            "call sends (built as the agent builds them: old long messages shortened with their "
            "recall keys, plans in the system prompt)"
        ),
    ] = "stored",
) -> ContextView:
    profile = await runtime.agent.session_profile(session)
    memory = await runtime.memory.get_summary(owner=session.owner)
    built = runtime.agent.model_view(profile, session.context, memory, owner=session.owner)
    return ContextView(
        system_prompt=built[0].content or "",
        memory=memory,
        messages=shown.messages(built[1:] if view == "model" else session.context),
        context_token_count=session.context_token_count,
        view=view,
    )


@router.get("/{session_id}/planning", summary="Raw planning-phase outputs, per turn")
async def get_planning(session: SessionDep) -> list[dict[str, Any]]:
    return session.planning_logs


@router.patch("/{session_id}/pin", response_model=Pin, summary="Pin or unpin a session")
async def pin_session(session_id: str, body: Pin, runtime: RuntimeDep, user: CurrentUser) -> Pin:
    if not await runtime.sessions.set_pinned(session_id, body.pinned, owner=user):
        raise SessionNotFound(session_id)
    return body


@router.patch(
    "/{session_id}",
    response_model=SessionListItem,
    summary="Rename a session, change its profile or model, or give it its own instructions",
)
async def update_session(
    session_id: OwnedSessionId, body: Update, runtime: RuntimeDep, runs: RunsDep, user: CurrentUser
) -> SessionListItem:
    options = {
        k: (getattr(body, k) or "").strip() or None
        for k in ("model", "system_prompt")
        if getattr(body, k) is not None
    }
    placing = "folder" in body.model_fields_set or body.archived is not None
    if "name" not in body.model_fields_set and body.profile_id is None and not options and not placing:
        raise BadRequest("send `name`, `profile_id`, `model`, `system_prompt`, `folder` and/or `archived`")
    if body.profile_id is not None:
        runtime.profiles.usable(body.profile_id, user)
    if options.get("model"):
        check_model(runtime.backends, options["model"] or "")
    if options and not await runtime.sessions.set_options(session_id, owner=user, **options):
        raise SessionNotFound(session_id)
    if "name" in body.model_fields_set:
        name = (body.name or "").strip() or None
        if not await runtime.sessions.set_name(session_id, name, owner=user):
            raise SessionNotFound(session_id)
    if body.profile_id is not None and not await runtime.sessions.set_profile(session_id, body.profile_id):
        raise SessionNotFound(session_id)
    if placing:
        folder = folder_name(body.folder or "") or None
        where: dict[str, Any] = {"folder": folder} if "folder" in body.model_fields_set else {}
        if not await runtime.sessions.set_place(session_id, owner=user, archived=body.archived, **where):
            raise SessionNotFound(session_id)
    session = await runtime.sessions.get(session_id, owner=user, display=False)
    if session is None:
        raise SessionNotFound(session_id)
    return SessionListItem(
        **session.info().model_dump(),
        active=session_id in await runs.slots.busy(session_id),
        unread=session_id in await runtime.schedules.store.unread(owner=user),
    )


@router.post("/{session_id}/read", response_model=Ok, summary="Mark a session read (clears `unread`)")
async def mark_read(session_id: OwnedSessionId, runtime: RuntimeDep, user: CurrentUser) -> Ok:
    """The page calls this when it shows the session; marking a read session read is no error."""
    await runtime.schedules.store.mark_read(session_id, owner=user)
    return Ok()


@router.delete("/{session_id}", response_model=Ok, summary="Delete a session and its uploaded files")
async def delete_session(
    session_id: OwnedSessionId, runtime: RuntimeDep, runs: RunsDep, user: CurrentUser
) -> Ok:
    if await runs.controls.stop(session_id):
        await runs.controls.wait(session_id, limit=15)
    if not await runtime.sessions.delete(session_id, owner=user):
        raise SessionNotFound(session_id)
    await runtime.agent.end_session(session_id)
    return Ok()


@router.get(
    "/{session_id}/export",
    summary="Export a session: session-archive/v1 JSON, Markdown or PDF",
    responses={
        200: {
            "content": {
                "application/json": {},
                "text/markdown": {"schema": {"type": "string"}},
                "application/pdf": {"schema": {"type": "string", "format": "binary"}},
            }
        }
    },
)
async def export_session(
    session: SessionDep,
    runtime: RuntimeDep,
    format: Annotated[
        Literal["json", "markdown", "pdf"],
        Query(description="`json`: the archive Navi imports again; `markdown`, `pdf`: to read and keep"),
    ] = "json",
) -> Any:
    """Markdown and PDF hold the active branch's messages as a person saw them
    (navi/archive/markdown.py), each with who said it and when; the JSON archive holds everything."""
    if format == "json":
        return await runtime.export_archive(session)
    text = conversation_markdown(session)
    name = export_filename(session, "md" if format == "markdown" else "pdf")
    headers = {"Content-Disposition": f'attachment; filename="{name}"'}
    if format == "markdown":
        return Response(text, media_type="text/markdown; charset=utf-8", headers=headers)
    body = await asyncio.to_thread(markdown_pdf, text, title=title_of(session))
    return Response(body, media_type="application/pdf", headers=headers)


@router.post(
    "/import",
    status_code=201,
    response_model=Imported | ImportedExport,
    summary="Import a session-archive/v1 document, or a ChatGPT or Claude export (`?from=`)",
    openapi_extra={
        "requestBody": {
            "content": {"application/json": {"schema": {"type": "object", "title": "session-archive/v1"}}},
            "required": True,
        }
    },
)
async def import_session(
    request: Request,
    runtime: RuntimeDep,
    config: ConfigDep,
    user: CurrentUser,
    origin: Annotated[
        Literal["chatgpt", "claude", "auto"] | None,
        Query(
            alias="from",
            description="The body is a ChatGPT or Claude export (the `.zip` the service sends, or its "
            "conversations.json), as JSON or as the `file` field of a multipart upload: each "
            "conversation becomes a session. `auto`: whichever of the two it is, or a Navi archive",
        ),
    ] = None,
) -> Imported | ImportedExport:
    """The body is read whole (at most NAVI_IMPORT_MAX_MB, counted by navi/api/limits.py) and
    parsed, validated and rebuilt on a worker thread: a large archive never stalls other clients."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if origin is not None:
        return await _import_export(request, kind, origin, runtime, config, user)
    if kind != "application/json" and not kind.endswith("+json"):
        raise BadRequest("send the archive as application/json")
    body = await request.body()
    session = await asyncio.to_thread(parse_archive, body, max_messages=config.import_max_messages)
    session.owner = user  # an archive names no owner that counts: the importer's session
    settle_profile(session, runtime.profiles.ids(), runtime.profiles.default_id)
    await runtime.sessions.insert(session)
    return Imported(session_id=session.id, messages=len(session.messages))


async def _import_export(
    request: Request, kind: str, origin: str, runtime: Any, config: Any, user: str
) -> ImportedExport:
    if kind == "multipart/form-data":
        form = await request.form(max_files=1, max_fields=10)
        try:
            upload = form.get("file")
            if upload is None or isinstance(upload, str):
                raise BadRequest("send the export as the `file` field of the upload")
            body = await upload.read()
        finally:
            await form.close()
    elif (
        kind == "application/json"
        or kind.endswith("+json")
        or kind in ("application/zip", "application/x-zip-compressed", "application/octet-stream")
    ):
        body = await request.body()
    else:
        raise BadRequest("send the export as application/json, a zip, or a multipart upload (`file`)")
    limits = {
        "max_messages": config.import_max_messages,
        "max_file_messages": config.import_max_file_messages,
        "max_bytes": config.import_max_bytes,
    }
    if origin == "auto":
        found, parsed = await asyncio.to_thread(lambda: parse_any(body, **limits))
        if isinstance(parsed, Session):  # a Navi archive: one session, under a new id
            parsed.owner = user
            settle_profile(parsed, runtime.profiles.ids(), runtime.profiles.default_id)
            await runtime.sessions.insert(parsed)
            done = ImportedConversation(session_id=parsed.id, name=parsed.name, messages=len(parsed.messages))
            return ImportedExport(source=found, imported=[done], skipped=0)
        conversations = parsed
    else:
        found = origin
        conversations = await asyncio.to_thread(lambda: parse_export(origin, body, **limits))
    report = await bring_in(
        runtime.sessions, conversations, owner=user, profile_id=runtime.profiles.default_id
    )
    return ImportedExport(
        source=found,
        imported=[
            ImportedConversation(session_id=s.id, name=s.name, messages=len(s.messages))
            for s in report.imported
        ],
        skipped=len(report.skipped),
    )


@router.get("/{session_id}/messages", response_model=Window, summary="A window of the display history")
async def history_window(
    session: SessionDep,
    last: Annotated[int | None, Query(ge=0, description="Only the last N messages")] = None,
    since: Annotated[datetime | None, Query(description="Messages at or after this time (ISO 8601)")] = None,
    until: Annotated[datetime | None, Query(description="Messages at or before this time (ISO 8601)")] = None,
    token_budget: Annotated[
        int | None, Query(ge=0, description="Newest messages that fit this many tokens")
    ] = None,
    include_summary: Annotated[
        bool, Query(description="false: never put the summary in front of a window that left messages out")
    ] = True,
) -> Window:
    summary = session.summary_message if include_summary else None
    chosen = await asyncio.to_thread(
        window,
        session.messages,
        last_n=last,
        since=since,
        until=until,
        token_budget=token_budget,
        summary=summary,
    )
    prepended = bool(chosen) and summary is not None and chosen[0] is summary
    return Window(messages=shown.messages(chosen), total=len(session.messages), summary_prepended=prepended)
