"""`web_search` (DuckDuckGo through `ddgs`) and `web_view` (a page as readable text).

`web_view` streams the body and stops at `max_bytes`, so a huge or endless page cannot exhaust
memory. HTML becomes markdown through trafilatura, which keeps the article and drops menus and
footers; when trafilatura finds nothing (pages that are all navigation, sidebars or widgets) the whole
body goes through markdownify instead. Text, JSON and XML come back as text; other types (PDF,
images, archives, media) are described, with the tool that can handle them.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from navi.net.fetch import open_url, web_client
from navi.net.guard import FetchRefused, NetGuard
from navi.tools.base import Tool, ToolResult
from navi.tools.builtin.http import (
    BROWSER_USER_AGENT,
    SNIFF_BYTES,
    check_url,
    classify,
    declared_length,
    decode,
    fetch_error,
    human_size,
    media_type,
    pretty_json,
    read_capped,
    response_charset,
)

MAX_SNIPPET_CHARS = 300
DEFAULT_VIEW_CHARS = 40_000
MAX_VIEW_CHARS = 100_000
_FALLBACK_DROP = ("script", "style", "noscript", "template", "svg", "canvas", "iframe", "head")


# --- web_search --------------------------------------------------------------------------------------
class SearchClient(Protocol):
    """What `web_search` needs from a search client: `ddgs.DDGS().text`'s shape."""

    def text(self, query: str, **kwargs: Any) -> list[dict[str, Any]]: ...


def _default_client() -> SearchClient:
    from ddgs import DDGS

    return DDGS(timeout=10)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


class WebSearchTool(Tool):
    name = "web_search"
    description = (
        "Search the web (DuckDuckGo): title, URL and snippet of each result. Snippets can be "
        "stale: read the best pages with web_view."
    )
    parameters = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 500},
            "max_results": {"type": "integer", "minimum": 1, "maximum": 10},
            "region": {
                "type": "string",
                "pattern": "^[a-z]{2}-[a-z]{2}$",
                "description": "e.g. us-en",
            },
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    timeout = 30.0

    def __init__(
        self,
        client_factory: Callable[[], SearchClient] | None = None,
        max_results_cap: int = 10,
        *,
        backend: str = "duckduckgo",
    ) -> None:
        """`backend` is passed to ddgs; "auto" mixes in other engines when DuckDuckGo is unhappy."""
        self.client_factory = client_factory or _default_client
        self.max_results_cap = max_results_cap
        self.backend = backend

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

        query = params["query"].strip()
        if not query:
            return ToolResult.fail("the query is empty")
        limit = max(1, min(params.get("max_results", 5), self.max_results_cap))
        kwargs: dict[str, Any] = {"max_results": limit, "backend": self.backend}
        if params.get("region"):
            kwargs["region"] = params["region"]
        try:
            raw = await asyncio.to_thread(self._search, query, kwargs)
        except RatelimitException:
            return ToolResult.fail("DuckDuckGo is rate-limiting; wait a minute and retry")
        except TimeoutException:
            return ToolResult.fail("the search timed out; retry, perhaps with a shorter query")
        except DDGSException as exc:
            message = str(exc)
            lowered = message.lower()
            if "no results" in lowered:  # ddgs raises for an empty result set
                return self._no_results(query)
            if "ratelimit" in lowered or "429" in lowered:
                return ToolResult.fail("DuckDuckGo is rate-limiting; wait a minute and retry")
            if "timed out" in lowered or "timeout" in lowered:
                return ToolResult.fail("the search timed out; retry, perhaps with a shorter query")
            return ToolResult.fail(f"the search failed: {message or type(exc).__name__}")
        except Exception as exc:  # network trouble inside ddgs surfaces as its HTTP library's errors
            return ToolResult.fail(f"the search failed: {type(exc).__name__}: {exc}")
        return self._render(query, raw, limit)

    def _search(self, query: str, kwargs: dict[str, Any]) -> list[dict[str, Any]]:
        return self.client_factory().text(query, **kwargs)

    def _no_results(self, query: str) -> ToolResult:
        return ToolResult.ok(
            f'No results for "{query}". Try other or fewer words, or a more general query.', results=[]
        )

    def _render(self, query: str, raw: list[dict[str, Any]], limit: int) -> ToolResult:
        results: list[dict[str, str]] = []
        seen: set[str] = set()
        for item in raw or []:
            url = str(item.get("href") or item.get("url") or "").strip()
            if not url or url in seen:
                continue
            seen.add(url)
            snippet = _one_line(item.get("body") or "")
            if len(snippet) > MAX_SNIPPET_CHARS:
                snippet = snippet[: MAX_SNIPPET_CHARS - 1].rstrip() + "…"
            results.append(
                {"title": _one_line(item.get("title") or "") or url, "url": url, "snippet": snippet}
            )
            if len(results) >= limit:
                break
        if not results:
            return self._no_results(query)
        lines = [f'Results for "{query}":']
        for i, r in enumerate(results, 1):
            lines += ["", f"{i}. {r['title']}", f"   {r['url']}"]
            if r["snippet"]:
                lines.append(f"   {r['snippet']}")
        return ToolResult.ok("\n".join(lines), results=results)


