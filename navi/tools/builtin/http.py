"""`http_request`: a plain HTTP client for APIs (Home Assistant, health endpoints, webhooks).

Also home to the helpers `web_view` and `image_view` share: URL checks, a size-capped body reader,
content-type classification, charset decoding and error messages the model can act on. The
connections themselves go through `navi/net/fetch.py`, which refuses this machine and private networks
(`NetGuard`) unless the user allowed them.

Decisions worth knowing:
- A non-2xx status is a successful call: the model needs to see the 404 or 500 and its body.
  Invalid URLs, connection failures, timeouts and redirect loops are failures.
- Response headers are shown in full (long values clipped), except that `set-cookie` values are
  replaced by `<redacted>` (name and attributes stay): session cookies are credentials that would
  otherwise sit in the conversation history and logs, and an API client rarely needs them.
- A `json` argument that is a string holding a JSON object or array is sent as that object or
  array: models often double-encode, and an API almost never wants a JSON string of JSON.
- Bodies are read up to `max_read_bytes`; the text shown is capped at `max_body_chars` with a note
  saying how much was dropped. JSON is pretty-printed; binary bodies are summarised, never dumped.
"""

from __future__ import annotations

import asyncio
import codecs
import json
import re
import socket
import time
import urllib.parse
from typing import Any

import httpx

from navi.net.fetch import MAX_REDIRECTS, open_url, web_client
from navi.net.guard import FetchRefused, NetGuard
from navi.tools.base import Tool, ToolResult

BROWSER_USER_AGENT = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"
)
API_USER_AGENT = "Navi/0.1 (http_request)"
SNIFF_BYTES = 4096


_TEXT_APPLICATION_TYPES = {
    "application/javascript",
    "application/ecmascript",
    "application/x-javascript",
    "application/x-yaml",
    "application/yaml",
    "application/toml",
    "application/x-www-form-urlencoded",
    "application/x-sh",
    "application/sql",
    "application/graphql",
    "application/x-ndjson",
    "application/csv",
}
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


# --- shared helpers (also used by web_view and image_view) -------------------------------------------
def check_url(url: str) -> str | None:
    """Why `url` cannot be fetched, or None when it is an absolute http(s) URL with a host."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError, TypeError) as exc:
        return f"invalid URL {url!r}: {exc}"
    if parsed.scheme not in ("http", "https"):
        shown = f"'{parsed.scheme}://'" if parsed.scheme else "no scheme"
        return f"only http:// and https:// URLs are supported (got {shown}): {url!r}"
    netloc = urllib.parse.urlsplit(url).netloc
    if not parsed.host or any(c.isspace() for c in netloc):
        return f"invalid URL {url!r}: it needs a host name, like https://example.com/page"
    return None


def human_size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def media_type(response: httpx.Response) -> str:
    """The response's media type, lower-cased and without parameters ('' when missing)."""
    return response.headers.get("content-type", "").split(";")[0].strip().lower()


def declared_length(response: httpx.Response) -> int | None:
    value = response.headers.get("content-length", "")
    return int(value) if value.isdigit() else None


def classify(mtype: str, head: bytes = b"") -> str:
    """One of html, json, xml, text or binary, from the media type, sniffing `head` when unsure."""
    if mtype in ("text/html", "application/xhtml+xml"):
        return "html"
    if mtype == "application/json" or mtype.endswith("+json") or mtype == "text/json":
        return "json"
    if mtype in ("application/xml", "text/xml") or mtype.endswith("+xml"):
        return "xml"
    if mtype.startswith("text/") or mtype in _TEXT_APPLICATION_TYPES:
        return "text"
    if mtype and mtype not in ("application/octet-stream", "binary/octet-stream", "application/unknown"):
        return "binary"
    # Missing or generic type: look at the bytes.
    if not head or looks_binary(head):
        return "binary" if head else "text"
    start = head.lstrip()[:256].lower()
    if start.startswith((b"<!doctype html", b"<html")):
        return "html"
    if start.startswith((b"{", b"[")):
        return "json"
    if start.startswith(b"<?xml"):
        return "xml"
    return "text"


def looks_binary(head: bytes) -> bool:
    if b"\x00" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return not _cut_at_end(exc, head)  # a multi-byte character cut at the sniff boundary is fine
    return False


def _cut_at_end(exc: UnicodeDecodeError, data: bytes) -> bool:
    return exc.reason == "unexpected end of data" and exc.end >= len(data)


def decode(body: bytes, charset: str | None, *, html: bool = False) -> str:
    """Text from bytes: the declared charset, else an HTML meta charset, else UTF-8, else cp1252."""
    candidates = [charset] if charset else []
    if html:
        found = _META_CHARSET.search(body[:SNIFF_BYTES])
        if found:
            candidates.append(found.group(1).decode("ascii", "replace"))
    for name in candidates:
        try:
            codecs.lookup(name)
        except LookupError:
            continue
        return body.decode(name, errors="replace")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        if _cut_at_end(exc, body):  # a character cut by the size cap
            return body.decode("utf-8", errors="replace")
        return body.decode("cp1252", errors="replace")


