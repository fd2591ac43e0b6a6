"""Notifications set up: the VAPID key pair (made on first start, NAVI_VAPID_FILE), the push
sender on the push store (through the fetching tools' network guard), and the notifier that
decides, with the channels as its fallback."""

from __future__ import annotations

from pathlib import Path
from zoneinfo import ZoneInfo

from navi.channels.store import ChannelStore
from navi.channels.worker import ChannelWorker
from navi.compose import parts
from navi.compose.problems import SetupError
from navi.config import Settings
from navi.logging import get_logger
from navi.push import PushStore
from navi.push.notifier import Notifier
from navi.push.prefs import NotifySettingsStore
from navi.push.presence import Presence
from navi.push.sender import PushConfig, PushSender
from navi.push.vapid import VapidKeyError, vapid_keys
from navi.sessions.store import SessionStore

log = get_logger(__name__)
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


def build_notifier(
    sessions: SessionStore,
    push: PushSender | None,
    presence: Presence,
    settings: NotifySettingsStore,
    channels: ChannelStore,
    zone_name: str,
    worker: ChannelWorker | None,
) -> Notifier:
    """The notifier on the runtime's push sender, presence and settings; channels (the worker's,
    to the first address each user has on a configured channel) as the fallback."""

    async def by_channel(owner: str, title: str, text: str, session_id: str | None) -> bool:
        if worker is None:
            return False
        for entry in await channels.allowed():
            if entry.user != owner or worker.channel(entry.channel) is None:
                continue
            why = await worker.deliver(owner, entry.channel, entry.address, title, text, session_id)
            if why is None:
                return True
            log.info("notify.channel_refused", channel=entry.channel, reason=why)
        return False

    return Notifier(
        sessions,
        push=push,
        presence=presence,
        settings=settings,
        fallback=by_channel if worker is not None else None,
        zone=ZoneInfo(zone_name),
    )
