"""`web_search` with injected search clients, `web_view` against a real local HTTP server."""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

from navi.testing.ports import free_port as closed_port
from navi.tools.builtin.http import fetch_error
from navi.tools.builtin.web import WebSearchTool, WebViewTool, _default_client
from tests.helpers.local_http import ALLOW_LOCAL, LocalHttpServer


@pytest.fixture(scope="module")
def server() -> Iterator[LocalHttpServer]:
    with LocalHttpServer() as srv:
        yield srv


# --- web_search ----------------------------------------------------------------------------------
class FakeSearch:
    def __init__(self, results: list[dict[str, Any]] | None = None, error: Exception | None = None) -> None:
        self.results = results or []
        self.error = error
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.threads: list[int] = []

    def text(self, query: str, **kwargs: Any) -> list[dict[str, Any]]:
        self.calls.append((query, kwargs))
        self.threads.append(threading.get_ident())
        if self.error is not None:
            raise self.error
        return self.results


RESULTS = [
    {"title": "Navi docs", "href": "https://navi.example/docs", "body": "How to  run\nNavi locally."},
    {"title": "Navi on GitHub", "href": "https://github.example/navi", "body": "Source code."},
    {"title": "Duplicate", "href": "https://navi.example/docs", "body": "same URL again"},
    {"title": "No URL", "href": "", "body": "skipped"},
    {"title": "Long", "href": "https://long.example", "body": "word " * 200},
]


def search_tool(fake: FakeSearch, **kwargs: Any) -> WebSearchTool:
    return WebSearchTool(client_factory=lambda: fake, **kwargs)


async def test_search_formats_numbered_results() -> None:
    fake = FakeSearch(RESULTS)
    result = await search_tool(fake).execute({"query": "navi agent"})
    assert result.success
    out = result.output
    assert out.startswith('Results for "navi agent":')
    assert "1. Navi docs\n   https://navi.example/docs\n   How to run Navi locally." in out
    assert "2. Navi on GitHub\n   https://github.example/navi\n   Source code." in out
    assert "3. Long\n   https://long.example\n" in out
    assert "Duplicate" not in out and "No URL" not in out
    long_snippet = out.split("https://long.example\n   ")[1]
    assert long_snippet.endswith("…") and len(long_snippet) <= 300
    assert [r["url"] for r in result.metadata["results"]] == [
        "https://navi.example/docs",
        "https://github.example/navi",
        "https://long.example",
    ]


async def test_search_passes_limits_region_and_backend_and_runs_off_the_loop() -> None:
    fake = FakeSearch(RESULTS)
    result = await search_tool(fake).execute({"query": "  weather  ", "max_results": 2, "region": "de-de"})
    assert fake.calls == [("weather", {"max_results": 2, "backend": "duckduckgo", "region": "de-de"})]
    assert fake.threads[0] != threading.get_ident()  # ddgs is synchronous: it must not block the loop
    assert "1. Navi docs" in result.output and "2. Navi on GitHub" in result.output
    assert "3." not in result.output


async def test_search_default_count_and_cap() -> None:
    fake = FakeSearch(RESULTS)
    await search_tool(fake).execute({"query": "q"})
    assert fake.calls[-1][1]["max_results"] == 5
    assert "region" not in fake.calls[-1][1]
    await search_tool(fake, max_results_cap=3).execute({"query": "q", "max_results": 10})
    assert fake.calls[-1][1]["max_results"] == 3


@pytest.mark.parametrize(
    "fake",
    [FakeSearch([]), FakeSearch(error=DDGSException("No results found.")), FakeSearch([{"title": "x"}])],
    ids=["empty-list", "ddgs-no-results", "results-without-urls"],
)
async def test_search_no_results_is_a_success(fake: FakeSearch) -> None:
    result = await search_tool(fake).execute({"query": "zzqx nonsense"})
    assert result.success
    assert result.output.startswith('No results for "zzqx nonsense"')
    assert result.metadata["results"] == []


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (RatelimitException("202 Ratelimit"), "DuckDuckGo is rate-limiting; wait a minute and retry"),
        (DDGSException("https://html.duckduckgo.com 202 Ratelimit"), "DuckDuckGo is rate-limiting"),
        (TimeoutException("read timed out"), "the search timed out"),
        (DDGSException("engine exploded"), "the search failed: engine exploded"),
        (RuntimeError("socket closed"), "the search failed: RuntimeError: socket closed"),
    ],
    ids=["ratelimit", "ratelimit-in-message", "timeout", "ddgs-error", "other-error"],
)
async def test_search_errors_are_mapped(error: Exception, expected: str) -> None:
    result = await search_tool(FakeSearch(error=error)).execute({"query": "q"})
    assert not result.success
    assert result.error is not None and expected in result.error


def test_default_client_is_ddgs_and_schema() -> None:
    from ddgs.ddgs import DDGS  # `ddgs.DDGS` is a lazy proxy class

    assert isinstance(_default_client(), DDGS)
    params = WebSearchTool.parameters
    assert params["required"] == ["query"]
    assert params["properties"]["max_results"]["maximum"] == 10


