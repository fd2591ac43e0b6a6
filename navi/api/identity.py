"""Where a request's user travels: `AccessControl` puts the name on the ASGI scope, routes and the
WebSocket read it from there (a module of its own, so both sides import it without a cycle).

A WebSocket lives long after its handshake was checked, so `AccessControl` also leaves on its scope
how to check the same credentials again (`recheck_of`): the open socket asks before it acts on a
frame and whenever a sign-out or a user's removal may concern it (navi/api/sockets.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

USER_KEY = "navi.user"  # the scope key of the request's user (an owner id of every store)
RECHECK_KEY = "navi.recheck"  # a WebSocket's: whether its handshake's credentials still let it in
CREDENTIAL_KEY = "navi.credential"  # a WebSocket's: a digest naming those credentials (never them)

Recheck = Callable[[], Awaitable[bool]]


async def _always() -> bool:
    return True


def user_of(scope: Mapping[str, Any]) -> str:
    """The request's user. Always set by AccessControl; a scope without one is a bug, not a guest."""
    user: str = scope[USER_KEY]
    return user


def recheck_of(scope: Mapping[str, Any]) -> tuple[Recheck, str]:
    """How to ask whether the credentials this WebSocket was let in with still let it in as the same
    user, and a digest naming them (sockets opened with the same credentials share one check).
    Without one (a Navi without a token) nothing can be revoked: always True."""
    recheck: Recheck = scope.get(RECHECK_KEY) or _always
    return recheck, str(scope.get(CREDENTIAL_KEY, ""))
