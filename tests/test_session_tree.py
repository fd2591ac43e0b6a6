"""A conversation is a tree (navi/sessions/tree.py): the store contract for parents, the active leaf
and branches, in memory, on SQLite and on a real PostgreSQL, and migration 0016's backfill."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from navi.llm.messages import Message
from navi.sessions import tree
from navi.sessions.models import Session
from navi.sessions.store import SessionNotFound, SessionStore
from navi.sessions.tree import BranchNotFound
from navi.storage import migrate
from navi.storage.database import Database
from navi.storage.sessions import SqlSessionStore
from tests.helpers.old_schema import old_session
from tests.helpers.session_stores import STORES, opened_store, url_of

SQL = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=STORES)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionStore]:
    async with opened_store(request.param, tmp_path, request) as s:
        yield s


def texts(session: Session | None) -> list[str]:
    assert session is not None
    return [m.text for m in session.messages]


async def turn(store: SessionStore, sid: str, question: str, answer: str) -> tuple[Message, Message]:
    user, reply = Message.user(question), Message.assistant(answer)
    await store.append(sid, display=[user], context=[user])
    await store.append(sid, display=[reply], context=[reply])
    return user, reply


async def test_a_session_without_branches_is_one_chain(store: SessionStore) -> None:
    s = await store.create("secretary")
    u1, a1 = await turn(store, s.id, "q1", "a1")
    u2, a2 = await turn(store, s.id, "q2", "a2")
    got = await store.get(s.id)
    assert got is not None and texts(got) == ["q1", "a1", "q2", "a2"]
    assert got.parents == {u1.id: None, a1.id: u1.id, u2.id: a1.id, a2.id: u2.id}
    assert got.active_leaf == a2.id
    path = [m.id for m in got.messages]
    assert all(
        info.siblings == [i] and info.sibling_index == 0
        for i, info in tree.siblings(path, got.parents).items()
    )
    agent_view = await store.get(s.id, display=False)
    assert agent_view is not None and agent_view.parents == {} and agent_view.messages == []


async def test_branches_are_kept_and_switched(store: SessionStore) -> None:
    s = await store.create("secretary")
    u1, a1 = await turn(store, s.id, "q1", "a1")
    u2, a2 = await turn(store, s.id, "q2", "a2")
    await store.branch_at(s.id, a1.id)  # an edit of q2: its siblings hang below a1
    u2b, a2b = await turn(store, s.id, "q2 edited", "a2 again")
    got = await store.get(s.id)
    assert texts(got) == ["q1", "a1", "q2 edited", "a2 again"]
    assert got is not None and got.active_leaf == a2b.id and got.message_count == 6
    info = tree.siblings([m.id for m in got.messages], got.parents)
    assert (info[u2b.id].siblings, info[u2b.id].sibling_index) == ([u2.id, u2b.id], 1)
    assert info[u1.id].siblings == [u1.id]

    assert texts(await store.get(s.id, branch=u2.id)) == ["q1", "a1", "q2", "a2"]  # shown, not switched
    assert texts(await store.get(s.id)) == ["q1", "a1", "q2 edited", "a2 again"]
    assert await store.set_leaf(s.id, u2.id) == a2.id  # switching: the newest leaf below
    assert texts(await store.get(s.id)) == ["q1", "a1", "q2", "a2"]
    u3, _ = await turn(store, s.id, "q3", "a3")  # a turn goes on the active branch
    assert texts(await store.get(s.id)) == ["q1", "a1", "q2", "a2", "q3", "a3"]
    assert texts(await store.get(s.id, branch=u2b.id)) == ["q1", "a1", "q2 edited", "a2 again"]

    await store.branch_at(s.id, u1.id)  # a regenerated first answer
    await store.append(s.id, display=[Message.assistant("a1 again")])
    assert texts(await store.get(s.id)) == ["q1", "a1 again"]
    # below a1 the newest child (the edited question) is taken
    assert texts(await store.get(s.id, branch=a1.id)) == ["q1", "a1", "q2 edited", "a2 again"]


async def test_a_new_first_message_is_a_new_root(store: SessionStore) -> None:
    s = await store.create("secretary")
    u1, _ = await turn(store, s.id, "q1", "a1")
    await store.branch_at(s.id, None)
    assert texts(await store.get(s.id)) == []
    v1, _ = await turn(store, s.id, "q1 edited", "b1")
    got = await store.get(s.id)
    assert got is not None and texts(got) == ["q1 edited", "b1"]
    assert tree.siblings([v1.id], got.parents)[v1.id].siblings == [u1.id, v1.id]
    assert texts(await store.get(s.id, branch=u1.id)) == ["q1", "a1"]


async def test_unknown_branches_and_other_owners(store: SessionStore) -> None:
    s = await store.create("secretary", owner="alice")
    u1, _ = await turn(store, s.id, "q1", "a1")
    other = await store.create("secretary", owner="alice")
    elsewhere, _ = await turn(store, other.id, "q", "a")
    for bad in ("nope", elsewhere.id, "x" * 10_000):
        with pytest.raises(BranchNotFound):
            await store.get(s.id, branch=bad)
        with pytest.raises(BranchNotFound):
            await store.set_leaf(s.id, bad)
        with pytest.raises(BranchNotFound):
            await store.branch_at(s.id, bad)
    assert "x" * 65 not in str(BranchNotFound("x" * 10_000))
    assert await store.get(s.id, owner="bob", branch=u1.id) is None
    with pytest.raises(SessionNotFound):
        await store.set_leaf(s.id, u1.id, owner="bob")
    with pytest.raises(SessionNotFound):
        await store.branch_at(s.id, None, owner="bob")
    assert texts(await store.get(s.id)) == ["q1", "a1"]


async def test_insert_keeps_the_tree(store: SessionStore) -> None:
    q, a, b = Message.user("q"), Message.assistant("a"), Message.assistant("b")
    session = Session(
        id="0a1b2c3d-0000-4000-8000-0000000000aa",
        profile_id="secretary",
        messages=[q, a, b],
        parents={q.id: None, a.id: q.id, b.id: q.id},
        active_leaf=a.id,
    )
    await store.insert(session)
    got = await store.get(session.id)
    assert texts(got) == ["q", "a"] and got is not None and got.parents == session.parents
    assert texts(await store.get(session.id, branch=b.id)) == ["q", "b"]
    flat = Session(id="0a1b2c3d-0000-4000-8000-0000000000bb", profile_id="secretary", messages=[q, a, b])
    await store.insert(flat)  # an archive without a tree: one chain, its last message active
    assert texts(await store.get(flat.id)) == ["q", "a", "b"]


@pytest.mark.parametrize("kind", SQL)
async def test_the_migration_makes_flat_sessions_chains(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    db = Database(url_of(kind, tmp_path, request, empty=True))
    try:
        await migrate.upgrade(db, "0015")
        old = [Message.user("q1"), Message.assistant("a1"), Message.user("q2"), Message.assistant("a2")]
        sid = await old_session(db, old)
        empty = await old_session(db, [])
        await migrate.upgrade(db, "0016")
        assert await migrate.current_revision(db) == "0016"
        await migrate.upgrade(db)  # the store reads the newest schema's columns
        store = SqlSessionStore(db)
        got = await store.get(sid)
        assert texts(got) == ["q1", "a1", "q2", "a2"] and got is not None
        assert got.parents == tree.chain([m.id for m in old]) and got.active_leaf == old[-1].id
        await store.branch_at(sid, old[1].id)
        await turn(store, sid, "q2 edited", "a2 again")
        assert texts(await store.get(sid)) == ["q1", "a1", "q2 edited", "a2 again"]
        assert texts(await store.get(sid, branch=old[2].id)) == ["q1", "a1", "q2", "a2"]
        none = await store.get(empty)
        assert none is not None and none.active_leaf is None and none.messages == []
        await turn(store, empty, "first", "answer")
        assert texts(await store.get(empty)) == ["first", "answer"]
    finally:
        await db.dispose()
