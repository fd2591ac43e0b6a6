"""Where a request's user travels: `AccessControl` puts the name on the ASGI scope, routes and the
WebSocket read it from there (a module of its own, so both sides import it without a cycle)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

USER_KEY = "navi.user"  # the scope key of the request's user (an owner id of every store)


def user_of(scope: Mapping[str, Any]) -> str:
    """The request's user. Always set by AccessControl; a scope without one is a bug, not a guest."""
    user: str = scope[USER_KEY]
    return user
