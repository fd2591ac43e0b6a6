"""The optional push to the user's phone: an ntfy-style HTTP POST when a scheduled run finishes or
waits for an approval.

The body is the first lines of the answer (or the error), the `Title` header the schedule's title
(RFC 2047-encoded when it is not plain ASCII, which ntfy decodes), `Tags` says how it went. A token,
when configured, goes as `Authorization: Bearer …`; extra headers are sent as given. The URL is
the owner's own configuration, so it is not held to the web tools' address rules. A failure (the
server down, a 500, a timeout) is logged and never touches the run.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field

import httpx
import structlog

from navi import redact
from navi.net.tls import ca_context

log = structlog.stdlib.get_logger(__name__)
BODY_LINES = 6
BODY_CHARS = 600


def first_lines(text: str, lines: int = BODY_LINES, chars: int = BODY_CHARS) -> str:
    kept = [line.rstrip() for line in text.strip().splitlines() if line.strip()][:lines]
    out = "\n".join(kept)
    return out if len(out) <= chars else out[: chars - 1] + "…"


def header_text(value: str) -> str:
    """A header value any HTTP stack accepts: ASCII as is, anything else as an RFC 2047 word."""
    value = " ".join(value.split())
    if value.isascii():
        return value
    return "=?UTF-8?B?" + base64.b64encode(value.encode()).decode() + "?="


@dataclass(frozen=True)
class WebhookNotifier:
    url: str
    token: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float = 10.0

    async def notify(self, title: str, body: str, *, tags: str = "") -> bool:
        """POST one notification; False (logged) when it did not get through."""
        headers = {**self.headers, "Title": header_text(title), "Content-Type": "text/plain; charset=utf-8"}
        if tags:
            headers["Tags"] = tags
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        try:
            async with httpx.AsyncClient(
                timeout=self.timeout, follow_redirects=False, verify=ca_context()
            ) as client:
                resp = await client.post(self.url, content=(body or title).encode(), headers=headers)
            if resp.status_code >= 400:
                log.warning("notify.refused", url=redact.url(self.url), status=resp.status_code)
                return False
            return True
        except httpx.HTTPError as exc:
            log.warning("notify.failed", url=redact.url(self.url), error=f"{type(exc).__name__}: {exc}")
            return False
