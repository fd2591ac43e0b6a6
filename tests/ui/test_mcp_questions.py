"""An MCP server's question during a tool call (elicitation), answered on the page: the card of the
call shows the server's message and a form built from its schema (or the page it asks to open),
the user fills it in and sends it (or declines), and the server's tool gets exactly that.

The server is `tests/mcp_ask_server.py` (the 2026 SDK, spoken to in 2026-07-28: the question comes
back from the call as `input_required`); its calls run without approval (`"approval": "auto"`), so
the only question is the server's own."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.server_helpers import LiveNavi, live_navi, use_script
from tests.test_mcp_client import wait_for_tools
from tests.ui.browser import open_app, reload, send, wait_idle

pytestmark = [pytest.mark.browser]
ASK_SERVER = Path(__file__).parents[1] / "mcp_ask_server.py"


@pytest.fixture
def navi(tmp_path: Path, fake_server: FakeModelServer) -> Iterator[LiveNavi]:
    entry = {"command": sys.executable, "args": [str(ASK_SERVER)], "approval": "auto"}
    servers = tmp_path / "mcp.json"
    servers.write_text(json.dumps({"mcpServers": {"shop": entry}}))
    with live_navi(tmp_path, fake_server, mcp_servers_file=str(servers), planning_enabled=False) as server:
        wait_for_tools(server, "shop__book", "shop__pay")
        yield server


def call(name: str, args: dict) -> Reply:
    return Reply(tool_calls=[ScriptedCall(name, args)])


def test_a_form_answered_and_a_page_declined(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn(call("shop__book", {"day": "friday"}), Reply(text="Your table is booked."))
    open_app(page)
    send(page, "Book a table for friday")

    card = page.locator("article.turn details.tool[data-tool='shop__book']")
    question = card.locator(".elicitation")
    expect(question.locator(".elicit-from")).to_have_text("The MCP server “shop” asks you:")
    expect(question.locator(".elicit-message")).to_have_text(
        "A table on friday: for how many people, and in whose name?"
    )
    expect(card.locator(".status")).to_have_text("waiting for your answer")
    expect(page.locator("details.steps > summary")).to_contain_text("waiting for your answer")
    # Nothing is filled in for the user: the fields are empty (the checkbox has the schema's default).
    guests = question.locator("input[name='guests']")
    name = question.locator("input[name='name']")
    expect(guests).to_have_value("")
    expect(name).to_have_value("")
    expect(question.locator("input[name='terrace']")).not_to_be_checked()
    guests.fill("3")
    name.fill("Ada")
    question.locator("input[name='terrace']").check()
    question.get_by_role("button", name="Send").click()
    expect(question.locator(".approval-outcome")).to_have_text("Answered.")
    expect(question.locator("button")).to_have_count(0)
    expect(card.locator(".tool-result")).to_have_text("booked friday for 3 under Ada on the terrace")
    expect(page.locator("article.turn").last).to_contain_text("Your table is booked.")
    wait_idle(page)

    script.turn(call("shop__pay", {"amount": 20}), Reply(text="No deposit then."))
    send(page, "Pay the deposit")
    card = page.locator("article.turn").last.locator("details.tool[data-tool='shop__pay']")
    question = card.locator(".elicitation")
    expect(question.locator(".elicit-message")).to_have_text("A deposit of 20 EUR confirms the booking.")
    # A reload while the question waits: the run's frames are replayed, the question is there again.
    reload(page, mid_run=True)
    card = page.locator("article.turn").last.locator("details.tool[data-tool='shop__pay']")
    question = card.locator(".elicitation")
    expect(question.locator(".elicit-message")).to_have_text("A deposit of 20 EUR confirms the booking.")
    expect(question.locator(".elicit-url")).to_have_text("https://pay.example.com/deposit?amount=20")
    expect(question.get_by_role("button", name="Open page")).to_be_visible()
    question.get_by_role("button", name="Decline").click()
    expect(question.locator(".approval-outcome")).to_have_text("Declined.")
    expect(card.locator(".tool-result")).to_have_text("deposit: the user answered decline")
    expect(page.locator("article.turn").last).to_contain_text("No deposit then.")
    wait_idle(page)
