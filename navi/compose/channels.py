"""The channels Navi is reached through, built from the settings, and the worker that serves them.

Email is on when NAVI_EMAIL_ADDRESS, NAVI_EMAIL_IMAP_HOST and NAVI_EMAIL_SMTP_HOST are set; Matrix
when NAVI_MATRIX_HOMESERVER and NAVI_MATRIX_USER are. A new channel is one module in
navi/channels/ plus its settings here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from navi.channels.store import ChannelStore, InMemoryChannelStore, check_entry
from navi.config import Settings

if TYPE_CHECKING:  # matrix-nio (and aiohttp under it) is imported only when Matrix is used; the
    # worker (and the runs under it) and each channel only when served: `delivery_problem` and
    # `normalize` are what commands that run no agent (`navi schedules`, `navi channels`) ask
    from navi.channels.base import Channel
    from navi.channels.email import EmailSettings
    from navi.channels.matrix import MatrixSettings
    from navi.channels.worker import ChannelWorker
    from navi.profiles.registry import ProfileRegistry
    from navi.runs import RunManager
    from navi.sessions.store import SessionStore
    from navi.storage.database import Database
    from navi.voice import Voice


def email_settings(settings: Settings) -> EmailSettings | None:
    s = settings
    if not (s.navi_email_address and s.navi_email_imap_host and s.navi_email_smtp_host):
        return None
    from navi.channels.email import EmailSettings

    return EmailSettings(
        address=s.navi_email_address,
        imap_host=s.navi_email_imap_host,
        imap_port=s.navi_email_imap_port,
        imap_security=s.navi_email_imap_security,
        smtp_host=s.navi_email_smtp_host,
        smtp_port=s.navi_email_smtp_port,
        smtp_security=s.navi_email_smtp_security,
        username=s.navi_email_username or s.navi_email_address,
        password=s.navi_email_password,
        smtp_username=s.navi_email_smtp_username,
        smtp_password=s.navi_email_smtp_password,
        folder=s.navi_email_folder,
        poll_seconds=s.navi_email_poll_seconds,
        authserv_id=s.navi_email_authserv_id.strip(),
        trust_local_delivery=s.navi_email_trust_local_delivery,
    )


def matrix_settings(settings: Settings) -> MatrixSettings | None:
    s = settings
    if not (s.navi_matrix_homeserver and s.navi_matrix_user):
        return None
    from navi.channels.matrix import MatrixSettings

    return MatrixSettings(
        homeserver=s.navi_matrix_homeserver,
        user=s.navi_matrix_user,
        password=s.navi_matrix_password,
        access_token=s.navi_matrix_access_token,
    )


# Every channel Navi has, by name (what the allowlist may name): its module and class, imported
# when first needed, so a command that never touches Matrix does not load its SDK.
KINDS: dict[str, str] = {
    "email": "navi.channels.email:EmailChannel",
    "matrix": "navi.channels.matrix:MatrixChannel",
}


def channel_kind(name: str) -> type[Channel] | None:
    where = KINDS.get(name)
    if where is None:
        return None
    module, _, cls = where.partition(":")
    kind: type[Channel] = getattr(importlib.import_module(module), cls)
    return kind


def normalize(channel: str, address: str) -> tuple[str, str]:
    """(channel, address) as the allowlist keeps them; ValueError for a channel Navi has not."""
    name = channel.strip().lower()
    kind = channel_kind(name)
    if kind is None:
        raise ValueError(f"no channel {channel!r}: Navi has {', '.join(sorted(KINDS))}")
    return check_entry(name, kind.normalize(address))


# What each channel needs set before Navi can send on it.
SETUP: dict[str, str] = {
    "email": "set NAVI_EMAIL_ADDRESS, NAVI_EMAIL_IMAP_HOST and NAVI_EMAIL_SMTP_HOST (docs/channels.md)",
    "matrix": "set NAVI_MATRIX_HOMESERVER and NAVI_MATRIX_USER (docs/channels.md)",
}


def delivery_problem(settings: Settings) -> Callable[[str], str | None]:
    """Why a schedule's answer cannot go to a channel: Navi has no such channel, or it is not set
    up here (what to set); None when it can."""
    ready = {"email": email_settings(settings) is not None, "matrix": matrix_settings(settings) is not None}

    def problem(channel: str) -> str | None:
        if channel not in KINDS:
            return f"Navi has no channel {channel!r} (it has {', '.join(sorted(KINDS))})"
        return None if ready.get(channel) else f"that channel is not set up: {SETUP[channel]}"

    return problem


def build_channels(settings: Settings) -> list[Channel]:
    """Every channel the settings configure (none: no worker runs)."""
    channels: list[Channel] = []
    if (mail := email_settings(settings)) is not None:
        from navi.channels.email import EmailChannel

        channels.append(EmailChannel(mail))
    if (matrix := matrix_settings(settings)) is not None:
        from navi.channels.matrix import MatrixChannel

        channels.append(MatrixChannel(matrix))
    return channels


def channel_store(db: Database | None) -> ChannelStore:
    if db is None:
        return InMemoryChannelStore()
    from navi.channels.sqlstore import SqlChannelStore

    return SqlChannelStore(db)


def build_worker(
    settings: Settings,
    channels: list[Channel],
    *,
    store: ChannelStore,
    runs: RunManager,
    sessions: SessionStore,
    profiles: ProfileRegistry,
    voice: Voice | None = None,
) -> ChannelWorker:
    from navi.channels.worker import ChannelWorker

    profile = settings.navi_channel_profile or profiles.default_id
    profiles.get(profile)  # UnknownProfile now, not at the first mail
    return ChannelWorker(
        channels=channels,
        store=store,
        runs=runs,
        sessions=sessions,
        profile_id=profile,
        files_root=Path(settings.session_files_dir),
        max_file_bytes=settings.session_files_max_bytes,
        voice=voice,
        voice_replies=frozenset(
            name
            for name, on in (
                ("matrix", settings.navi_matrix_voice_replies),
                ("email", settings.navi_email_voice_replies),
            )
            if on
        ),
    )
