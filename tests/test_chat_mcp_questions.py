"""An MCP server's question during a tool call (elicitation), answered in `navi chat` (tmux): the
question under the call, `e` to fill the form in field by field (a wrong value is refused on its
line), Enter to confirm each; a page to open, declined with `n`. The server is
`tests/mcp_ask_server.py` (2026 SDK, spoken to in 2026-07-28), its calls run without approval."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.helpers.terminal import NAVI, Terminal, chat_env
from tests.server_helpers import live_navi, use_script
from tests.test_mcp_client import wait_for_tools

ASK_SERVER = Path(__file__).with_name("mcp_ask_server.py")


def call(name: str, args: dict) -> Reply:
    return Reply(tool_calls=[ScriptedCall(name, args)])


def test_questions_answered_in_the_terminal(tmp_path: Path, fake_server: FakeModelServer) -> None:
    servers = tmp_path / "mcp.json"
    entry = {"command": sys.executable, "args": [str(ASK_SERVER)], "approval": "auto"}
    servers.write_text(json.dumps({"mcpServers": {"shop": entry}}))
    script = use_script(fake_server)
    script.turn(call("shop__book", {"day": "friday"}), Reply(text="Your table is booked."))
    script.turn(call("shop__pay", {"amount": 20}), Reply(text="No deposit then."))
    with live_navi(tmp_path, fake_server, mcp_servers_file=str(servers), planning_enabled=False) as navi:
        wait_for_tools(navi, "shop__book", "shop__pay")
        port = navi.url.rsplit(":", 1)[1]
        env = chat_env(tmp_path, NAVI_PORT=port, DB_PATH=str(tmp_path / "navi.db"))
        term = Terminal([*NAVI, "chat", "--new"], env)
        try:
            term.wait_for_prompt()
            term.type("Book a table for friday")
            term.send("Enter")
            screen = term.wait_for("Answer? [e] fill in  [n] decline")
            assert (
                "The MCP server “shop” asks: A table on friday: for how many people, and in whose name?"
                in screen
            )
            term.send("e")
            term.wait_for("How many people * (a whole number): ▏")  # empty: nothing filled in for the user
            term.type("three")
            term.send("Enter")
            term.wait_for("✗ How many people: type a whole number")
            term.send("C-u")
            term.type("3")
            term.send("Enter")
            term.wait_for("The name the table is booked under * (text): ▏")
            term.type("Ada")
            term.send("Enter")
            term.wait_for("Outside, on the terrace (y / n): ▏")
            term.type("y")
            term.send("Enter")
            screen = term.wait_for("Your table is booked.")
            assert "booked friday for 3 under Ada on the terrace" in screen
            assert "   answered" in screen

            term.wait_for_prompt("Your table is booked.")
            term.type("Pay the deposit")
            term.send("Enter")
            screen = term.wait_for("Answer? [y] I will open it  [n] decline")
            assert "page: https://pay.example.com/deposit?amount=20" in screen
            term.send("n")
            screen = term.wait_for("No deposit then.")
            assert "deposit: the user answered decline" in screen and "   declined" in screen
        finally:
            term.close()
