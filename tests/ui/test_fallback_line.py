"""The page's live line when the model chain moves on mid-turn (issue 48): the first endpoint of
MODELS_FILE is a closed port, the second the fake model server; the turn shows which endpoint
failed and which is asked, above the answer, while the answer streams."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply
from tests.server_helpers import LiveNavi, live_navi
from tests.test_model_fallback_frames import BIG, SMALL, settings
from tests.ui.browser import open_app, send, wait_idle

pytestmark = pytest.mark.browser


@pytest.fixture
def navi(tmp_path: Path, fake_server: FakeModelServer) -> Iterator[LiveNavi]:
    with live_navi(tmp_path, fake_server, **settings(tmp_path, fake_server)) as server:
        yield server


def test_the_turn_says_which_model_failed_and_which_answers(page: Page, fake_server: FakeModelServer) -> None:
    fake_server.enqueue(Reply(text="The small model answers, " + "slowly " * 40, chunk_chars=6, delay=0.1))
    fake_server.enqueue("a title")
    open_app(page)
    send(page, "hello")
    turn = page.locator("article.turn").last
    line = turn.locator(".notice.fallback")
    expect(line).to_contain_text(f"big ({BIG}) failed: cannot reach Ollama at http://127.0.0.1:")
    expect(line).to_contain_text(f"— asking small ({SMALL})")
    expect(page.locator("#stop")).to_be_visible()  # shown while the turn still runs
    wait_idle(page)
    expect(turn).to_contain_text("The small model answers")
    assert line.count() == 1
    # Above the answer: the line comes first in the turn.
    text = turn.inner_text()
    assert text.index("asking small") < text.index("The small model answers")