def response_charset(response: httpx.Response) -> str | None:
    match = re.search(r"charset\s*=\s*[\"']?([A-Za-z0-9_.:-]+)", response.headers.get("content-type", ""))
    return match.group(1) if match else None


async def read_capped(response: httpx.Response, max_bytes: int) -> tuple[bytes, bool]:
    """Up to `max_bytes` of the (decompressed) body, and whether more was left unread."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        remaining = max_bytes - size
        if len(chunk) > remaining:
            chunks.append(chunk[:remaining])
            return b"".join(chunks), True
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks), False


def fetch_error(exc: BaseException, url: str, timeout: float) -> str:
    """A message the model can act on for a failed request."""
    host = urllib.parse.urlsplit(url).hostname or url
    if isinstance(exc, FetchRefused):  # the message names the address, the reason and the setting
        return str(exc)
    if isinstance(exc, httpx.TooManyRedirects):
        return f"too many redirects (more than {MAX_REDIRECTS}) fetching {url}; the site is probably looping"
    if isinstance(exc, (httpx.TimeoutException, TimeoutError)):
        return f"timed out after {timeout:g} s fetching {url}; the server is slow or unreachable"
    if isinstance(exc, httpx.ConnectError):
        causes = _causes(exc)
        text = " ".join(str(c) for c in causes).lower()
        dns_markers = (
            "name or service",
            "name resolution",
            "nodename",
            "getaddrinfo",
            "no address associated",
        )
        if any(isinstance(c, socket.gaierror) for c in causes) or any(m in text for m in dns_markers):
            return f"could not resolve host '{host}': check the spelling of the URL"
        if any(isinstance(c, ConnectionRefusedError) for c in causes) or "refused" in text:
            return f"connection refused by {host}: nothing is listening there (is the service running?)"
        return f"could not connect to {host}: {causes[-1] or type(causes[-1]).__name__}"
    if isinstance(exc, httpx.LocalProtocolError):  # e.g. a header value with a line break
        return f"could not send the request: {exc}"
    if isinstance(exc, httpx.UnsupportedProtocol):
        return f"{url} redirected to a URL that is not http(s): {exc}"
    if isinstance(exc, httpx.InvalidURL):
        return f"invalid URL {url!r}: {exc}"
    if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)):
        return f"the connection to {host} broke: {exc or type(exc).__name__}"
    return f"request to {url} failed: {type(exc).__name__}: {exc}"


def _causes(exc: BaseException) -> list[BaseException]:
    """`exc` and the exceptions behind it, outermost first (httpx hides the OS error's details)."""
    chain = [exc]
    while (nxt := chain[-1].__cause__ or chain[-1].__context__) is not None and len(chain) < 10:
        chain.append(nxt)
    return chain


def clip(text: str, max_chars: int) -> tuple[str, int]:
    """`text` cut to `max_chars` (at a line break when one is near), and how many characters went."""
    if len(text) <= max_chars:
        return text, 0
    cut = text.rfind("\n", int(max_chars * 0.8), max_chars)
    end = cut if cut > 0 else max_chars
    return text[:end], len(text) - end


def pretty_json(text: str) -> str | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return json.dumps(value, indent=2, ensure_ascii=False)


# --- the tool ------------------------------------------------------------------------------------------
_REDACT_COOKIE = re.compile(r"^\s*([^=;]*)=[^;]*")


def _header_lines(headers: httpx.Headers, limit: int = 300) -> list[str]:
    lines = []
    for key, value in headers.multi_items():
        if key.lower() == "set-cookie":
            value = _REDACT_COOKIE.sub(lambda m: f"{m.group(1)}=<redacted>", value, count=1)
        if len(value) > limit:
            value = f"{value[:limit]}… ({len(value)} chars)"
        lines.append(f"  {key}: {value}")
    return lines


def _query_params(raw: dict[str, Any]) -> list[tuple[str, Any]] | str:
    """Query pairs from the `params` object, or an error message."""

    def text(value: Any) -> str | None:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (str, int, float)):
            return str(value)
        if value is None:
            return ""
        return None

    pairs: list[tuple[str, Any]] = []
    for key, value in raw.items():
        for item in value if isinstance(value, list) else [value]:
            shown = text(item)
            if shown is None:
                return f"query parameter '{key}' must be a string, number, boolean or a list of those"
            pairs.append((key, shown))
    return pairs


def _json_value(value: Any) -> Any:
    """`value`, or what it encodes when a model passed a JSON object or array as a string."""
    if isinstance(value, str) and value.strip().startswith(("{", "[")):
        try:
            return json.loads(value)
        except ValueError:
            pass
    return value