# --- web_view ----------------------------------------------------------------------------------------
def _binary_advice(mtype: str, url: str) -> tuple[str, str]:
    """What kind of thing a non-text response is, and which tool to use instead."""
    download = "download it with code_exec or the terminal (for example `curl -L -o FILE URL`)"
    if mtype.startswith("image/"):
        return "an image", f"Call image_view with source={url} to look at it."
    if mtype == "application/pdf":
        return "a PDF document", f"web_view cannot read PDFs; {download} and extract the text there."
    if mtype.startswith("audio/"):
        return "an audio file", f"It cannot be shown as text; {download} to process it."
    if mtype.startswith("video/"):
        return "a video", f"It cannot be shown as text; {download} to process it."
    archives = ("zip", "gzip", "x-tar", "x-7z-compressed", "x-rar", "x-bzip2", "x-xz", "zstd")
    if any(mtype.endswith(a) for a in archives):
        return "an archive", f"It cannot be shown as text; {download} and unpack it there."
    if "font" in mtype:
        return "a font file", "It cannot be shown as text."
    return "binary data", f"It cannot be shown as text; {download} to inspect it."


def _html_title(html: str) -> str:
    match = re.search(r"<title[^>]*>(.*?)</title>", html[:200_000], re.IGNORECASE | re.DOTALL)
    if not match:
        return ""
    from html import unescape

    return _one_line(unescape(match.group(1)))


def _fallback_markdown(html: str, url: str, links: bool) -> str:
    """The whole body as markdown, minus scripts, styles and other invisible parts."""
    import lxml.html
    from markdownify import markdownify

    try:
        tree = lxml.html.document_fromstring(html)
        for el in list(tree.iter(*_FALLBACK_DROP)):
            el.drop_tree()
        if links:
            tree.make_links_absolute(url, resolve_base_href=True, handle_failures="ignore")
        html = lxml.html.tostring(tree, encoding="unicode")
    except Exception:  # unparsable markup: let markdownify do what it can
        pass
    text = markdownify(html, heading_style="ATX", strip=["img"] if links else ["img", "a"])
    return re.sub(r"\n{3,}", "\n\n", re.sub(r"[ \t]+\n", "\n", text)).strip()


def html_to_text(html: str, url: str, links: bool) -> tuple[str, str, str]:
    """(title, text, method) for an HTML page; method is trafilatura or markdownify."""
    import trafilatura

    title = ""
    try:
        meta = trafilatura.extract_metadata(html)
        title = _one_line(meta.title or "") if meta is not None else ""
    except Exception:
        pass
    title = title or _html_title(html)
    try:
        text = trafilatura.extract(
            html,
            url=url,
            output_format="markdown",
            include_links=links,
            include_tables=True,
            include_comments=False,
        )
    except Exception:
        text = None
    if text and text.strip():
        return title, text.strip(), "trafilatura"
    return title, _fallback_markdown(html, url, links), "markdownify"


@dataclass(frozen=True)
class Page:
    """A page as read: the URL asked for and the one answered after redirects, its media type,
    title, text, how the text was made (trafilatura, markdownify, text, json…), and whether the
    body was cut at `max_bytes`."""

    url: str
    final_url: str
    mtype: str
    title: str
    text: str
    method: str
    cut: bool


