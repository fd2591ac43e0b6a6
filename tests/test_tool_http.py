"""`http_request` against a real local HTTP server with an echo endpoint."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from navi.testing.ports import free_port as closed_port
from navi.tools.base import ToolResult
from navi.tools.builtin.http import HttpRequestTool, classify, clip, decode
from tests.helpers.local_http import ALLOW_LOCAL, LocalHttpServer


@pytest.fixture(scope="module")
def server() -> Iterator[LocalHttpServer]:
    with LocalHttpServer() as srv:
        yield srv


def echoed(result: ToolResult) -> dict[str, Any]:
    """The echo endpoint's JSON, parsed back out of the tool's output."""
    assert result.success, result.error
    body = result.output.split("):\n", 1)[1]
    return json.loads(body)  # type: ignore[no-any-return]


async def test_get_with_query_and_headers(server: LocalHttpServer) -> None:
    result = await HttpRequestTool(guard=ALLOW_LOCAL).execute(
        {
            "method": "GET",
            "url": server("/echo"),
            "params": {"entity": "light.kitchen", "ids": [1, 2], "full": True, "ratio": 0.5},
            "headers": {"Authorization": "Bearer t0ken", "X-Test": "yes"},
        }
    )
    lines = result.output.splitlines()
    assert lines[0] == f"GET {server('/echo')}?entity=light.kitchen&ids=1&ids=2&full=true&ratio=0.5"
    assert lines[1].startswith("HTTP/1.1 200 OK  (")
    assert "  content-type: application/json" in lines
    seen = echoed(result)
    assert seen["method"] == "GET"
    assert seen["query"] == [
        ["entity", "light.kitchen"],
        ["ids", "1"],
        ["ids", "2"],
        ["full", "true"],
        ["ratio", "0.5"],
    ]
    assert seen["headers"]["authorization"] == "Bearer t0ken"
    assert seen["headers"]["x-test"] == "yes"
    assert seen["headers"]["user-agent"] == "Navi/0.1 (http_request)"
    assert seen["body"] == ""
    assert result.metadata["status"] == 200
    assert result.metadata["content_type"] == "application/json"


async def test_body_is_pretty_printed_json(server: LocalHttpServer) -> None:
    result = await HttpRequestTool(guard=ALLOW_LOCAL).execute({"method": "GET", "url": server("/json")})
    assert 'Body (application/json, 71 B):\n{\n  "name": "navi",\n  "items": [\n    1,' in result.output
    assert '"text": "grün"' in result.output


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
async def test_json_body(server: LocalHttpServer, method: str) -> None:
    payload = {"state": "on", "attributes": {"brightness": 200}, "list": [1, None, "ü"]}
    result = await HttpRequestTool(guard=ALLOW_LOCAL).execute(
        {"method": method, "url": server("/echo"), "json": payload}
    )
    seen = echoed(result)
    assert seen["method"] == method
    assert json.loads(seen["body"]) == payload
    assert seen["headers"]["content-type"] == "application/json"


async def test_json_null_and_explicit_content_type(server: LocalHttpServer) -> None:
    result = await HttpRequestTool(guard=ALLOW_LOCAL).execute(
        {
            "method": "POST",
            "url": server("/echo"),
            "json": None,
            "headers": {"Content-Type": "application/vnd+json"},
        }
    )
    seen = echoed(result)
    assert seen["body"] == "null"
    assert seen["headers"]["content-type"] == "application/vnd+json"


async def test_json_given_as_a_string_is_sent_decoded(server: LocalHttpServer) -> None:
    doubled = await HttpRequestTool(guard=ALLOW_LOCAL).execute(
        {"method": "POST", "url": server("/echo"), "json": '{"a": [1]}'}
    )
    assert echoed(doubled)["body"] == '{"a": [1]}'
    plain = await HttpRequestTool(guard=ALLOW_LOCAL).execute(
        {"method": "POST", "url": server("/echo"), "json": "hello"}
    )
    assert echoed(plain)["body"] == '"hello"'


async def test_own_user_agent_replaces_the_default(server: LocalHttpServer) -> None:
    result = await HttpRequestTool(guard=ALLOW_LOCAL).execute(
        {"method": "GET", "url": server("/echo"), "headers": {"user-agent": "HomeBot/2"}}
    )
    assert echoed(result)["headers"]["user-agent"] == "HomeBot/2"


async def test_raw_body(server: LocalHttpServer) -> None:
    result = await HttpRequestTool(guard=ALLOW_LOCAL).execute(
        {
            "method": "PUT",
            "url": server("/echo"),
            "body": "a=1&b=2",
            "headers": {"Content-Type": "text/plain"},
        }
    )
    seen = echoed(result)
    assert seen["body"] == "a=1&b=2"
    assert seen["headers"]["content-type"] == "text/plain"
    assert seen["headers"]["content-length"] == "7"


async def test_body_and_json_together_are_refused(server: LocalHttpServer) -> None:
    result = await HttpRequestTool(guard=ALLOW_LOCAL).execute(
        {"method": "POST", "url": server("/echo"), "body": "x", "json": {}}
    )
    assert not result.success
    assert result.error == "give either `body` or `json`, not both"


async def test_head_and_options(server: LocalHttpServer) -> None:
    head = await HttpRequestTool(guard=ALLOW_LOCAL).execute({"method": "HEAD", "url": server("/echo")})
    assert head.success
    assert head.output.splitlines()[1].startswith("HTTP/1.1 200 OK")
    assert head.output.endswith("\n(no body)")
    options = await HttpRequestTool(guard=ALLOW_LOCAL).execute({"method": "OPTIONS", "url": server("/echo")})
    assert echoed(options)["method"] == "OPTIONS"


@pytest.mark.parametrize(
    ("code", "reason"), [(404, "Not Found"), (500, "Internal Server Error"), (401, "Unauthorized")]
)
async def test_error_status_is_not_a_tool_failure(server: LocalHttpServer, code: int, reason: str) -> None:
    result = await HttpRequestTool(guard=ALLOW_LOCAL).execute(
        {"method": "POST", "url": server(f"/status/{code}")}
    )
    assert result.success
    assert result.output.splitlines()[1].startswith(f"HTTP/1.1 {code} {reason}")
    assert result.output.endswith(f"Body (text/plain, 15 B):\nstatus body {code}")
    assert result.metadata["status"] == code


async def test_set_cookie_values_are_redacted(server: LocalHttpServer) -> None:
    result = await HttpRequestTool(guard=ALLOW_LOCAL).execute({"method": "GET", "url": server("/cookie")})
    assert "  set-cookie: session=<redacted>; HttpOnly; Path=/" in result.output
    assert "secret123" not in result.output
    assert '"logged_in": true' in result.output


async def test_long_body_is_truncated_with_count(server: LocalHttpServer) -> None:
    result = await HttpRequestTool(guard=ALLOW_LOCAL, max_body_chars=1000).execute(
        {"method": "GET", "url": server("/huge?n=50000")}
    )
    assert result.success
    body = result.output.split("Body (text/plain, 48.8 KB):\n", 1)[1]
    shown, note = body.split("\n[… ", 1)
    dropped = int(re.match(r"(\d+) more characters of the body dropped\]$", note).group(1))  # type: ignore[union-attr]
    assert 800 <= len(shown) <= 1000
    assert len(shown) + dropped == 50_000
    assert "not read" not in result.output


async def test_read_cap_stops_download(server: LocalHttpServer) -> None:
    tool = HttpRequestTool(guard=ALLOW_LOCAL, max_body_chars=500, max_read_bytes=20_000)
    started = time.monotonic()
    result = await tool.execute({"method": "GET", "url": server("/huge?n=50000000")})
    assert time.monotonic() - started < 10
    assert "Body (text/plain, 19.5 KB or more):" in result.output
    assert "[the body is larger than 19.5 KB; the rest was not read]" in result.output
    assert result.metadata["body_bytes"] == 20_000


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/image.png", "Body: binary data (image/png, 101 B), not shown. Use image_view with this URL"),
        ("/doc.pdf", "Body: binary data (application/pdf, 1.0 KB), not shown."),
        ("/octet", "Body: binary data (application/octet-stream, 1000 B), not shown."),
    ],
)
async def test_binary_bodies_are_summarised(server: LocalHttpServer, path: str, expected: str) -> None:
    result = await HttpRequestTool(guard=ALLOW_LOCAL).execute({"method": "GET", "url": server(path)})
    assert result.success
    assert result.output.endswith(expected) or expected in result.output
    assert "PNG" not in result.output and "%PDF" not in result.output


async def test_follows_redirects_by_default(server: LocalHttpServer) -> None:
    result = await HttpRequestTool(guard=ALLOW_LOCAL).execute({"method": "GET", "url": server("/redirect/2")})
    lines = result.output.splitlines()
    assert lines[0] == f"GET {server('/plain')}"
    assert lines[1] == f"(redirected 3× from {server('/redirect/2')})"
    assert result.output.endswith("line one\nline two\nthe end\n")


async def test_redirects_can_be_shown_instead(server: LocalHttpServer) -> None:
    result = await HttpRequestTool(guard=ALLOW_LOCAL).execute(
        {"method": "GET", "url": server("/redirect/2"), "follow_redirects": False}
    )
    assert result.success
    assert result.output.splitlines()[1].startswith("HTTP/1.1 302 Found")
    assert "  location: /redirect/1" in result.output


async def test_redirect_loop_fails(server: LocalHttpServer) -> None:
    result = await HttpRequestTool(guard=ALLOW_LOCAL).execute({"method": "GET", "url": server("/loop")})
    assert not result.success
    assert "too many redirects (more than 10)" in (result.error or "")


async def test_timeout(server: LocalHttpServer) -> None:
    started = time.monotonic()
    result = await HttpRequestTool(guard=ALLOW_LOCAL).execute(
        {"method": "GET", "url": server("/slow?delay=5"), "timeout": 0.4}
    )
    assert time.monotonic() - started < 3
    assert not result.success
    assert (
        result.error
        == f"timed out after 0.4 s fetching {server('/slow?delay=5')}; the server is slow or unreachable"
    )


async def test_timeout_is_capped(server: LocalHttpServer) -> None:
    result = await HttpRequestTool(guard=ALLOW_LOCAL, max_timeout=0.4).execute(
        {"method": "GET", "url": server("/trickle"), "timeout": 1000}
    )
    assert not result.success
    assert (result.error or "").startswith("timed out after 0.4 s")
    fast = await HttpRequestTool(guard=ALLOW_LOCAL, max_timeout=5).execute(
        {"method": "GET", "url": server("/plain"), "timeout": 60}
    )
    assert "(timeout capped at 5 s)" in fast.output


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("file:///etc/passwd", "only http:// and https:// URLs are supported (got 'file://')"),
        ("/api/states", "only http:// and https:// URLs are supported (got no scheme)"),
        ("https://", "it needs a host name"),
    ],
)
async def test_bad_urls(url: str, expected: str) -> None:
    result = await HttpRequestTool(guard=ALLOW_LOCAL).execute({"method": "GET", "url": url})
    assert not result.success
    assert expected in (result.error or "")


async def test_connection_refused() -> None:
    result = await HttpRequestTool(guard=ALLOW_LOCAL).execute(
        {"method": "GET", "url": f"http://127.0.0.1:{closed_port()}/api"}
    )
    assert not result.success
    assert (result.error or "").startswith("connection refused by 127.0.0.1")


async def test_bad_header_and_params(server: LocalHttpServer) -> None:
    header = await HttpRequestTool(guard=ALLOW_LOCAL).execute(
        {"method": "GET", "url": server("/echo"), "headers": {"X-Bad": "a\r\nInjected: 1"}}
    )
    assert not header.success
    assert (header.error or "").startswith("could not send the request")
    nested = await HttpRequestTool(guard=ALLOW_LOCAL).execute(
        {"method": "GET", "url": server("/echo"), "params": {"q": {"a": 1}}}
    )
    assert not nested.success
    assert nested.error == "query parameter 'q' must be a string, number, boolean or a list of those"


def test_helpers() -> None:
    assert classify("application/xhtml+xml") == "html"
    assert classify("application/problem+json") == "json"
    assert classify("application/atom+xml") == "xml"
    assert classify("application/zip") == "binary"
    assert classify("", b'  {"a": 1}') == "json"
    assert classify("application/octet-stream", b"\x00\x01") == "binary"
    assert decode("Grüße".encode("cp1252"), None) == "Grüße"
    assert decode("Grüße".encode(), "bogus-charset") == "Grüße"
    assert decode("Grüße".encode()[:-2], None) == "Grü\ufffd"  # a character cut by the size cap
    assert decode("Grüße".encode("utf-16"), "utf-16") == "Grüße"
    assert clip("abc", 10) == ("abc", 0)
    text = "\n".join(["x" * 9] * 100)  # 999 characters
    shown, dropped = clip(text, 95)
    assert shown.endswith("x") and len(shown) + dropped == 999 and 76 <= len(shown) <= 95