class HttpRequestTool(Tool):
    name = "http_request"
    description = (
        "Call an HTTP API (REST, Home Assistant, health checks, webhooks): returns status, headers"
        " and body; a 4xx/5xx status is a result, not a tool error. For web pages use web_view. "
        "Send a body as `json` (any JSON value) or raw `body` (set Content-Type yourself), not "
        "both."
    )
    parameters = {
        "type": "object",
        "properties": {
            "method": {
                "type": "string",
                "enum": ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"],
            },
            "url": {"type": "string", "minLength": 1},
            "headers": {"type": "object", "additionalProperties": {"type": "string"}},
            "params": {"type": "object", "description": "query string"},
            "body": {"type": "string"},
            "json": {},
            "timeout": {"type": "number", "exclusiveMinimum": 0, "description": "seconds"},
            "follow_redirects": {"type": "boolean"},
        },
        "required": ["method", "url"],
        "additionalProperties": False,
    }
    timeout = 130.0  # above the default `max_timeout`, so the tool's own timeout message wins

    def __init__(
        self,
        max_body_chars: int = 20_000,
        max_timeout: float = 120.0,
        *,
        max_read_bytes: int = 10_000_000,
        guard: NetGuard | None = None,
    ) -> None:
        """Without `guard`, the strictest one: no allowlist, nothing private or local."""
        self.guard = guard or NetGuard()
        self.max_body_chars = max_body_chars
        self.max_timeout = max_timeout
        self.max_read_bytes = max_read_bytes

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        method, url = params["method"].upper(), params["url"].strip()
        if problem := check_url(url):
            return ToolResult.fail(problem)
        if "body" in params and "json" in params:
            return ToolResult.fail("give either `body` or `json`, not both")
        query = _query_params(params.get("params") or {})
        if isinstance(query, str):
            return ToolResult.fail(query)
        headers = dict(params.get("headers") or {})
        given = {k.lower() for k in headers}
        if "user-agent" not in given:
            headers["User-Agent"] = API_USER_AGENT
        content: bytes | None = None
        if "json" in params:
            content = json.dumps(_json_value(params["json"]), ensure_ascii=False).encode()
            if "content-type" not in given:
                headers["Content-Type"] = "application/json"
        elif "body" in params:
            content = params["body"].encode()
        notes: list[str] = []
        timeout = float(params.get("timeout", 30.0))
        if timeout > self.max_timeout:
            notes.append(f"(timeout capped at {self.max_timeout:g} s)")
            timeout = self.max_timeout
        follow = params.get("follow_redirects", True)
        started = time.monotonic()
        try:
            async with (
                asyncio.timeout(timeout),
                web_client(self.guard, timeout) as client,
                open_url(
                    client,
                    method,
                    url,
                    follow=follow,
                    params=query or None,
                    headers=headers,
                    content=content,
                ) as response,
            ):
                body, cut = await read_capped(response, self.max_read_bytes)
        except (httpx.HTTPError, TimeoutError, FetchRefused) as exc:
            return ToolResult.fail(fetch_error(exc, url, timeout))
        except (ValueError, TypeError) as exc:  # e.g. a header value with a line break
            return ToolResult.fail(f"could not send the request: {exc}")
        elapsed_ms = (time.monotonic() - started) * 1000
        return self._render(method, url, response, body, cut, elapsed_ms, notes)

    def _render(
        self,
        method: str,
        url: str,
        response: httpx.Response,
        body: bytes,
        cut: bool,
        elapsed_ms: float,
        notes: list[str],
    ) -> ToolResult:
        final_url = str(response.url)
        lines = [f"{method} {final_url}"]
        if response.history:
            lines.append(f"(redirected {len(response.history)}× from {url})")
        reason = f" {response.reason_phrase}" if response.reason_phrase else ""
        lines += [f"{response.http_version} {response.status_code}{reason}  ({elapsed_ms:.0f} ms)", *notes]
        lines += ["Headers:", *_header_lines(response.headers), ""]
        mtype = media_type(response)
        lines.append(self._body_text(method, response, mtype, body, cut))
        return ToolResult.ok(
            "\n".join(lines),
            status=response.status_code,
            url=final_url,
            content_type=mtype,
            body_bytes=len(body),
        )

    def _body_text(self, method: str, response: httpx.Response, mtype: str, body: bytes, cut: bool) -> str:
        if not body:
            return "(no body)"
        kind = classify(mtype, body[:SNIFF_BYTES])
        size = human_size(len(body)) + (" or more" if cut else "")
        if kind == "binary" or (kind != "html" and looks_binary(body[:SNIFF_BYTES])):
            hint = ""
            if mtype.startswith("image/") and method == "GET":
                hint = " Use image_view with this URL to look at it."
            return f"Body: binary data ({mtype or 'unknown type'}, {size}), not shown.{hint}"
        text = decode(body, response_charset(response), html=kind == "html")
        if kind == "json" and not cut:
            text = pretty_json(text) or text
        shown, dropped = clip(text, self.max_body_chars)
        header = f"Body ({mtype or 'no content type'}, {size}):"
        parts = [header, shown]
        if dropped:
            parts.append(f"[… {dropped} more characters of the body dropped]")
        if cut:
            parts.append(
                f"[the body is larger than {human_size(self.max_read_bytes)}; the rest was not read]"
            )
        return "\n".join(parts)
