"""The browser's signed-in profiles: `GET /browser/profiles`, `DELETE /browser/profiles/{name}`.

A profile is made by signing in once with `navi browser login NAME URL` (docs/tools.md); here a
user sees their own — each with the sites it holds cookies for, never a cookie's value — and
deletes one. Another user's profile answers 404 like one that does not exist.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Annotated

from fastapi import Path as PathParam
from fastapi import Response
from pydantic import BaseModel, Field

from navi.api.deps import CurrentUser, RuntimeDep
from navi.api.errors import NotFound
from navi.api.routing import api_router
from navi.tools.builtin.browser.profiles import NAME, ProfileError, Profiles

router = api_router(prefix="/browser", tags=["browser"])
Name = Annotated[str, PathParam(min_length=1, max_length=40, pattern=NAME.pattern)]


class BrowserProfileOut(BaseModel):
    name: str
    sites: list[str] = Field(description="The sites it keeps cookies for (their domains, no values)")
    updated_at: datetime = Field(
        description="When the sign-in was last written (login, or a browser closing)"
    )


class BrowserProfileList(BaseModel):
    profiles: list[BrowserProfileOut]


def _profiles(runtime: RuntimeDep) -> Profiles | None:
    return runtime.browser.pool.profiles if runtime.browser is not None else None


def _described(profiles: Profiles, user: str) -> list[BrowserProfileOut]:
    out = []
    for name in profiles.names(user):
        try:
            state = profiles.load(user, name)
            when = profiles.path(user, name).stat().st_mtime
        except (ProfileError, OSError):
            continue
        domains = {str(c.get("domain", "")).lstrip(".") for c in state["cookies"] if isinstance(c, dict)}
        sites = sorted(d for d in domains if d)
        out.append(BrowserProfileOut(name=name, sites=sites, updated_at=datetime.fromtimestamp(when, UTC)))
    return out


@router.get("/profiles", response_model=BrowserProfileList, summary="Your browser profiles (named sign-ins)")
async def list_profiles(runtime: RuntimeDep, user: CurrentUser) -> BrowserProfileList:
    profiles = _profiles(runtime)
    if profiles is None:
        return BrowserProfileList(profiles=[])
    return BrowserProfileList(profiles=await asyncio.to_thread(_described, profiles, user))


@router.delete("/profiles/{name}", status_code=204, summary="Delete one of your browser profiles")
async def delete_profile(name: Name, runtime: RuntimeDep, user: CurrentUser) -> Response:
    profiles = _profiles(runtime)
    try:
        removed = profiles is not None and await asyncio.to_thread(profiles.remove, user, name)
    except ProfileError as exc:
        raise NotFound(str(exc)) from exc
    if not removed:
        raise NotFound(f"no browser profile named '{name}'")
    return Response(status_code=204)
