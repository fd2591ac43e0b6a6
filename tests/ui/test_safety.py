"""Model output is untrusted: scripts, event handlers and javascript: links must render inert.

Each case runs twice: with the page's Content-Security-Policy, and with the browser told to ignore
it — so the sanitiser alone is shown to be enough, and the CSP is a second fence, not the only one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.server_helpers import LiveNavi, use_script
from tests.ui.browser import open_app, open_context, reload, send, wait_idle

pytestmark = pytest.mark.browser

PAYLOAD = """Here is the result.

<script>window.__pwned = "script"</script>
<img src="/nothing.png" onerror="window.__pwned = 'img'">
<svg onload="window.__pwned = 'svg'"><script>window.__pwned = 'svg-script'</script></svg>
<iframe srcdoc="<script>parent.__pwned = 'iframe'</script>"></iframe>
<a href="javascript:window.__pwned = 'raw-link'">raw link</a>
<form action="javascript:window.__pwned = 'form'"><button>form button</button></form>
<div style="background:url(javascript:alert(1))" onclick="window.__pwned = 'div'">click me</div>

[markdown link](javascript:window.__pwned='md-link') and [data link](data:text/html,<script>alert(1)</script>)
and [a real link](https://example.org/ok)
"""
HOSTILE = '<img src=x onerror="window.__pwned = \'text\'"><script>window.__pwned = "text"</script>'


@pytest.fixture(params=["with-csp", "sanitiser-only"])
def any_page(request: pytest.FixtureRequest, browser: Browser, navi: LiveNavi) -> Iterator[Page]:
    context, watched = open_context(browser, navi, bypass_csp=request.param == "sanitiser-only")
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    yield page
    context.close()
    assert dialogs == []
    assert watched.foreign == [], watched.foreign
    assert watched.errors == [], watched.errors


def pwned(page: Page) -> Any:
    return page.evaluate("() => window.__pwned ?? null")


def test_model_output_with_scripts_and_handlers_is_inert(
    any_page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    page = any_page
    script = use_script(fake_server)
    script.plan(f"1. Step one {HOSTILE}")
    script.turn(
        Reply(
            thinking=f"thinking {HOSTILE}",
            tool_calls=[ScriptedCall("todo", {"action": "set", "tasks": [HOSTILE]})],
        ),
        Reply(thinking=f"more {HOSTILE}", text=PAYLOAD),
    )
    open_app(page)
    send(page, f"Show me {HOSTILE}")
    wait_idle(page)
    answer = page.locator("article.turn .markdown.text").last
    expect(answer).to_contain_text("Here is the result.")
    page.wait_for_timeout(300)  # time for any onerror/onload to have fired

    messages = page.locator("#messages")
    assert messages.locator("script, iframe, form, svg:not(.icon), object, embed, style").count() == 0
    handlers = messages.evaluate(
        "(root) => [...root.querySelectorAll('*')].flatMap((n) => [...n.attributes]"
        ".filter((a) => a.name.startsWith('on') || a.name === 'style' || a.name === 'srcdoc')"
        ".map((a) => `${n.tagName}.${a.name}`))"
    )
    assert handlers == []
    hrefs = messages.locator("a").evaluate_all("(links) => links.map((a) => a.getAttribute('href'))")
    assert all(h is None or h.startswith(("https:", "/", "#")) for h in hrefs), hrefs
    expect(messages.locator('a[href="https://example.org/ok"]')).to_have_attribute(
        "rel", "noopener noreferrer nofollow"
    )

    # Clicking what looked like links and buttons does nothing.
    for text in ("raw link", "markdown link", "data link", "click me"):
        messages.get_by_text(text, exact=True).first.click()
    assert pwned(page) is None
    assert len(page.context.pages) == 1

    # The person's own words, tool arguments and results, thinking and plan show as text.
    expect(page.locator("article.msg.user .bubble")).to_have_text(f"Show me {HOSTILE}")
    page.locator("details.steps > summary").click()
    todo = page.locator('details.tool[data-tool="todo"]')
    todo.locator("summary").click()
    expect(todo.locator(".tool-args")).to_contain_text("onerror")
    expect(todo.locator(".tool-result")).to_contain_text("<script>")
    expect(page.locator("details.thinking").first).to_contain_text("onerror=")
    assert pwned(page) is None

    # Stored and drawn again from history: still inert.
    reload(page)
    expect(page.locator("article.turn .markdown.text").last).to_contain_text("Here is the result.")
    page.wait_for_timeout(300)
    assert page.locator("#messages").locator("script, iframe, form, svg:not(.icon)").count() == 0
    assert pwned(page) is None


def test_a_hostile_session_name_is_text(any_page: Page, navi: LiveNavi) -> None:
    page = any_page
    with navi.client() as http:
        sid = http.post("/sessions", json={"name": HOSTILE}).json()["session_id"]
    open_app(page, f"/#/s/{sid}")
    expect(page.locator("#session-title")).to_have_text(HOSTILE)
    expect(page.locator(f'#sessions li[data-id="{sid}"] .session-name')).to_have_text(HOSTILE)
    page.wait_for_timeout(300)
    assert page.locator("#sessions img, #session-title img").count() == 0
    assert pwned(page) is None
