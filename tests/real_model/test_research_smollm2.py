"""A research job against SmolLM2 on llama-server in a 4,096-token window (issue 47, item 5).

Three tiny pages served by the test (an index linking to two others), small caps (one
sub-question, two sources, 48 tokens for the plan, each note and the report: SmolLM2 writes
slowly on 2 cores). Asserts on what Navi does — the job ends done with a report listing the
sources it read, and every model call was accepted by the model's own chat template, capped, and
within the window by the model's own count — never on what the 135M model writes. A group of its
own (tests/conftest.py): it runs beside the other real-model tests, not after them.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from navi.testing.llama import LlamaServer
from navi.testing.threaded import ThreadedServer
from tests.real_model.helpers import check_calls, usage

pytestmark = [pytest.mark.real_model, pytest.mark.timeout(900)]

FILLER = (
    "This page belongs to a small test site; its paragraphs are long enough for an extractor to "
    "take them for an article rather than for a menu or a footer."
)
PAGES = {
    "/index.html": (
        "Kestrel bikes",
        "The Kestrel 7 is an electric city bike made by Kestrel Cycles.",
        [("/battery.html", "Kestrel 7 battery range"), ("/weight.html", "Kestrel 7 weight")],
    ),
    "/battery.html": ("Kestrel 7 battery", "The Kestrel 7 battery gives a range of 85 km on one charge.", []),
    "/weight.html": ("Kestrel 7 weight", "The Kestrel 7 weighs 19 kg with its battery.", []),
}


@pytest.fixture
def pages() -> Iterator[ThreadedServer]:
    async def page(request: Request) -> Response:
        found = PAGES.get(request.url.path)
        if found is None:
            return Response("not found", status_code=404)
        title, text, links = found
        base = str(request.base_url).rstrip("/")
        items = ", ".join(f'<a href="{base}{href}">{name}</a>' for href, name in links)
        return HTMLResponse(
            f'<!doctype html>\n<html><head><meta charset="utf-8"><title>{title}</title></head>\n<body>'
            f"<article>\n<h1>{title}</h1>\n<p>{text}</p>\n<p>{FILLER}</p>\n<p>Read on: {items}.</p>\n"
            "</article></body></html>\n"
        )

    server = ThreadedServer(Starlette(routes=[Route("/{name:path}", page)]), name="pages")
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_smollm2_researches_three_pages_within_its_window(
    smollm2_server: LlamaServer, navi_on: Callable[..., Any], pages: ThreadedServer
) -> None:
    overrides = {
        "navi_fetch_allowed_hosts": "127.0.0.1",
        "navi_research_web_search": False,
        "navi_research_max_questions": 1,
        "navi_research_max_sources": 2,
        "llm_max_tokens_answer": 48,  # plan, notes and report: 2 cores write slowly
    }
    question = (
        f"Research the Kestrel 7 e-bike: its battery range and its weight. Start at {pages.url}/index.html"
    )
    with navi_on(smollm2_server, **overrides) as real, real.navi.client() as http:
        made = http.post("/jobs", json={"prompt": question, "mode": "research"})
        assert made.status_code == 201, made.text
        deadline = time.monotonic() + 600
        while (job := http.get(f"/jobs/{made.json()['id']}").json())["state"] in ("queued", "running"):
            assert time.monotonic() < deadline, job
            time.sleep(0.5)
        assert job["state"] == "done", job
        real.proxy.wait_idle(timeout=120)
        calls = real.chat
    report = job["result"]
    listed = re.findall(r"^\[\d+\] .*? — (\S+)$", report, re.MULTILINE)
    assert f"{pages.url}/index.html" in listed and len(listed) == 2, report
    check_calls(calls, real.window)
    assert len(calls) >= 3  # the plan, notes per source, the report
    assert all(usage(c)["completion_tokens"] <= 48 for c in calls), [usage(c) for c in calls]
