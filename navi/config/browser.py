"""The browser tool's settings (docs/tools.md#browser), a part of `Settings` kept beside it: where
Chromium is, its confinement, its limits, the named sign-ins' folder, and which sign-in each built-in
agent profile opens pages with."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field, field_validator

_SIGN_IN_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")


def agent_sign_ins(raw: str) -> dict[str, str]:
    """`"secretary=shop, server_admin=grafana"` → {agent profile: sign-in}; ValueError saying which
    entry is wrong."""
    pairs: dict[str, str] = {}
    for part in (p.strip() for p in raw.split(",")):
        if not part:
            continue
        agent, sep, name = (p.strip() for p in part.partition("="))
        if not sep or not agent or not _SIGN_IN_NAME.match(name):
            raise ValueError(f"{part!r} is not profile=sign-in (e.g. secretary=shop)")
        pairs[agent] = name
    return pairs


class BrowserConfig(BaseModel):
    # Debian's Chromium under Playwright: where it is, its confinement (auto: bubblewrap if it works,
    # else Chromium's own sandbox when not root), each renderer's JS heap, tabs per conversation, an
    # unused conversation's browser's life, named sign-ins (<dir>/<user>/<name>.json).
    navi_browser_executable: str = "/usr/bin/chromium"
    navi_browser_sandbox: Literal["auto", "bwrap", "chromium", "off"] = "auto"
    navi_browser_memory_mb: int = Field(1024, ge=128)
    navi_browser_max_pages: int = Field(4, ge=1, le=20)
    navi_browser_idle_seconds: int = Field(600, ge=10)
    navi_browser_profiles_dir: str = "browser_profiles"
    # The sign-in each built-in agent profile's browser opens pages with — each user's own sign-in of
    # that name: "secretary=shop,server_admin=grafana". Profiles made on the page choose their own.
    navi_agent_browser_profiles: str = ""

    @field_validator("navi_agent_browser_profiles")
    @classmethod
    def _agent_browser(cls, value: str) -> str:
        agent_sign_ins(value)  # raises, naming the entry that is wrong
        return value.strip()

    @property
    def agent_browser_profiles(self) -> dict[str, str]:
        return agent_sign_ins(self.navi_agent_browser_profiles)
