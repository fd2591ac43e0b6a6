"""Typed dependencies for route functions.

`CurrentUser` is the name the request acts as (set by `navi.api.security.AccessControl`): the
owner of every session, file, memory fact and remembered approval the request may see. Another
user's session is not found (404), exactly like one that does not exist.

`OwnerDep` guards the few routes that change Navi for everybody (reloading the tools folder):
only the owner — the owner's token or a browser the owner signed in — may call them; another
user gets 403 `owner_only`."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from navi.api.errors import OwnerOnly, Unavailable
from navi.api.identity import user_of
from navi.compose import Runtime
from navi.compose.server import ServerConfig, Uploads
from navi.compose.services import Services
from navi.documents.base import DocumentStore
from navi.documents.indexer import Indexer
from navi.runs import RunManager
from navi.sessions.models import DEFAULT_OWNER, Session, is_session_id
from navi.sessions.store import SessionNotFound
from navi.storage.files import SharedFiles


def get_runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


def get_runs(request: Request) -> RunManager:
    runs: RunManager = request.app.state.runs
    return runs


def get_user(request: Request) -> str:
    return user_of(request.scope)


def get_shared_files(request: Request) -> SharedFiles | None:
    services: Services = request.app.state.services
    return services.files


def get_config(request: Request) -> ServerConfig:
    config: ServerConfig = request.app.state.config
    return config


def get_uploads(config: Annotated[ServerConfig, Depends(get_config)]) -> Uploads:
    return config.uploads


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
RunsDep = Annotated[RunManager, Depends(get_runs)]
CurrentUser = Annotated[str, Depends(get_user)]
ConfigDep = Annotated[ServerConfig, Depends(get_config)]  # the server's typed parts, never settings
UploadsDep = Annotated[Uploads, Depends(get_uploads)]
# Uploads' bytes in the shared database, for workers on other machines (None: one machine).
SharedFilesDep = Annotated[SharedFiles | None, Depends(get_shared_files)]


def get_documents(runtime: RuntimeDep) -> DocumentStore:
    """The documents store; 503 when this Navi has none (documents live in the database)."""
    if runtime.documents is None:
        raise Unavailable("documents need Navi's database; this Navi runs without one")
    return runtime.documents


def get_indexer(request: Request) -> Indexer | None:
    services: Services = request.app.state.services
    return services.indexer


# The documents store (issue 43) and this process's indexer (None: DOCUMENTS_INDEXING is off).
DocumentsDep = Annotated[DocumentStore, Depends(get_documents)]
IndexerDep = Annotated[Indexer | None, Depends(get_indexer)]


def require_owner(user: CurrentUser) -> None:
    if user != DEFAULT_OWNER:
        raise OwnerOnly(
            "only Navi's owner may do this: it changes Navi for every user "
            "(use the owner's token, NAVI_API_TOKEN, or a browser the owner signed in)"
        )


OwnerDep = Depends(require_owner)


async def get_session(session_id: str, runtime: RuntimeDep, user: CurrentUser) -> Session:
    session = await runtime.sessions.get(session_id, owner=user)
    if session is None:
        raise SessionNotFound(session_id)
    return session


async def owned_session_id(session_id: str, runtime: RuntimeDep, user: CurrentUser) -> str:
    """The path's session id when the user owns that session, else 404: for routes that act on a
    run or a file of the session (or stop its run) without reading the whole session."""
    if (
        not is_session_id(session_id)
        or await runtime.sessions.get(session_id, owner=user, display=False) is None
    ):
        raise SessionNotFound(session_id)
    return session_id


SessionDep = Annotated[Session, Depends(get_session)]
OwnedSessionId = Annotated[str, Depends(owned_session_id)]
