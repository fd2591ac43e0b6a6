"""`image_view`: put an image (a local file or an http(s) URL) in front of the model.

Before anything is decoded, the size in the image's header is checked against `MAX_PIXELS`: a
small file can declare a huge canvas (a 0.7 MB PNG of 13,000 × 13,000 pixels decodes to 2 GB), and
Pillow's own guard only warns below 179 megapixels. JPEGs are measured at the reduced scale they
are decoded at (`draft`), so a large photo still works. The bytes are then checked with Pillow
(`verify`, then reopened: `verify` leaves the image unusable), turned
upright from EXIF orientation, scaled down so the longest side is at most `max_side` (vision models
downscale anyway, and smaller images cost fewer tokens), and re-encoded: PNG when the image has real
transparency or is a lossless source (screenshots, diagrams — text stays sharp), JPEG for photos and
for PNGs that would be too large. The engine adds the base64 image to the model's context.
"""

from __future__ import annotations

import asyncio
import base64
import os
import re
import stat
from dataclasses import dataclass
from functools import partial
from io import BytesIO
from pathlib import Path
from typing import Any

import httpx

from navi.net.fetch import open_url, web_client
from navi.net.guard import FetchRefused, NetGuard
from navi.tools import safe_io
from navi.tools.base import Tool, ToolResult
from navi.tools.builtin.http import (
    BROWSER_USER_AGENT,
    SNIFF_BYTES,
    check_url,
    declared_length,
    fetch_error,
    human_size,
    looks_binary,
    media_type,
    read_capped,
)
from navi.tools.paths import PathDenied, PathPolicy

MAX_PIXELS = 40_000_000  # decoded at 4 bytes a pixel: 160 MB, before the copies that follow
MAX_ENCODED_BYTES = 3_500_000  # stays under common provider limits (5 MB once base64-encoded)
JPEG_QUALITY = 85
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


@dataclass
class Encoded:
    data: bytes
    media_type: str
    width: int
    height: int
    source_format: str
    original_width: int
    original_height: int
    frames: int


class NotAnImage(ValueError):
    """The bytes are not an image Pillow can read; the message says why."""


def _has_alpha(img: Any) -> bool:
    """Whether the image has transparency that is actually used (not an all-opaque alpha channel)."""
    if img.mode in ("RGBA", "LA", "PA"):
        low, _ = img.getchannel("A").getextrema()
        return bool(low < 255)
    return "transparency" in img.info


def _encode(img: Any, fmt: str, quality: int) -> bytes:
    out = BytesIO()
    if fmt == "JPEG":
        img.save(out, "JPEG", quality=quality, optimize=True)
    else:
        img.save(out, "PNG", optimize=True)
    return out.getvalue()


def _check_pixels(img: Any, declared: tuple[int, int], max_pixels: int) -> None:
    """Refuse an image whose decoded size (after `draft`, for JPEG) is over `max_pixels`; `declared`
    is the size its header gives, for the message."""
    width, height = img.size
    if width * height > max_pixels:
        raise NotAnImage(
            f"the image is {declared[0]:,} × {declared[1]:,} pixels "
            f"({declared[0] * declared[1] / 1e6:,.0f} megapixels); at most {max_pixels / 1e6:,.0f} "
            "megapixels are decoded"
        )


