"""Messages sent while a turn runs, across workers on PostgreSQL: the queue is in the database.

Two runtimes on one PostgreSQL database, each with its run manager on the PostgreSQL bus and the
SQL queue, are two workers. A turn runs on A; messages sent through B wait (B cannot start a turn
A holds), every connection of either worker hears of them, the steering one reaches A's running
turn, and A runs the queued one when its turn ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from navi.runs import RunManager
from navi.runs.leases import SqlLeases
from navi.runs.pg import PgBus
from navi.runs.queue import SqlQueue
from navi.testing.agent_script import AgentScript
from navi.testing.script import Reply, ScriptedCall
from tests.agent_helpers import scripted_runtime

pytestmark = pytest.mark.postgres


@pytest.fixture
async def two(tmp_path: Path, pg_url: str) -> AsyncIterator[tuple[Any, Any, AgentScript]]:
    script = AgentScript()
    made = []
    for _ in range(2):
        rt, _, _ = await scripted_runtime(
            tmp_path, script, sql=True, database_url=pg_url, planning_enabled=False
        )
        assert rt.db is not None
        leases = SqlLeases(rt.db)
        runs = RunManager(rt.agent, leases, PgBus(rt.db, leases.worker), queue=SqlQueue(rt.db))
        await runs.open()
        made.append((rt, runs))
    try:
        yield made[0], made[1], script
    finally:
        for rt, runs in made:
            await runs.shutdown()
            await rt.aclose()


async def test_messages_sent_through_another_worker_wait_steer_and_run_after(
    two: tuple[Any, Any, AgentScript],
) -> None:
    (rt_a, a), (_rt_b, b), script = two
    release = asyncio.Event()
    script.turn(
        Reply(
            text="Noting it.",
            chunk_chars=2,
            wait_for=release,
            wait_after=1,
            tool_calls=[ScriptedCall("todo", {"action": "set", "tasks": ["book"]})],
        ),
        "Booked for Friday.",
        "Queued, answered.",
    )
    session = await rt_a.sessions.create("secretary")
    heard_on_a: list[dict[str, Any]] = []
    a.feed.join(heard_on_a.append)
    run = await a.start(session.id, "book a table")
    for _ in range(250):  # the first model call is under way (and waits for `release`)
        if any(f["type"] == "stream_delta" for f in run.frames):
            break
        await asyncio.sleep(0.02)
    steer = await b.queueing.send(session.id, session.owner, "Friday, not Thursday", mode="steer")
    queued = await b.queueing.send(session.id, session.owner, "and a taxi", mode="queue")
    assert steer.run is None and queued.run is None  # A holds the session: both wait
    assert (steer.position, queued.position) == (1, 2)
    assert [w.content for w in await a.queue.waiting(session.id)] == ["Friday, not Thursday", "and a taxi"]
    for _ in range(200):  # the feed's frames reach A's connections through the bus
        if len([f for f in heard_on_a if f["type"] == "queued"]) == 2:
            break
        await asyncio.sleep(0.02)
    assert [(f["message_id"], f["mode"]) for f in heard_on_a if f["type"] == "queued"] == [
        (steer.queued.message_id, "steer"),
        (queued.queued.message_id, "queue"),
    ]
    release.set()
    await asyncio.wait_for(run.finished.wait(), 10)
    steered = [f for f in run.frames if f["type"] == "steered"]
    assert [f["message_id"] for f in steered] == [steer.queued.message_id]
    for _ in range(250):  # A runs what waited once its turn is over
        stored = await rt_a.sessions.get(session.id)
        if stored is not None and len(stored.messages) == 7:
            break
        await asyncio.sleep(0.02)
    assert [(m.role, m.content) for m in stored.messages if m.role != "tool"] == [
        ("user", "book a table"),
        ("assistant", "Noting it."),
        ("user", "Friday, not Thursday"),
        ("assistant", "Booked for Friday."),
        ("user", "and a taxi"),
        ("assistant", "Queued, answered."),
    ]
    assert stored.messages[5].id == queued.queued.message_id  # after the tool result (2)
    assert await b.queue.waiting(session.id) == []
    second = [m.content for m in script.of_kind("turn")[1].messages if m.role == "user"]
    assert second[-1] == "Friday, not Thursday"
