"""Search across conversations where people and the model meet it: `GET /search` on a live Navi with
two users, `navi sessions search`, and the `search_conversations` tool through the agent loop."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from navi.agent.events import ToolEvent
from navi.cli.main import _register, app
from navi.llm.messages import Message
from navi.sessions.models import Session
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.agent_helpers import collect, scripted_runtime
from tests.server_helpers import LiveNavi, live_navi, use_script

_register()
runner = CliRunner()


def archive(name: str, profile: str, *messages: tuple[str, str, str]) -> dict[str, Any]:
    """A session-archive/v1 document: (role, ISO time, text) per message."""
    return {
        "schema_version": "session-archive/v1",
        "session": {"id": "x", "name": name, "profile_id": profile, "created_at": messages[0][1]},
        "messages": [
            {"id": f"{name}-{i}", "role": role, "timestamp": when, "content": text}
            for i, (role, when, text) in enumerate(messages)
        ],
    }


TRIP = archive(
    "Lisbon trip",
    "secretary",
    ("user", "2026-03-01T10:00:00Z", "Find a hotel in Lisbon near the river"),
    ("assistant", "2026-03-01T10:01:00Z", "Three hotels in Lisbon by the Tagus river: …"),
)
GARDEN = archive(
    "Garden",
    "smart_home",
    ("user", "2026-04-10T08:00:00Z", "Water the garden at dawn, like in Lisbon"),
)
SECRET = archive("Bob's", "secretary", ("user", "2026-03-01T09:00:00Z", "my Lisbon password is hunter2"))


def cli_user(db: Path, *args: str) -> Any:
    return runner.invoke(app, list(args), env={"DB_PATH": str(db), "LOG_LEVEL": "WARNING"})


@pytest.fixture
def navi(tmp_path: Path, fake_server: FakeModelServer) -> Iterator[LiveNavi]:
    with live_navi(tmp_path, fake_server) as live:
        yield live


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_search_over_http_is_per_user_ranked_and_filtered(navi: LiveNavi) -> None:
    db = Path(navi.settings.db_path)
    added = cli_user(db, "users", "add", "bob")
    assert added.exit_code == 0, added.output
    bob = added.stdout.strip()
    with navi.client() as http, httpx.Client(base_url=navi.url, headers=bearer(bob), timeout=30) as as_bob:
        for doc in (TRIP, GARDEN):
            assert http.post("/sessions/import", json=doc).status_code == 201
        assert as_bob.post("/sessions/import", json=SECRET).status_code == 201

        hits = http.get("/search", params={"q": "lisbon"}).json()
        assert sorted(h["snippet"] for h in hits) == [
            "Find a hotel in Lisbon near the river",
            "Three hotels in Lisbon by the Tagus river: …",
            "Water the garden at dawn, like in Lisbon",
        ]
        assert all("hunter2" not in json.dumps(h) for h in hits)  # never another user's
        (hotel,) = http.get("/search", params={"q": "hotel riv"}).json()
        assert (hotel["session_name"], hotel["message_id"], hotel["created_at"]) == (
            "Lisbon trip",
            "Lisbon trip-0",
            "2026-03-01T10:00:00Z",
        )
        assert [hotel["snippet"][a:b] for a, b in hotel["highlights"]] == ["hotel", "river"]

        def found(**params: Any) -> list[str]:
            resp = http.get("/search", params={"q": "lisbon", **params})
            assert resp.status_code == 200, resp.text
            return sorted(h["message_id"] for h in resp.json())

        assert found(**{"from": "2026-04-10"}) == ["Garden-0"]
        assert found(to="2026-03-01") == ["Lisbon trip-0", "Lisbon trip-1"]
        assert found(**{"from": "2026-03-02", "to": "2026-04-09"}) == []
        assert found(profile="smart_home") == ["Garden-0"]
        assert len(found(limit=1)) == 1
        assert [h["snippet"] for h in as_bob.get("/search", params={"q": "lisbon"}).json()] == [
            "my Lisbon password is hunter2"
        ]
        # Hostile or wrong input: words only, or a clear 422 — never a 500.
        for q in ('"', 'lisbon" OR "x', "NEAR(lisbon)", "lisbon*", "'; DROP TABLE sessions; --", "x" * 1000):
            assert http.get("/search", params={"q": q}).status_code == 200, q
        for params in (
            {"q": ""},
            {"q": "x" * 1001},
            {"q": "lisbon", "from": "yesterday"},
            {"q": "lisbon", "from": "2026-05-01", "to": "2026-04-01"},
            {"q": "lisbon", "limit": 0},
            {"q": "lisbon", "limit": 101},
            {},
        ):
            resp = http.get("/search", params=params)
            assert resp.status_code == 422 and resp.json()["code"] == "bad_request", (params, resp.text)
        assert found(to="9999-12-31") != []
    with navi.client(anonymous=True) as stranger:
        assert stranger.get("/search", params={"q": "lisbon"}).status_code == 401


def test_a_temporary_chat_is_found_by_no_search(navi: LiveNavi, fake_server: FakeModelServer) -> None:
    """`GET /search` (the page's search box asks it) and `navi sessions search` never find a message
    of a temporary chat while it exists; the same words in a kept conversation are found."""
    use_script(fake_server).turn("Got it.", "Noted: the vault and the gate.")
    with navi.client() as http:
        kept = http.post("/sessions", json={}).json()["session_id"]
        passing = http.post("/sessions", json={"temporary": True}).json()["session_id"]
        for sid, text in (
            (kept, "The gate code is 4711"),
            (passing, "The gate code is 9090 and the vault 1234"),
        ):
            assert http.post(f"/sessions/{sid}/messages", json={"content": text}).status_code == 200
        for words in ("gate code", "gate", "vault", "9090", "noted"):
            hits = http.get("/search", params={"q": words}).json()
            assert all(h["session_id"] != passing for h in hits), (words, hits)
        assert [h["snippet"] for h in http.get("/search", params={"q": "gate code"}).json()] == [
            "The gate code is 4711"
        ]
        assert http.get("/search", params={"q": "vault"}).json() == []
        assert http.get(f"/sessions/{passing}").status_code == 200  # it exists meanwhile
    db = Path(navi.settings.db_path)
    for words in ("vault", "9090"):
        shown = cli_user(db, "sessions", "search", words)
        assert shown.exit_code == 0 and shown.stdout.strip() == "No message has all of those words.", words
    found = json.loads(cli_user(db, "sessions", "search", "gate", "--json").stdout)
    assert [(h["session_id"], h["snippet"]) for h in found] == [(kept, "The gate code is 4711")]


def test_navi_sessions_search(tmp_path: Path) -> None:
    db = tmp_path / "navi.db"
    for doc in (TRIP, GARDEN):
        path = tmp_path / f"{doc['session']['name']}.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        assert cli_user(db, "sessions", "import", str(path)).exit_code == 0
    result = cli_user(db, "sessions", "search", "hotel")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert sorted(lines[1::2]) == [
        "    Find a **hotel** in Lisbon near the river",
        "    Three **hotels** in Lisbon by the Tagus river: …",
    ]
    assert sorted(line[:31] for line in lines[0::2]) == [
        "2026-03-01 10:00  Lisbon trip  ",
        "2026-03-01 10:01  Lisbon trip  ",
    ]
    assert all(re.fullmatch(r".*  \[[0-9a-f-]{36}\]", line) for line in lines[0::2])
    as_json = json.loads(
        cli_user(db, "sessions", "search", "lisbon", "--profile", "smart_home", "--json").stdout
    )
    assert [(h["session_name"], h["snippet"]) for h in as_json] == [
        ("Garden", "Water the garden at dawn, like in Lisbon")
    ]
    dated = cli_user(db, "sessions", "search", "lisbon", "--from", "2026-04-01", "--json")
    assert [h["message_id"] for h in json.loads(dated.stdout)] == ["Garden-0"]
    assert (
        cli_user(db, "sessions", "search", "zanzibar").stdout.strip() == "No message has all of those words."
    )
    bad = cli_user(db, "sessions", "search", "lisbon", "--from", "May")
    assert bad.exit_code == 1 and "YYYY-MM-DD" in bad.stderr
    nothing = cli_user(db, "sessions", "search", '"*"')
    assert nothing.exit_code == 1 and "no words" in nothing.stderr


async def test_the_tool_finds_the_owners_other_conversations_only(tmp_path: Path) -> None:
    rt, _backend, script = await scripted_runtime(tmp_path, sql=True)
    try:
        for owner, name, text in (
            ("alice", "Paint", "The living room paint is Farrow & Ball Hague Blue"),
            ("bob", "Bob paint", "Bob's paint is Hague Blue too"),
        ):
            await rt.sessions.insert(
                Session(
                    id="11111111-2222-4333-8444-55555555555" + ("5" if owner == "alice" else "6"),
                    owner=owner,
                    profile_id="secretary",
                    name=name,
                    messages=[Message.user(text, created_at=datetime(2026, 2, 3, 9, tzinfo=UTC))],
                )
            )
        script.turn(
            Reply(
                tool_calls=[
                    ScriptedCall("search_conversations", {"query": "hague blue"}),
                    ScriptedCall("search_conversations", {"query": "blue", "from": "soon"}),
                    ScriptedCall("search_conversations", {"query": "zanzibar"}),
                ]
            ),
            Reply(text="It was Hague Blue."),
        )
        session = await rt.sessions.create("secretary", owner="alice")
        events = await collect(rt.agent.run_stream(session.id, "Which blue did we pick?"))
        found, bad, none = [e for e in events if isinstance(e, ToolEvent)]
        assert found.success and found.result == (
            "1 message(s), best match first:\n"
            "- 2026-02-03 · “Paint” · user: The living room paint is Farrow & Ball **Hague** **Blue**"
        )
        assert not bad.success and "YYYY-MM-DD" in bad.result
        assert none.success and "No message" in none.result
        assert "secretary" in rt.profiles.ids()
        assert "search_conversations" in rt.profiles.get("secretary").enabled_tools
        assert "search_conversations" not in rt.profiles.get("server_admin").enabled_tools
    finally:
        await rt.aclose()
