"""The store of conversations' browser states (navi/tools/builtin/browser/states.py) in memory,
SQLite and PostgreSQL: by session and user (another user's is none), a version, replaced whole,
forgotten per user or with the session, and a row only for a stored session."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.exc import IntegrityError

from navi.storage.browser_states import SqlBrowserStates
from navi.storage.sessions import SqlSessionStore
from navi.tools.builtin.browser.states import BrowserStates, InMemoryBrowserStates, SavedState
from tests.helpers.session_stores import STORES, opened_store

COOKIE = {"name": "sid", "value": "alice-session", "domain": "shop.example", "path": "/"}


@pytest.mark.parametrize("kind", STORES)
async def test_a_state_is_kept_per_session_and_user(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    async with opened_store(kind, tmp_path, request) as sessions:
        states: BrowserStates = (
            SqlBrowserStates(sessions.db)
            if isinstance(sessions, SqlSessionStore)
            else InMemoryBrowserStates()
        )
        session = await sessions.create("secretary", owner="alice")
        assert (
            await states.load(session.id, "alice") is None and await states.version(session.id, "alice") == 0
        )
        first = SavedState({"cookies": [COOKIE], "origins": []}, 1, "shop", "https://shop.example/account")
        await states.save(session.id, "alice", first)
        assert await states.load(session.id, "alice") == first
        assert await states.load(session.id, "bob") is None and await states.version(session.id, "bob") == 0
        second = SavedState({"cookies": [], "origins": []}, 2, None, "")
        await states.save(session.id, "alice", second)
        assert (
            await states.load(session.id, "alice") == second
            and await states.version(session.id, "alice") == 2
        )
        await states.forget(session.id, "bob")  # not bob's: kept
        assert await states.version(session.id, "alice") == 2
        await states.forget(session.id, "alice")
        assert await states.load(session.id, "alice") is None
        if isinstance(sessions, SqlSessionStore):
            await states.save(session.id, "alice", first)
            await sessions.delete(session.id)
            assert await states.load(session.id, "alice") is None  # gone with its session
            with pytest.raises(IntegrityError):  # only a stored session has one
                await states.save("not-a-session", "alice", first)
