"""Typed dependencies for route functions."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from navi.api.runs import RunManager
from navi.compose import Runtime
from navi.sessions.models import Session
from navi.sessions.store import SessionNotFound


def get_runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


def get_runs(request: Request) -> RunManager:
    runs: RunManager = request.app.state.runs
    return runs


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
RunsDep = Annotated[RunManager, Depends(get_runs)]


async def get_session(session_id: str, runtime: RuntimeDep) -> Session:
    session = await runtime.sessions.get(session_id)
    if session is None:
        raise SessionNotFound(session_id)
    return session


SessionDep = Annotated[Session, Depends(get_session)]
