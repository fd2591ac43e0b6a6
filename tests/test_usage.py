"""Usage and cost per message (issue 48, item 4): each assistant message a model call wrote carries
its model, tokens, time to first token, duration and (with a price) cost; `GET /usage` and
`navi usage` sum them per conversation and per user, never across users; archives keep them.

The model calls are timed on an injected clock, never the wall clock; the stored dates are fixed."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
from typer.testing import CliRunner

from navi.cli.main import _register, app
from navi.compose import build_runtime
from navi.config import SettingsError, load_settings
from navi.llm.messages import Message
from navi.llm.prices import Price, Prices
from navi.sessions.archive import archive_schema, export_session, import_archive
from navi.sessions.memory_store import InMemorySessionStore
from navi.sessions.models import Session, new_session_id
from navi.sessions.store import SessionStore
from navi.storage.database import postgres_url, sqlite_url
from navi.storage.sessions import SqlSessionStore
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.agent_helpers import MODEL, collect
from tests.server_helpers import live_navi
from tests.test_agent_tools import runtime_with_echo

_register()
runner = CliRunner()

DAY = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def ticks(*values: float) -> Callable[[], float]:
    """A clock that reads `values` in turn (and fails loudly if asked once more)."""
    left: Iterator[float] = iter(values)
    return lambda: next(left)


# --- prices ----------------------------------------------------------------------------------------
def test_prices_parse_one_price_or_one_per_model() -> None:
    assert Prices.parse("").of("any") is None
    assert Prices.parse("2.5,10").of("gpt-4o") == Price(2.5, 10)
    prices = Prices.parse("gpt-4o=2.5,10; *=0.15, 0.6")
    assert prices.of("gpt-4o") == Price(2.5, 10) and prices.of("other") == Price(0.15, 0.6)
    assert Prices.parse("gpt-4o=2.5,10").cost("llama3", 1000, 1000) is None
    assert Prices.parse("2,8").cost("m", 1_000_000, 500_000) == 6.0
    for bad in ("2.5", "a,b", "1,-2", "m=1,2; m=3,4", "1,nan"):
        with pytest.raises(ValueError):
            Prices.parse(bad)
    with pytest.raises(SettingsError, match=r"(?i)llm_price_per_mtok"):
        load_settings(llm_price_per_mtok="ten dollars")


# --- the metadata each model call leaves ------------------------------------------------------------
async def test_each_step_and_the_answer_carry_model_tokens_times_and_cost(tmp_path: Path) -> None:
    rt, _, script, tool, sid = await runtime_with_echo(
        tmp_path, planning_enabled=False, llm_price_per_mtok="2,8"
    )
    try:
        # Two model calls: start, first token, end of each.
        rt.agent.loop.clock = ticks(10.0, 10.2, 10.5, 20.0, 20.05, 21.0)
        script.turn(
            Reply(tool_calls=[ScriptedCall("echo", {"text": "x"})], prompt_tokens=100, completion_tokens=20),
            Reply(text="done", prompt_tokens=150, completion_tokens=10),
        )
        await collect(rt.agent.run_stream(sid, "echo x"))
        session = await rt.sessions.get(sid)
        assert session is not None
        step, answer = [m for m in session.messages if m.role == "assistant"]
        assert step.tool_calls and tool.calls == [{"text": "x"}]
        assert step.metadata.as_json() == {
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120, "estimated": False},
            "model": MODEL,
            "ttft_ms": 200.0,
            "duration_ms": 500.0,
            "cost": 0.00036,
        }
        assert answer.metadata.model == MODEL
        assert answer.metadata.usage is not None and answer.metadata.usage.total_tokens == 160
        assert (answer.metadata.ttft_ms, answer.metadata.duration_ms) == (50.0, 1000.0)
        assert answer.metadata.cost == 0.00038
        report = await rt.sessions.usage(owner="local")
        assert report.total.messages == 2 and report.total.total_tokens == 280
        assert report.total.cost == pytest.approx(0.00074)
    finally:
        await rt.aclose()


async def test_a_model_without_a_price_has_no_cost(tmp_path: Path) -> None:
    rt, _, script, _, sid = await runtime_with_echo(tmp_path, planning_enabled=False)
    try:
        rt.agent.loop.clock = ticks(1.0, 1.5, 2.0)
        script.turn(Reply(text="hello", prompt_tokens=40, completion_tokens=2))
        await collect(rt.agent.run_stream(sid, "hi"))
        session = await rt.sessions.get(sid)
        assert session is not None
        answer = session.messages[-1]
        assert "cost" not in answer.metadata
        assert answer.metadata.as_json()["usage"]["total_tokens"] == 42
        assert (answer.metadata.ttft_ms, answer.metadata.duration_ms) == (500.0, 1000.0)
        report = await rt.sessions.usage(owner="local")
        assert report.total.cost is None and report.total.priced_messages == 0
    finally:
        await rt.aclose()


# --- sums per conversation and per user ------------------------------------------------------------
def answer(prompt: int, completion: int, when: datetime, cost: float | None = None, **more: Any) -> Message:
    meta: dict[str, Any] = {
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
        "model": "m",
        "ttft_ms": 12.5,
        "duration_ms": 80.0,
        **more,
    }
    if cost is not None:
        meta["cost"] = cost
    return Message.assistant("answer", metadata=meta, created_at=when)


def conversation(owner: str, name: str, *answers: Message) -> Session:
    session = Session(id=new_session_id(), profile_id="secretary", name=name, owner=owner)
    first = answers[0].created_at - timedelta(seconds=1) if answers else DAY
    session.messages = [Message.user("question", created_at=first)]
    for item in answers:
        session.messages += [item, Message.user("more", created_at=item.created_at)]
    return session


WORLD = {
    "local": [
        ("Trip", [(100, 20, DAY, 0.001), (200, 30, DAY + timedelta(days=1), 0.002)]),
        ("Code", [(1000, 100, DAY + timedelta(days=3), None)]),
    ],
    "alice": [("Secret", [(7, 3, DAY, 0.5)])],
}


async def seed(store: SessionStore) -> dict[str, str]:
    ids = {}
    for owner, sessions in WORLD.items():
        for name, answers in sessions:
            session = conversation(owner, name, *(answer(p, c, when, cost) for p, c, when, cost in answers))
            await store.insert(session)
            ids[name] = session.id
    # Not counted: a user message, a failure record, an assistant message without usage.
    extra = conversation("local", "Plain")
    extra.messages.append(Message.assistant("no usage", created_at=DAY))
    await store.insert(extra)
    return ids


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionStore]:
    kind = request.param
    if kind == "memory":
        s: SessionStore = InMemorySessionStore()
    elif kind == "sqlite":
        s = SqlSessionStore.at(sqlite_url(tmp_path / "s.db"))
    else:
        s = SqlSessionStore.at(postgres_url(request.getfixturevalue("pg_url")))
    await s.open()
    try:
        yield s
    finally:
        await s.aclose()


async def test_usage_sums_per_conversation_and_user(store: SessionStore) -> None:
    ids = await seed(store)
    report = await store.usage(owner="local")
    assert report.user == "local"
    assert [(c.name, c.messages, c.total_tokens) for c in report.conversations] == [
        ("Code", 1, 1100),
        ("Trip", 2, 350),
    ]
    trip = report.conversations[1]
    assert trip.session_id == ids["Trip"]
    assert (trip.prompt_tokens, trip.completion_tokens, trip.cost, trip.priced_messages) == (
        300,
        50,
        0.003,
        2,
    )
    assert report.conversations[0].cost is None  # a local model: no price
    total = report.total
    assert (total.messages, total.prompt_tokens, total.completion_tokens, total.total_tokens) == (
        3,
        1300,
        150,
        1450,
    )
    assert total.cost == pytest.approx(0.003) and total.priced_messages == 2

    alice = await store.usage(owner="alice")
    assert [c.name for c in alice.conversations] == ["Secret"] and alice.total.cost == 0.5
    assert (await store.usage(owner="bob")).total.messages == 0

    # Between two moments: since ≤ created_at < until.
    day = await store.usage(owner="local", since=DAY + timedelta(hours=1), until=DAY + timedelta(days=2))
    assert [(c.name, c.total_tokens) for c in day.conversations] == [("Trip", 230)]


# --- GET /usage ----------------------------------------------------------------------------------------
async def _prepare(tmp_path: Path, fake: FakeModelServer) -> str:
    settings = load_settings(
        db_path=str(tmp_path / "navi.db"),
        session_files_dir=str(tmp_path / "session_files"),
        tools_dir=str(tmp_path / "tools"),
        skills_dir=str(tmp_path / "skills"),
        ollama_host=fake.url,
    )
    runtime = await build_runtime(settings, seed_tools=False)
    try:
        _, token = await runtime.users.add("alice")
        await seed(runtime.sessions)
    finally:
        await runtime.aclose()
    return token


def test_get_usage_is_each_users_own(tmp_path: Path, fake_server: FakeModelServer) -> None:
    alice_token = asyncio.run(_prepare(tmp_path, fake_server))
    with live_navi(tmp_path, fake_server) as navi, navi.client() as owner:
        mine = owner.get("/usage")
        assert mine.status_code == 200, mine.text
        body = mine.json()
        assert body["user"] == "local" and body["total"]["total_tokens"] == 1450
        assert [c["name"] for c in body["conversations"]] == ["Code", "Trip"]
        assert "Secret" not in mine.text

        with httpx.Client(
            base_url=navi.url, timeout=30, headers={"Authorization": f"Bearer {alice_token}"}
        ) as alice:
            hers = alice.get("/usage").json()
            assert hers["user"] == "alice" and [c["name"] for c in hers["conversations"]] == ["Secret"]
            assert hers["total"] == {
                "messages": 1,
                "prompt_tokens": 7,
                "completion_tokens": 3,
                "total_tokens": 10,
                "cost": 0.5,
                "priced_messages": 1,
                "estimated": False,
            }
            refused = alice.get("/usage", params={"user": "local"})
            assert refused.status_code == 403 and refused.json()["code"] == "owner_only"
            assert "Trip" not in refused.text
            assert alice.get("/usage", params={"user": "alice"}).status_code == 200

        # The owner may ask for another user's.
        assert [c["name"] for c in owner.get("/usage", params={"user": "alice"}).json()["conversations"]] == [
            "Secret"
        ]
        # Days, inclusive, in UTC.
        day = owner.get("/usage", params={"since": "2026-03-03", "until": "2026-03-03"}).json()
        assert [(c["name"], c["total_tokens"]) for c in day["conversations"]] == [("Trip", 230)]
        backwards = owner.get("/usage", params={"since": "2026-03-05", "until": "2026-03-01"})
        assert backwards.status_code == 422 and backwards.json()["code"] == "bad_request"


# --- navi usage ---------------------------------------------------------------------------------------
def test_navi_usage_prints_the_same_report(tmp_path: Path) -> None:
    env = {
        "DB_PATH": str(tmp_path / "n.db"),
        "SESSION_FILES_DIR": str(tmp_path / "files"),
        "TOOLS_DIR": str(tmp_path / "tools"),
        "LOG_LEVEL": "WARNING",
    }

    async def seeded() -> None:
        rt = await build_runtime(load_settings(**{k.lower(): v for k, v in env.items()}))
        try:
            await rt.users.add("alice")
            await seed(rt.sessions)
        finally:
            await rt.aclose()

    asyncio.run(seeded())
    as_json = runner.invoke(app, ["usage", "--json"], env=env)
    assert as_json.exit_code == 0, as_json.output
    report = json.loads(as_json.stdout)
    assert report["user"] == "local" and report["total"]["total_tokens"] == 1450
    assert [c["name"] for c in report["conversations"]] == ["Code", "Trip"]

    table = runner.invoke(app, ["usage"], env=env)
    assert table.exit_code == 0, table.output
    lines = table.stdout.splitlines()
    assert lines[0].split() == ["msgs", "prompt", "completion", "total", "cost", "conversation"]
    assert lines[1].split()[:5] == ["1", "1,000", "100", "1,100", "-"] and "Code" in lines[1]
    assert lines[2].split()[:5] == ["2", "300", "50", "350", "$0.0030"] and "Trip" in lines[2]
    assert lines[-1].split() == ["3", "1,300", "150", "1,450", "$0.0030", "all", "conversations"]
    assert "Secret" not in table.stdout

    hers = runner.invoke(
        app, ["usage", "--user", "alice", "--since", "2026-03-02", "--until", "2026-03-02"], env=env
    )
    assert hers.exit_code == 0, hers.output
    assert "Secret" in hers.stdout and "Trip" not in hers.stdout
    empty = runner.invoke(app, ["usage", "--since", "2027-01-01"], env=env)
    assert empty.exit_code == 0 and "No answers with usage yet." in empty.stdout
    assert (
        runner.invoke(app, ["usage", "--since", "2026-03-05", "--until", "2026-03-01"], env=env).exit_code
        == 1
    )


# --- archives ------------------------------------------------------------------------------------------
def test_archives_carry_a_calls_usage_both_ways() -> None:
    step = answer(100, 20, DAY, 0.00036)
    session = conversation("local", "Trip", step, answer(5, 1, DAY + timedelta(seconds=5)))
    archive = export_session(session)
    jsonschema.validate(archive, archive_schema())
    out = next(m for m in archive["messages"] if m["id"] == step.id)
    assert out["metadata"]["extra"] == step.metadata.as_json()  # duration_ms included: an answer's
    back = import_archive(json.loads(json.dumps(archive)))
    by_id = {m.id: m for m in back.messages}
    for message in session.messages:
        assert by_id[message.id].metadata.as_json() == message.metadata.as_json()
    assert by_id[step.id].metadata.cost == 0.00036 and by_id[step.id].metadata.duration_ms == 80.0
