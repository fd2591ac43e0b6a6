"""The notification stores on SQLite and PostgreSQL, each read through a second `Database` as
another worker would: push subscriptions (per user, one row per endpoint, moved to whoever
subscribed it last, removed by the owner or when gone), pages' visibility on the database's clock
(a page one worker saw is visible to the other; a closed page or one that went silent is not),
and each user's notification settings."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import update

from navi.push.models import checked
from navi.push.prefs import NotifySettings, QuietHours
from navi.push.presence import FRESH_SECONDS
from navi.storage import migrate
from navi.storage.database import Database, postgres_url, sqlite_url
from navi.storage.presence import SqlNotifySettings, SqlPresence, page_presence
from navi.storage.push import SqlPushStore
from tests.helpers.push_service import BrowserKeys

MOMENT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def two(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[Database, Database]]:
    if request.param == "postgres":
        url = postgres_url(request.getfixturevalue("pg_url"))
    else:
        url = sqlite_url(tmp_path / "navi.db")
    a, b = Database(url), Database(url)
    await migrate.upgrade(a)
    try:
        yield a, b
    finally:
        await a.dispose()
        await b.dispose()


def subscription(owner: str, endpoint: str) -> object:
    keys = BrowserKeys().subscription(endpoint)["keys"]
    return checked(owner, endpoint, keys["p256dh"], keys["auth"], MOMENT, "Firefox")


async def test_subscriptions(two: tuple[Database, Database]) -> None:
    a, b = SqlPushStore(two[0]), SqlPushStore(two[1])
    await a.save(subscription("owner", "https://push.example/1"))  # type: ignore[arg-type]
    await a.save(subscription("owner", "https://push.example/2"))  # type: ignore[arg-type]
    await a.save(subscription("ann", "https://push.example/3"))  # type: ignore[arg-type]
    seen = await b.list("owner")
    assert [s.endpoint for s in seen] == ["https://push.example/1", "https://push.example/2"]
    assert seen[0].user_agent == "Firefox" and seen[0].created_at == MOMENT
    assert not await b.remove("ann", "https://push.example/1")  # not hers
    assert await b.remove("owner", "https://push.example/1")
    # Ann signs in on the owner's second browser and subscribes it: it is hers now.
    await b.save(subscription("ann", "https://push.example/2"))  # type: ignore[arg-type]
    assert await a.list("owner") == []
    assert sorted(s.endpoint for s in await a.list("ann")) == [
        "https://push.example/2",
        "https://push.example/3",
    ]
    await a.drop("https://push.example/3")
    assert [s.endpoint for s in await b.list("ann")] == ["https://push.example/2"]


async def test_visibility_is_shared_and_goes_stale(two: tuple[Database, Database]) -> None:
    a, b = SqlPresence(two[0]), SqlPresence(two[1])
    assert not await b.visible("owner")
    await a.seen("page-1", "owner", True)
    assert await b.visible("owner") and not await b.visible("ann")
    await a.seen("page-1", "owner", False)
    assert not await b.visible("owner")
    await a.seen("page-1", "owner", True)
    await a.seen("page-2", "owner", False)
    await a.gone("page-1")
    assert not await b.visible("owner")
    # A page whose worker died says nothing more: after FRESH_SECONDS it no longer counts.
    await a.seen("page-3", "owner", True)
    assert await b.visible("owner")
    older = update(page_presence).values(seen_at=page_presence.c.seen_at - FRESH_SECONDS - 1)
    await two[0].write(lambda conn: conn.execute(older))
    assert not await b.visible("owner")


async def test_settings(two: tuple[Database, Database]) -> None:
    a, b = SqlNotifySettings(two[0]), SqlNotifySettings(two[1])
    assert await b.get("owner") == NotifySettings()
    chosen = NotifySettings(answers=False, quiet=QuietHours(start="22:30", end="7:00"))
    await a.put("owner", chosen)
    got = await b.get("owner")
    assert (
        got.answers is False and got.approvals is True and got.quiet == QuietHours(start="22:30", end="07:00")
    )
    assert await b.get("ann") == NotifySettings()
