"""An answer's rating (👍/👎): kept with the answer in its metadata on both stores, changed and
taken back, refused for anything but an answer, carried in the session's archive, never sent to
the model."""

from __future__ import annotations

from pathlib import Path

import pytest

from navi.llm.messages import Message
from navi.sessions.memory_store import InMemorySessionStore
from navi.sessions.store import SessionStore
from navi.storage.database import sqlite_url
from navi.storage.sessions import SqlSessionStore
from navi.testing.fake_server import FakeModelServer
from tests.server_helpers import live_navi, use_script


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> SessionStore:
    if request.param == "memory":
        return InMemorySessionStore()
    made = SqlSessionStore.at(sqlite_url(tmp_path / "navi.db"))
    await made.open()
    return made


async def test_a_rating_is_kept_changed_and_taken_back(store: SessionStore) -> None:
    session = await store.create("secretary", owner="ana")
    asked, answer = Message.user("Hello?"), Message.assistant("Hello!")
    await store.append(session.id, display=[asked, answer], context=[asked, answer])
    assert await store.set_feedback(session.id, answer.id, "up", owner="ana")
    assert not await store.set_feedback(session.id, asked.id, "up", owner="ana")  # not an answer
    assert not await store.set_feedback(session.id, answer.id, "up", owner="bob")  # not bob's
    assert not await store.set_feedback(session.id, "no-such-id", "up", owner="ana")
    got = await store.get(session.id)
    assert got is not None and got.messages[-1].metadata["feedback"] == "up"
    assert "feedback" not in got.context[-1].metadata  # the model's copy is untouched
    assert await store.set_feedback(session.id, answer.id, "down", owner="ana")
    assert await store.set_feedback(session.id, answer.id, None, owner="ana")
    got = await store.get(session.id)
    assert got is not None and got.messages[-1].metadata.get("feedback") is None
    await store.aclose()


def test_rating_over_rest_and_in_the_archive(tmp_path: Path, fake_server: FakeModelServer) -> None:
    use_script(fake_server).turn("A fine answer.")
    with live_navi(tmp_path, fake_server) as navi:
        sid = navi.new_session()
        with navi.client() as http:
            done = http.post(f"/sessions/{sid}/messages", json={"content": "Rate me"}).json()
            messages = http.get(f"/sessions/{sid}").json()["messages"]
            asked, answer = messages[0]["id"], messages[-1]["id"]
            rated = http.put(f"/sessions/{sid}/messages/{answer}/feedback", json={"rating": "down"})
            assert rated.status_code == 200 and rated.json() == {"message_id": answer, "rating": "down"}
            assert (
                http.put(f"/sessions/{sid}/messages/{asked}/feedback", json={"rating": "up"}).status_code
                == 404
            )
            bad = http.put(f"/sessions/{sid}/messages/{answer}/feedback", json={"rating": "meh"})
            assert bad.status_code == 422
            archive = http.get(f"/sessions/{sid}/export").json()
    assert done["content"] == "A fine answer."
    exported = [m for m in archive["messages"] if m.get("id") == answer]
    assert exported and exported[0]["metadata"]["extra"]["feedback"] == "down"  # Navi's key, kept
