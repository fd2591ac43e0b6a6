"""Subscriptions kept in this process (tests, and commands that run without a database)."""

from __future__ import annotations

from navi.push.models import PushStore, PushSubscription


class InMemoryPushStore(PushStore):
    def __init__(self) -> None:
        self._by_endpoint: dict[str, PushSubscription] = {}

    async def save(self, subscription: PushSubscription) -> None:
        self._by_endpoint[subscription.endpoint] = subscription

    async def list(self, owner: str) -> list[PushSubscription]:
        found = [s for s in self._by_endpoint.values() if s.owner == owner]
        return sorted(found, key=lambda s: s.created_at)

    async def remove(self, owner: str, endpoint: str) -> bool:
        found = self._by_endpoint.get(endpoint)
        if found is None or found.owner != owner:
            return False
        del self._by_endpoint[endpoint]
        return True

    async def drop(self, endpoint: str) -> None:
        self._by_endpoint.pop(endpoint, None)
