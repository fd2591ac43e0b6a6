"""Archives carry the tree: `session-archive/v1` with the other branches in `session.tree` (the
`messages` stay the path shown, as every v1 reader expects), imported back whole; an archive
without a tree is one branch; a broken tree is refused with the place it breaks."""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from navi.llm.messages import Message
from navi.sessions import tree
from navi.sessions.archive import ArchiveError, export_session, import_archive, parse_archive
from navi.sessions.memory_store import InMemorySessionStore
from navi.sessions.store import SessionStore
from navi.storage.database import sqlite_url
from navi.storage.sessions import SqlSessionStore


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionStore]:
    s: SessionStore = (
        InMemorySessionStore()
        if request.param == "memory"
        else SqlSessionStore.at(sqlite_url(tmp_path / "n.db"))
    )
    await s.open()
    try:
        yield s
    finally:
        await s.aclose()


async def branched(store: SessionStore) -> tuple[str, list[Message]]:
    s = await store.create("secretary", name="Capitals")
    q1, a1, q2, a2 = Message.user("q1"), Message.assistant("a1"), Message.user("q2"), Message.assistant("a2")
    for m in (q1, a1, q2, a2):
        await store.append(s.id, display=[m], context=[m])
    await store.branch_at(s.id, a1.id)
    q2b, a2b = Message.user("q2 edited"), Message.assistant("a2 again")
    await store.append(s.id, display=[q2b, a2b], context=[q2b, a2b])
    await store.branch_at(s.id, q2b.id)
    a2c = Message.assistant("a2 third")
    await store.append(s.id, display=[a2c], context=[a2c])
    return s.id, [q1, a1, q2, a2, q2b, a2b, a2c]


def texts(messages: list[Message]) -> list[str]:
    return [m.text for m in messages]


async def test_an_archive_carries_every_branch_and_imports_them_back(store: SessionStore) -> None:
    sid, (q1, a1, q2, a2, q2b, a2b, a2c) = await branched(store)
    session = await store.get(sid)
    assert session is not None
    archive = json.loads(json.dumps(export_session(session)))
    assert [m["content"] for m in archive["messages"]] == ["q1", "a1", "q2 edited", "a2 third"]
    assert sorted(m["content"] for m in archive["session"]["tree"]["messages"]) == ["a2", "a2 again", "q2"]
    back = parse_archive(json.dumps(archive), max_messages=100)
    assert "tree" not in back.custom
    await store.insert(back)
    got = await store.get(back.id)
    assert got is not None and texts(got.messages) == ["q1", "a1", "q2 edited", "a2 third"]
    assert got.parents == session.parents and got.message_count == 7
    assert texts((await store.get(back.id, branch=q2.id)).messages) == ["q1", "a1", "q2", "a2"]  # type: ignore[union-attr]
    assert texts((await store.get(back.id, branch=a2b.id)).messages)[-1] == "a2 again"  # type: ignore[union-attr]
    places = tree.siblings([m.id for m in got.messages], got.parents)
    assert places[a2c.id].siblings == [a2b.id, a2c.id] and places[q2b.id].siblings == [q2.id, q2b.id]
    again = export_session(got)  # a second export is the same tree
    assert again["session"]["tree"]["parents"] == archive["session"]["tree"]["parents"]


async def test_an_archive_without_a_tree_is_one_branch(store: SessionStore) -> None:
    sid, _ = await branched(store)
    session = await store.get(sid)
    assert session is not None
    archive = export_session(session)
    del archive["session"]["tree"]
    back = import_archive(archive)
    await store.insert(back)
    got = await store.get(back.id)
    assert got is not None and texts(got.messages) == ["q1", "a1", "q2 edited", "a2 third"]
    assert got.parents == tree.chain([m.id for m in got.messages]) and got.message_count == 4


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (lambda t: t.update(parents=["x"]), "session/tree/parents"),
        (lambda t: t.update(messages="x"), "session/tree"),
        (lambda t: t["messages"][0].update(role="wizard"), "session/tree/messages/0"),
        (lambda t: t["messages"].append(copy.deepcopy(t["messages"][0])), "appears twice"),
        (lambda t: t["parents"].update({k: None for k in t["parents"]}), "not a path of the tree"),
    ],
)
async def test_a_broken_tree_is_refused_clearly(damage: Any, said: str) -> None:
    store = InMemorySessionStore()
    sid, _ = await branched(store)
    session = await store.get(sid)
    assert session is not None
    archive = json.loads(json.dumps(export_session(session)))
    damage(archive["session"]["tree"])
    with pytest.raises(ArchiveError, match=said):
        parse_archive(json.dumps(archive), max_messages=100)