# --- web_view: pages -----------------------------------------------------------------------------
async def test_view_article_extracts_main_text_with_title(server: LocalHttpServer) -> None:
    result = await WebViewTool(guard=ALLOW_LOCAL).execute({"url": server("/article")})
    assert result.success, result.error
    out = result.output
    assert out.startswith("# Understanding Local Servers\nURL: " + server("/article"))
    assert "A local server answers requests on the loopback interface" in out
    assert "The café on the corner serves crème brûlée" in out
    for junk in ("SHOULD-NOT-APPEAR", "NAVMENU-SHOP", "FOOTER-JUNK", "color: red"):
        assert junk not in out
    assert "](" not in out  # no links unless asked
    assert result.metadata["extractor"] == "trafilatura"
    assert result.metadata["title"] == "Understanding Local Servers"
    assert result.metadata["truncated"] is False


async def test_view_article_with_links(server: LocalHttpServer) -> None:
    result = await WebViewTool(guard=ALLOW_LOCAL).execute({"url": server("/article"), "include_links": True})
    assert f"[detailed guide]({server('/docs/guide')})" in result.output


async def test_view_page_without_article_falls_back_to_markdownify(server: LocalHttpServer) -> None:
    result = await WebViewTool(guard=ALLOW_LOCAL).execute({"url": server("/no-article")})
    assert result.success
    assert result.metadata["extractor"] == "markdownify"
    out = result.output
    assert out.startswith("# Sidebar Only\n")
    assert "## Quick facts" in out
    assert "The sidebar says the boiler pressure is 1.5 bar." in out
    assert "* First link\n* Second item" in out
    assert "Footer note: maintained by the house robot." in out
    assert "SCRIPT-TEXT" not in out
    linked = await WebViewTool(guard=ALLOW_LOCAL).execute(
        {"url": server("/no-article"), "include_links": True}
    )
    assert f"[First link]({server('/a')})" in linked.output


async def test_view_decodes_charset_from_meta(server: LocalHttpServer) -> None:
    result = await WebViewTool(guard=ALLOW_LOCAL).execute({"url": server("/latin1")})
    assert result.output.startswith("# Grüße\n")
    assert "Grüße aus München, schöne Straßen und weiße Häuser" in result.output


async def test_view_plain_text_json_and_xml(server: LocalHttpServer) -> None:
    plain = await WebViewTool(guard=ALLOW_LOCAL).execute({"url": server("/plain")})
    assert plain.output.endswith("\n\nline one\nline two\nthe end\n")
    assert "Type: text/plain" in plain.output

    data = await WebViewTool(guard=ALLOW_LOCAL).execute({"url": server("/json")})
    assert '{\n  "name": "navi",\n  "items": [\n    1,' in data.output
    assert '"text": "grün"' in data.output

    xml = await WebViewTool(guard=ALLOW_LOCAL).execute({"url": server("/xml")})
    assert "<feed><entry><title>Hello XML</title></entry></feed>" in xml.output
    assert "Type: application/xml" in xml.output


@pytest.mark.parametrize(
    ("path", "what", "advice"),
    [
        ("/doc.pdf", "is a PDF document (application/pdf, 1.0 KB)", "web_view cannot read PDFs"),
        ("/image.png", "is an image (image/png, ", "Call image_view with source="),
        ("/octet", "is binary data (application/octet-stream, 1000 B)", "curl -L -o FILE URL"),
    ],
)
async def test_view_describes_binaries_instead_of_dumping_them(
    server: LocalHttpServer, path: str, what: str, advice: str
) -> None:
    result = await WebViewTool(guard=ALLOW_LOCAL).execute({"url": server(path)})
    assert result.success
    assert what in result.output and advice in result.output
    assert "%PDF" not in result.output and "\x00" not in result.output
    assert result.metadata["kind"] == "binary"


async def test_view_sniffs_binary_served_as_text(server: LocalHttpServer) -> None:
    url = server.add("disguised", b"\x89PNG\r\n\x1a\n\x00\x00\x00binary", "")
    result = await WebViewTool(guard=ALLOW_LOCAL).execute({"url": url})
    assert "is binary data (application/octet-stream" in result.output


# --- web_view: limits ----------------------------------------------------------------------------
async def test_view_stops_reading_at_max_bytes(server: LocalHttpServer) -> None:
    tool = WebViewTool(guard=ALLOW_LOCAL, max_bytes=100_000)
    started = time.monotonic()
    result = await tool.execute({"url": server("/huge?n=50000000"), "max_chars": 100_000})
    assert time.monotonic() - started < 10  # 50 MB were not downloaded
    assert result.success
    assert "Note: the page is larger than 97.7 KB; only the first 97.7 KB was read" in result.output
    assert result.metadata["truncated"] is True
    assert result.metadata["total_chars"] == 100_000


