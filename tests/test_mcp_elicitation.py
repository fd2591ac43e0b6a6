"""MCP servers asking the user during a call (elicitation), on both protocol eras.

Navi's `ServerConnection` against real stdio servers: `mcp_ask_server.py` on the 2026 SDK (spoken
to in 2026-07-28, questions returned from the call as `input_required`) and `mcp_old_server.py`
on the 2025 SDK (`mcp` 1.27.2, fetched pinned: it knows no `server/discover`, so Navi falls back to
the `initialize` handshake of 2025-11-25, and it asks with `elicitation/create` mid-call). The
call runs in a run context whose events a test reads as the page would, answering the card the
way the WebSocket's `elicitation` frame does (`Elicitations.answer`).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from navi.mcp.config import ServerConfig
from navi.mcp.connection import ServerConnection
from navi.mcp.elicitation import ElicitationInvalid, ElicitationNotFound, Elicitations
from navi.protocol import ElicitationRequired, ElicitationResolved
from navi.runctx import RunContext, using
from navi.testing.old_mcp import PROTOCOL, old_sdk_path

HERE = Path(__file__).parent
Answerer = Callable[[Elicitations, ElicitationRequired], Awaitable[None]]


@asynccontextmanager
async def connected(script: str, env: dict[str, str] | None = None) -> AsyncIterator[ServerConnection]:
    config = ServerConfig(name="shop", command=sys.executable, args=(str(HERE / script),), env=env or {})
    connection = ServerConnection(config, elicitations=Elicitations(timeout_seconds=20))
    connection.start()
    try:
        assert await connection.wait_started(60), connection.error + connection.stderr_tail()
        yield connection
    finally:
        await connection.aclose()


async def call_asking(
    connection: ServerConnection, tool: str, args: dict[str, Any], answer: Answerer | None, **ctx_options: Any
) -> tuple[str, bool, list[Any]]:
    """Call `tool` in a run; `answer` answers each question as the user would. The result's text,
    its success, and the run's events."""
    sink: asyncio.Queue[Any] = asyncio.Queue()
    ctx = RunContext(session_id="s1", event_sink=sink, **ctx_options)
    events: list[Any] = []

    async def user() -> None:
        while True:
            event = await sink.get()
            events.append(event)
            if isinstance(event, ElicitationRequired) and answer is not None:
                await answer(connection.elicitations, event)

    watcher = asyncio.create_task(user())
    try:
        with using(ctx):
            result = await connection.call(tool, args, shown_as=f"shop__{tool}")
        await asyncio.sleep(0.05)
    finally:
        watcher.cancel()
    while not sink.empty():
        events.append(sink.get_nowait())
    return result.to_message_content(), result.success, events


async def test_a_2026_server_asks_for_a_form_and_a_url() -> None:
    async with connected("mcp_ask_server.py") as connection:
        assert connection.protocol_version == "2026-07-28"

        async def fill(desk: Elicitations, question: ElicitationRequired) -> None:
            assert question.mode == "form" and question.tool == "shop__book" and question.server == "shop"
            assert question.message == "A table on friday: for how many people, and in whose name?"
            schema = question.requested_schema
            assert isinstance(schema, dict)
            assert set(schema["properties"]) == {"guests", "name", "terrace"}
            assert schema["properties"]["guests"]["type"] == "integer"
            # A wrong answer is refused and the question keeps waiting; the right one goes through.
            with pytest.raises(ElicitationInvalid, match="'guests' must be a number"):
                desk.answer("s1", question.elicitation_id, "accept", {"guests": "three", "name": "Ada"})
            with pytest.raises(ElicitationInvalid, match="'name' is required"):
                desk.answer("s1", question.elicitation_id, "accept", {"guests": 3})
            with pytest.raises(ElicitationNotFound):
                desk.answer(
                    "another-session", question.elicitation_id, "accept", {"guests": 3, "name": "Ada"}
                )
            desk.answer(
                "s1", question.elicitation_id, "accept", {"guests": 3, "name": "Ada", "terrace": True}
            )

        text, ok, events = await call_asking(connection, "book", {"day": "friday"}, fill)
        assert ok and text == "booked friday for 3 under Ada on the terrace"
        [asked] = [e for e in events if isinstance(e, ElicitationRequired)]
        [settled] = [e for e in events if isinstance(e, ElicitationResolved)]
        assert (settled.elicitation_id, settled.action, settled.by) == (
            asked.elicitation_id,
            "accept",
            "user",
        )
        assert connection.elicitations.waiting("s1") == []

        async def decline(desk: Elicitations, question: ElicitationRequired) -> None:
            assert question.mode == "url"
            assert question.url == "https://pay.example.com/deposit?amount=20"
            assert question.message == "A deposit of 20 EUR confirms the booking."
            desk.answer("s1", question.elicitation_id, "decline", {"ignored": "for a URL"})

        text, ok, _ = await call_asking(connection, "pay", {"amount": 20}, decline)
        assert ok and text == "deposit: the user answered decline"


