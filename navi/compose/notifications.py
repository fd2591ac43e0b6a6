"""Web Push set up from settings: the VAPID key pair (made on first start, NAVI_VAPID_FILE) and
the sender on the push store, through the fetching tools' network guard."""

from __future__ import annotations

from pathlib import Path

from navi.compose import parts
from navi.compose.problems import SetupError
from navi.config import Settings
from navi.push import PushStore
from navi.push.sender import PushConfig, PushSender
from navi.push.vapid import VapidKeyError, vapid_keys

VAPID_FIX = "set NAVI_VAPID_FILE to a file Navi can write (or remove the broken one to make a new key)"


def push_sender(settings: Settings, store: PushStore | None, *, create: bool) -> PushSender | None:
    """The sender, or None without a store, or when `create` is False and no key was made yet."""
    if store is None:
        return None
    try:
        keys = vapid_keys(Path(settings.vapid_file), create=create)
    except VapidKeyError as exc:
        raise SetupError(str(exc), VAPID_FIX) from exc
    if keys is None:
        return None
    config = PushConfig(subject=settings.navi_push_subject)
    return PushSender(store, keys, parts.fetch_guard(settings), config)