async def test_view_caps_text_and_pages_on_with_start(server: LocalHttpServer) -> None:
    url = server("/huge?n=30000")
    first = await WebViewTool(guard=ALLOW_LOCAL).execute({"url": url, "max_chars": 1000})
    match = re.search(
        r"\[Showing characters 0–(\d+) of 30000\. Call web_view again with start=(\d+)", first.output
    )
    assert match and match.group(1) == match.group(2)
    end = int(match.group(1))
    assert 800 <= end <= 1000
    body = first.output.split("\n\n", 1)[1].rsplit("\n\n[Showing", 1)[0]
    assert len(body) == end and body.endswith("indeed.")

    second = await WebViewTool(guard=ALLOW_LOCAL).execute({"url": url, "max_chars": 1000, "start": end})
    assert f"[Showing characters {end}–" in second.output

    last = await WebViewTool(guard=ALLOW_LOCAL).execute({"url": url, "max_chars": 1000, "start": 29_900})
    assert "[Showing characters 29900–30000 of 30000.]" in last.output

    past = await WebViewTool(guard=ALLOW_LOCAL).execute({"url": url, "start": 40_000})
    assert not past.success and "past the end" in (past.error or "")


async def test_view_default_cap_is_40000_chars(server: LocalHttpServer) -> None:
    result = await WebViewTool(guard=ALLOW_LOCAL).execute({"url": server("/huge?n=100000")})
    match = re.search(r"\[Showing characters 0–(\d+) of 100000\.", result.output)
    assert match and 32_000 <= int(match.group(1)) <= 40_000


@pytest.mark.parametrize("path", ["/slow?delay=5", "/trickle"])
async def test_view_time_limit(server: LocalHttpServer, path: str) -> None:
    started = time.monotonic()
    result = await WebViewTool(guard=ALLOW_LOCAL, timeout=0.5).execute({"url": server(path)})
    assert time.monotonic() - started < 3
    assert not result.success
    assert result.error == f"timed out after 0.5 s fetching {server(path)}; the server is slow or unreachable"


# --- web_view: redirects and errors --------------------------------------------------------------
async def test_view_follows_redirects(server: LocalHttpServer) -> None:
    result = await WebViewTool(guard=ALLOW_LOCAL).execute({"url": server("/redirect/3")})
    assert result.success
    assert f"URL: {server('/plain')} (redirected from {server('/redirect/3')})" in result.output
    assert "line two" in result.output


async def test_view_redirect_loop(server: LocalHttpServer) -> None:
    result = await WebViewTool(guard=ALLOW_LOCAL).execute({"url": server("/loop")})
    assert not result.success
    assert "too many redirects" in (result.error or "")


async def test_view_redirect_to_other_scheme(server: LocalHttpServer) -> None:
    result = await WebViewTool(guard=ALLOW_LOCAL).execute({"url": server("/to-ftp")})
    assert not result.success
    assert "redirected to a URL that is not http(s)" in (result.error or "")


@pytest.mark.parametrize(
    ("code", "text"),
    [(404, "HTTP 404 Not Found"), (403, "HTTP 403 Forbidden"), (500, "HTTP 500 Internal Server Error")],
)
async def test_view_http_errors_include_status(server: LocalHttpServer, code: int, text: str) -> None:
    result = await WebViewTool(guard=ALLOW_LOCAL).execute({"url": server(f"/status/{code}")})
    assert not result.success
    assert result.error is not None and result.error.startswith(f"{text} for {server(f'/status/{code}')}")
    assert result.output == f"status body {code}"
    assert result.metadata["status"] == code


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("ftp://example.com/file", "only http:// and https:// URLs are supported (got 'ftp://')"),
        ("example.com/page", "only http:// and https:// URLs are supported (got no scheme)"),
        ("http://", "it needs a host name"),
        ("http://exa mple.com/", "it needs a host name"),
        ("http://[::1/", "invalid URL"),
    ],
)
async def test_view_rejects_bad_urls(url: str, expected: str) -> None:
    result = await WebViewTool(guard=ALLOW_LOCAL).execute({"url": url})
    assert not result.success
    assert expected in (result.error or "")


async def test_view_connection_refused() -> None:
    url = f"http://127.0.0.1:{closed_port()}/"
    result = await WebViewTool(guard=ALLOW_LOCAL, timeout=5).execute({"url": url})
    assert not result.success
    assert "connection refused by 127.0.0.1" in (result.error or "")


def test_dns_failure_message() -> None:
    """httpx wraps the resolver's error; the cause decides the message (no real DNS lookup here)."""
    try:
        try:
            raise socket.gaierror(-3, "Temporary failure")
        except OSError as inner:
            raise httpx.ConnectError("All connection attempts failed") from inner
    except httpx.ConnectError as exc:
        message = fetch_error(exc, "https://no-such-host.invalid/x", 20)
    assert message == "could not resolve host 'no-such-host.invalid': check the spelling of the URL"
    other = fetch_error(httpx.ConnectError("TLS handshake failed"), "https://h.example/", 20)
    assert other == "could not connect to h.example: TLS handshake failed"


async def test_view_sends_a_browser_user_agent(server: LocalHttpServer) -> None:
    result = await WebViewTool(guard=ALLOW_LOCAL).execute({"url": server("/echo")})
    assert '"user-agent": "Mozilla/5.0 (X11; Linux x86_64)' in result.output