async def test_a_2025_server_gets_the_handshake_and_asks_mid_call() -> None:
    old = str(old_sdk_path())
    async with connected("mcp_old_server.py", {"PYTHONPATH": old}) as connection:
        assert connection.protocol_version == PROTOCOL == "2025-11-25"

        async def fill(desk: Elicitations, question: ElicitationRequired) -> None:
            assert question.mode == "form" and set(question.requested_schema["properties"]) == {
                "guests",
                "name",
            }  # type: ignore[index]
            desk.answer("s1", question.elicitation_id, "accept", {"guests": 2, "name": "Grace"})

        text, ok, _ = await call_asking(connection, "book", {"day": "monday"}, fill)
        assert ok and text == "booked monday for 2 under Grace (sdk 2025-11-25)"

        async def no(desk: Elicitations, question: ElicitationRequired) -> None:
            desk.answer("s1", question.elicitation_id, "decline")

        text, ok, _ = await call_asking(connection, "book", {"day": "monday"}, no)
        assert ok and text == "not booked: decline"


async def test_nobody_to_ask_and_a_stop_settle_it_as_cancel() -> None:
    async with connected("mcp_ask_server.py") as connection:
        # A run nobody can be asked in (the OpenAI-compatible API, Navi's own MCP server): no card,
        # no waiting, nothing filled in.
        text, ok, events = await call_asking(connection, "book", {"day": "friday"}, None, unattended="deny")
        assert ok and text == "not booked: nobody answered"
        assert not any(isinstance(e, ElicitationRequired) for e in events)
        assert [(e.action, e.by) for e in events if isinstance(e, ElicitationResolved)] == [
            ("cancel", "unattended")
        ]

        stop = asyncio.Event()

        async def walk_away(_desk: Elicitations, _question: ElicitationRequired) -> None:
            stop.set()  # the user stops the run instead of answering

        text, _ok, events = await call_asking(
            connection, "book", {"day": "friday"}, walk_away, stop_event=stop
        )
        assert [(e.action, e.by) for e in events if isinstance(e, ElicitationResolved)] == [
            ("cancel", "stop")
        ]
        assert connection.elicitations.waiting("s1") == []


async def test_a_question_that_cannot_be_shown_safely_is_never_shown() -> None:
    """A page that is not http(s) (never offered to open), a form that is not flat fields, or one
    too large: the server is told `cancel`, and no card is drawn."""
    sink: asyncio.Queue[Any] = asyncio.Queue()
    ctx = RunContext(session_id="s1", event_sink=sink)
    desk = Elicitations(timeout_seconds=5)
    nested = {"type": "object", "properties": {"address": {"type": "object", "properties": {}}}}
    many = {"type": "object", "properties": {f"f{i}": {"type": "string"} for i in range(31)}}
    for url, schema in (
        ("javascript:alert(1)", None),
        ("file:///etc/passwd", None),
        (None, nested),
        (None, many),
        (None, {"type": "object", "properties": "nope"}),
    ):
        answer = await desk.ask(
            ctx, server="shop", tool="shop__x", message="?", requested_schema=schema, url=url
        )
        assert answer.action == "cancel" and answer.content is None
    assert sink.empty() and desk.waiting("s1") == []