class WebViewTool(Tool):
    name = "web_view"
    description = (
        "Read a web page (absolute http(s) URL) as title and Markdown text; other files are "
        "described. Long pages are cut at `max_chars`: read on from character `start`. "
        "`include_links` keeps link targets."
    )
    parameters = {
        "type": "object",
        "properties": {
            "url": {"type": "string", "minLength": 1},
            "max_chars": {"type": "integer", "minimum": 500, "maximum": MAX_VIEW_CHARS},
            "start": {"type": "integer", "minimum": 0},
            "include_links": {"type": "boolean"},
        },
        "required": ["url"],
        "additionalProperties": False,
    }
    timeout = 60.0  # above the default fetch timeout plus time to extract a large page

    def __init__(
        self, max_bytes: int = 2_000_000, timeout: float = 20.0, *, guard: NetGuard | None = None
    ) -> None:
        """Without `guard`, the strictest one: no allowlist, nothing private or local."""
        self.guard = guard or NetGuard()
        self.max_bytes = max_bytes
        self.fetch_timeout = timeout

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        url = params["url"].strip()
        if problem := check_url(url):
            return ToolResult.fail(problem)
        max_chars = params.get("max_chars", DEFAULT_VIEW_CHARS)
        start = params.get("start", 0)
        headers = {
            "User-Agent": BROWSER_USER_AGENT,
            "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,text/plain;q=0.8,*/*;q=0.7",
            "Accept-Language": "en-US,en;q=0.8",
        }
        try:
            async with (
                asyncio.timeout(self.fetch_timeout),
                web_client(self.guard, self.fetch_timeout, headers) as client,
                open_url(client, "GET", url) as response,
            ):
                final_url = str(response.url)
                mtype = media_type(response)
                if response.status_code >= 400:
                    snippet, _ = await read_capped(response, 2000)
                    return self._http_error(url, response, snippet)
                kind = classify(mtype)
                if kind == "binary":  # described from the headers alone: no need to download it
                    return self._describe_binary(final_url, mtype, declared_length(response))
                body, cut = await read_capped(response, self.max_bytes)
                charset = response_charset(response)
        except (httpx.HTTPError, TimeoutError, FetchRefused) as exc:
            return ToolResult.fail(fetch_error(exc, url, self.fetch_timeout))
        kind = classify(mtype, body[:SNIFF_BYTES])
        if kind == "binary":
            return self._describe_binary(final_url, mtype or "application/octet-stream", len(body), cut)
        text = decode(body, charset, html=kind == "html")
        title, method = "", kind
        if kind == "html":
            title, text, method = await asyncio.to_thread(
                html_to_text, text, final_url, params.get("include_links", False)
            )
        elif kind == "json" and not cut:
            text = pretty_json(text) or text
        return self._render(Page(url, final_url, mtype, title, text, method, cut), start, max_chars)

    def _http_error(self, url: str, response: httpx.Response, snippet: bytes) -> ToolResult:
        reason = f" {response.reason_phrase}" if response.reason_phrase else ""
        status = f"HTTP {response.status_code}{reason}"
        hint = {
            401: "the page needs a login",
            403: "the site refuses access (it may block automated clients)",
            404: "the page does not exist; check the URL or search for it",
            410: "the page was removed",
            429: "the site is rate-limiting; wait before retrying",
        }.get(response.status_code, "the server failed; retry later" if response.status_code >= 500 else "")
        message = f"{status} for {response.url}" + (f": {hint}" if hint else "")
        detail = ""
        if snippet and classify(media_type(response), snippet[:SNIFF_BYTES]) != "binary":
            detail = " ".join(decode(snippet, response_charset(response)).split())[:300]
        return ToolResult.fail(message, detail, status=response.status_code, url=str(response.url))

    def _describe_binary(self, url: str, mtype: str, size: int | None, cut: bool = False) -> ToolResult:
        what, advice = _binary_advice(mtype, url)
        size_text = "size unknown" if size is None else human_size(size) + (" or more" if cut else "")
        return ToolResult.ok(
            f"{url} is {what} ({mtype or 'unknown type'}, {size_text}), not a page web_view can show as "
            f"text. {advice}",
            url=url,
            content_type=mtype,
            kind="binary",
        )

    def _render(self, page: Page, start: int, max_chars: int) -> ToolResult:
        """The page's text from `start`, at most `max_chars` of it, under a head saying what it is."""
        url, final_url, mtype, title, text = page.url, page.final_url, page.mtype, page.title, page.text
        head: list[str] = []
        if title:
            head.append(f"# {title}")
        head.append(f"URL: {final_url}" + (f" (redirected from {url})" if final_url != url else ""))
        head.append(f"Type: {mtype or 'unknown'}")
        if page.cut:
            head.append(
                f"Note: the page is larger than {human_size(self.max_bytes)}; only the first "
                f"{human_size(self.max_bytes)} was read, so the text below is incomplete."
            )
        total = len(text)
        if start >= total and total:
            return ToolResult.fail(f"start={start} is past the end of the text ({total} characters)")
        window = text[start : start + max_chars]
        if start + max_chars < total:
            cut_at = window.rfind("\n", int(max_chars * 0.8))
            if cut_at > 0:
                window = window[:cut_at]
        end = start + len(window)
        body = window if window.strip() else "(the page has no readable text)"
        parts = ["\n".join(head), "", body]
        if start or end < total:
            more = f" Call web_view again with start={end} to read on." if end < total else ""
            parts += ["", f"[Showing characters {start}–{end} of {total}.{more}]"]
        return ToolResult.ok(
            "\n".join(parts),
            url=final_url,
            title=title,
            content_type=mtype,
            extractor=page.method,
            total_chars=total,
            truncated=end < total or page.cut,
        )