def prepare_image(data: bytes, max_side: int, max_pixels: int = MAX_PIXELS) -> Encoded:
    """Verify, orient, downsize and encode `data`; raises `NotAnImage`."""
    from PIL import ExifTags, Image, ImageOps, UnidentifiedImageError

    bomb = (Image.DecompressionBombError, Image.DecompressionBombWarning)  # the warning too: no "maybe"
    try:
        with Image.open(BytesIO(data)) as probe:  # lazy: reads the header, decodes nothing
            if probe.format != "JPEG":  # a JPEG is measured below, at the scale it is decoded at
                _check_pixels(probe, probe.size, max_pixels)
            probe.verify()
    except NotAnImage:
        raise
    except bomb as exc:
        raise NotAnImage(f"the image has too many pixels to process safely ({exc})") from exc
    except UnidentifiedImageError as exc:
        raise NotAnImage("not an image format Pillow recognises") from exc
    except Exception as exc:  # verify raises assorted errors for corrupt files
        raise NotAnImage(f"the image is corrupt or truncated ({type(exc).__name__}: {exc})") from exc

    try:
        with Image.open(BytesIO(data)) as opened:
            source_format = opened.format or "unknown"
            frames = getattr(opened, "n_frames", 1)
            original = opened.size
            if opened.getexif().get(ExifTags.Base.Orientation) in (5, 6, 7, 8):  # rotated a quarter turn
                original = (original[1], original[0])
            declared = opened.size
            if source_format == "JPEG":
                opened.draft(opened.mode, (max_side, max_side))  # decode at a reduced scale when possible
            _check_pixels(opened, declared, max_pixels)
            img = ImageOps.exif_transpose(opened)
            img.load()
    except NotAnImage:
        raise
    except bomb as exc:
        raise NotAnImage(f"the image has too many pixels to process safely ({exc})") from exc
    except Exception as exc:
        raise NotAnImage(f"the image could not be decoded ({type(exc).__name__}: {exc})") from exc

    alpha = _has_alpha(img)
    if alpha and img.mode not in ("RGBA", "LA"):
        img = img.convert("RGBA")
    elif not alpha and img.mode not in ("RGB", "L"):
        img = img.convert("RGB")

    if max(img.size) > max_side:
        img.thumbnail((max_side, max_side), Image.Resampling.LANCZOS)

    fmt = "JPEG" if source_format in ("JPEG", "MPO") and not alpha else "PNG"
    quality = JPEG_QUALITY
    encoded = _encode(img, fmt, quality)
    while len(encoded) > MAX_ENCODED_BYTES:
        if fmt == "PNG" and not alpha:
            fmt = "JPEG"
        elif fmt == "JPEG" and quality > 50:
            quality -= 15
        else:
            img = img.resize(
                (max(1, img.width * 3 // 4), max(1, img.height * 3 // 4)), Image.Resampling.LANCZOS
            )
        encoded = _encode(img, fmt, quality)
    return Encoded(
        data=encoded,
        media_type=f"image/{fmt.lower()}",
        width=img.width,
        height=img.height,
        source_format=source_format,
        original_width=original[0],
        original_height=original[1],
        frames=frames,
    )


class ImageViewTool(Tool):
    name = "image_view"
    description = (
        "See an image (any common format) from a local path in the allowed folders or an http(s) "
        "URL, downscaled when large."
    )
    parameters = {
        "type": "object",
        "properties": {
            "source": {"type": "string", "minLength": 1},
        },
        "required": ["source"],
        "additionalProperties": False,
    }
    timeout = 60.0

    def __init__(
        self,
        policy: PathPolicy,
        max_side: int = 1568,
        max_bytes: int = 20_000_000,
        *,
        guard: NetGuard | None = None,
        max_pixels: int = MAX_PIXELS,
    ) -> None:
        """Without `guard`, URLs get the strictest one: no allowlist, nothing private or local."""
        self.policy = policy
        self.guard = guard or NetGuard()
        self.max_side = max_side
        self.max_bytes = max_bytes
        self.max_pixels = max_pixels
        self.fetch_timeout = 30.0

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        source = params["source"].strip()
        lowered = source.lower()
        if lowered.startswith(("http://", "https://")):
            loaded = await self._fetch(source)
        elif lowered.startswith("file://"):
            loaded = await asyncio.to_thread(self._read_local, source[len("file://") :], source)
        elif _SCHEME.match(source) or lowered.startswith("data:"):
            return ToolResult.fail(f"unsupported source {source[:80]!r}: give a local path or an http(s) URL")
        else:
            loaded = await asyncio.to_thread(self._read_local, source, source)
        if isinstance(loaded, ToolResult):
            return loaded
        try:
            image = await asyncio.to_thread(prepare_image, loaded, self.max_side, self.max_pixels)
        except NotAnImage as exc:
            return ToolResult.fail(f"{source} is not a usable image: {exc}{self._not_image_hint(loaded)}")
        return self._result(source, len(loaded), image)

    def _not_secret(self, raw: str, st: os.stat_result) -> None:
        """Refuse one of Navi's secrets by its status, before `safe_io` opens it."""
        if self.policy.is_secret_file(st):
            raise self.policy.secret_denied(raw)

    def _read_local(self, raw: str, source: str) -> bytes | ToolResult:
        """The file's bytes, opened through `safe_io` (no symlink followed after the check) and
        checked again, by inode, against Navi's secrets."""
        try:
            path: Path = self.policy.resolve(raw)
            with safe_io.opened(
                path, os.O_RDONLY | os.O_NONBLOCK, check=partial(self._not_secret, raw)
            ) as fd:
                st = os.fstat(fd)
                if stat.S_ISDIR(st.st_mode):
                    return ToolResult.fail(f"{source} is a directory, not an image file")
                if not stat.S_ISREG(st.st_mode):
                    return ToolResult.fail(f"{source} is not a regular file (a device, FIFO or socket)")
                if self.policy.is_secret_file(st):
                    raise self.policy.secret_denied(raw)
                if st.st_size > self.max_bytes:
                    return ToolResult.fail(
                        f"{source} is {human_size(st.st_size)}, over the {human_size(self.max_bytes)} "
                        "limit for images"
                    )
                with open(fd, "rb", closefd=False) as fh:
                    data = fh.read(self.max_bytes + 1)
            if len(data) > self.max_bytes:  # it grew since
                return ToolResult.fail(f"{source} is over the {human_size(self.max_bytes)} limit for images")
            return data
        except PathDenied as exc:
            return ToolResult.fail(str(exc))
        except FileNotFoundError:
            return ToolResult.fail(f"{source} does not exist")
        except PermissionError:
            return ToolResult.fail(f"permission denied reading {source}")
        except OSError as exc:
            return ToolResult.fail(f"could not read {source}: {exc.strerror or exc}")

    async def _fetch(self, url: str) -> bytes | ToolResult:
        if problem := check_url(url):
            return ToolResult.fail(problem)
        headers = {"User-Agent": BROWSER_USER_AGENT, "Accept": "image/*,*/*;q=0.5"}
        too_big = f"the image at {url} is larger than the {human_size(self.max_bytes)} limit"
        try:
            async with (
                asyncio.timeout(self.fetch_timeout),
                web_client(self.guard, self.fetch_timeout, headers) as client,
                open_url(client, "GET", url) as response,
            ):
                if response.status_code >= 400:
                    reason = f" {response.reason_phrase}" if response.reason_phrase else ""
                    return ToolResult.fail(f"HTTP {response.status_code}{reason} fetching {url}")
                mtype = media_type(response)
                if mtype in ("text/html", "application/xhtml+xml"):
                    return ToolResult.fail(
                        f"{url} is a web page ({mtype}), not an image; use web_view to read it, or find "
                        "the image's own URL"
                    )
                length = declared_length(response)
                if length is not None and length > self.max_bytes:
                    return ToolResult.fail(f"{too_big} ({human_size(length)})")
                data, cut = await read_capped(response, self.max_bytes)
        except (httpx.HTTPError, TimeoutError, FetchRefused) as exc:
            return ToolResult.fail(fetch_error(exc, url, self.fetch_timeout))
        if cut:
            return ToolResult.fail(too_big)
        return data

    @staticmethod
    def _not_image_hint(data: bytes) -> str:
        head = data[:SNIFF_BYTES]
        if not head:
            return " (the file is empty)"
        if not looks_binary(head):
            return " (it looks like text; read it with the filesystem tool or web_view instead)"
        return ""

    def _result(self, source: str, size: int, image: Encoded) -> ToolResult:
        fmt = image.media_type.split("/")[1].upper()
        orig = f"{image.original_width}×{image.original_height}"
        new = f"{image.width}×{image.height}"
        resized = (
            f", resized to {new}"
            if (image.width, image.height)
            != (
                image.original_width,
                image.original_height,
            )
            else ""
        )
        frames = f", first of {image.frames} frames" if image.frames > 1 else ""
        description = (
            f"{image.source_format} image {orig} ({human_size(size)}) from {source}{resized}{frames}; "
            f"shown as {fmt} ({human_size(len(image.data))})."
        )
        return ToolResult.ok(
            description,
            is_image=True,
            base64=base64.b64encode(image.data).decode("ascii"),
            media_type=image.media_type,
            width=image.width,
            height=image.height,
            original_width=image.original_width,
            original_height=image.original_height,
            source_format=image.source_format,
        )
