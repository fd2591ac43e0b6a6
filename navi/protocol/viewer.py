"""Frames of the sign-in viewer's socket, `ws://host/ws/browser/viewer` (navi/api/browser_viewer.py):
a person drives Navi's own headless Chromium from the page — screenshots down, clicks and keys up
— and keeps the result as a named sign-in, as `navi browser login` does from a terminal.

Client frames: `viewer_start` (a sign-in's name and the page to open), `viewer_click` (a point of
the picture, in the page's pixels), `viewer_text` (text typed, never stored nor logged),
`viewer_key` (one key of `KEYS`), `viewer_scroll`, `viewer_save` (keep the sign-in, end) and
`viewer_cancel` (end, keep nothing). Server frames: `viewer_frame` (the page now), `viewer_saved`,
`viewer_error` (the socket stays open unless the viewer ended)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,39}$"
WIDTH, HEIGHT = 1280, 800  # the viewer's page, in CSS pixels
KEYS = ("Enter", "Tab", "Backspace", "Delete", "Escape", "ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight",
        "Home", "End", "PageUp", "PageDown", "Space")  # fmt: skip


class _Client(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", json_schema_extra={"x-navi-side": "client"})


class ViewerStart(_Client):
    type: Literal["viewer_start"]
    name: str = Field(pattern=NAME_PATTERN, description="The sign-in's name (a-z, 0-9, - and _).")
    url: str = Field(min_length=1, max_length=4000, description="The site's sign-in page.")


class ViewerClick(_Client):
    type: Literal["viewer_click"]
    x: float = Field(ge=0, le=WIDTH)
    y: float = Field(ge=0, le=HEIGHT)


class ViewerText(_Client):
    """Text typed at the focused element (a password too: kept nowhere, never logged)."""

    type: Literal["viewer_text"]
    text: str = Field(min_length=1, max_length=1000)


class ViewerKey(_Client):
    type: Literal["viewer_key"]
    key: Literal[KEYS]  # type: ignore[valid-type]


class ViewerScroll(_Client):
    type: Literal["viewer_scroll"]
    dy: float = Field(ge=-5000, le=5000, description="Pixels down (negative: up).")


class ViewerSave(_Client):
    type: Literal["viewer_save"]


class ViewerCancel(_Client):
    type: Literal["viewer_cancel"]


ViewerClientFrame = Annotated[
    ViewerStart | ViewerClick | ViewerText | ViewerKey | ViewerScroll | ViewerSave | ViewerCancel,
    Field(discriminator="type"),
]
VIEWER_CLIENT_ADAPTER: TypeAdapter[Any] = TypeAdapter(ViewerClientFrame)


class _Server(BaseModel):
    model_config = ConfigDict(frozen=True, json_schema_extra={"x-navi-side": "server"})

    def frame(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class ViewerFrame(_Server):
    """The page as it is now: a JPEG of the whole viewport, `width` × `height` page pixels."""

    type: Literal["viewer_frame"] = "viewer_frame"
    image: str = Field(description="data:image/jpeg;base64,…")
    url: str
    title: str
    width: int = WIDTH
    height: int = HEIGHT


class ViewerSaved(_Server):
    type: Literal["viewer_saved"] = "viewer_saved"
    name: str
    sites: list[str] = Field(description="The sites it keeps cookies for (no values).")


class ViewerError(_Server):
    type: Literal["viewer_error"] = "viewer_error"
    message: str
