"""Matrix as a channel, with `matrix-nio`'s asyncio client: Navi is a Matrix account (password or
access token) that syncs, answers in the rooms it is in, and is invited to rooms by the people on
the allowlist (`@user:server` ids).

A room is a session: each listed person's messages in a room continue one session (a Matrix thread
in the room is a session of its own, keyed by its root event), and a reply to a message Navi sent
(a schedule's delivery) continues that message's session. Navi's answers are `m.text` events with
the markdown rendered as Matrix HTML (`org.matrix.custom.html`, the plain `body` kept), in reply to
the person's message (in its thread when they wrote in one). A typing notice shows while Navi works.
Files and images sent to Navi are downloaded and reach the run as a mail's attachments do.

Only unencrypted rooms: there is no end-to-end encryption here yet (encrypted events are not read).
Invites from anyone not on the allowlist are declined (the inviter is the invite event's sender, never
a name in the stripped room state the invite carries); events older than the channel's start are
never answered (a restart does not answer the room's history again); Navi's own events are ignored.
A schedule's answer goes only to a room whose joined and invited members are all listed for its
owner and that is neither public nor world-readable (`recipients`, from the room's state).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import nio
import structlog
from markdown_it import MarkdownIt

from navi.channels.base import Attachment, Channel, Deliver, Incoming, NotPrivate, Outgoing, split_text

log = structlog.stdlib.get_logger(__name__)

MAX_MESSAGE_CHARS = 12_000  # a longer answer goes out as several events (an event is ≤ 64 KiB)
MAX_EVENT_BYTES = 60_000  # an event larger than this goes without its HTML
MAX_DOWNLOAD_BYTES = 100 * 1024 * 1024  # files larger than this are not fetched
TYPING_MS = 30_000  # one typing notice lasts this long; renewed while Navi works
# A key of Navi's own in each answer's content: after logging in again, the answer sent with the
# old login is found by it, and not sent twice (the answer to a send can be lost to a revoked login).
SENT_KEY = "io.navi.key"
PRIVATE_JOIN_RULES = ("invite", "knock", "private")  # joined only by an invite (a knock is let in by one)
_markdown = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


@dataclass(frozen=True)
class MatrixSettings:
    """Navi's Matrix account (the composition root builds this from NAVI_MATRIX_*)."""

    homeserver: str  # https://matrix.example.org
    user: str  # @navi:example.org
    password: str = ""
    access_token: str = ""  # instead of the password
    device_name: str = "Navi"
    sync_timeout_ms: int = 30_000
    timeout: float = 60.0


def render(text: str) -> str:
    """Markdown as Matrix HTML (raw HTML in the text is escaped, never passed on)."""
    return _markdown.render(text).strip()


def _strip_fallback(body: str) -> str:
    """A reply's body without the quoted fallback (`> <@user> …` lines) clients put before it."""
    lines = body.split("\n")
    if not lines or not lines[0].startswith("> "):
        return body
    while lines and lines[0].startswith(">"):
        lines.pop(0)
    return "\n".join(lines).strip()


class MatrixChannel(Channel):
    name: ClassVar[str] = "matrix"
    can_ask: ClassVar[bool] = True

    def __init__(self, settings: MatrixSettings, *, clock: Callable[[], float] = time.time) -> None:
        self.settings = settings
        self.started_ms = int(clock() * 1000)  # events before this are history: never answered
        self._client: nio.AsyncClient | None = None
        self._connecting = asyncio.Lock()
        self._since: str | None = None
        self._typing: dict[str, asyncio.Task[None]] = {}

    def split(self, text: str) -> list[str]:
        return split_text(text, MAX_MESSAGE_CHARS)

    # --- the account -----------------------------------------------------------------------------
    async def _connect(self) -> nio.AsyncClient:
        async with self._connecting:
            if self._client is not None:
                return self._client
            client = await self._login()
            self._client = client
            return client

    async def _login(self) -> nio.AsyncClient:
        s = self.settings
        config = nio.AsyncClientConfig(
            store_sync_tokens=False,
            encryption_enabled=False,
            request_timeout=s.timeout,
            max_timeouts=2,  # then the failure reaches the worker, which starts `listen` again
        )
        client = nio.AsyncClient(s.homeserver, s.user, config=config)
        try:
            if s.access_token:
                client.access_token = s.access_token
                who = await client.whoami()
                if not isinstance(who, nio.WhoamiResponse):
                    raise ConnectionError(f"the access token was refused: {_error(who)}")
                client.user_id = who.user_id
                client.device_id = who.device_id or ""
            else:
                done = await client.login(password=s.password, device_name=s.device_name)
                if not isinstance(done, nio.LoginResponse):
                    raise ConnectionError(f"login as {s.user} refused: {_error(done)}")
        except BaseException:
            await client.close()
            raise
        return client

    async def stopped(self) -> None:
        await self.close(logout=True)

    async def close(self, *, logout: bool = False) -> None:
        """Drop the connection; with `logout`, a password login's device is logged out too (an
        access token's is not: it is the user's to keep)."""
        self._stop_typing()
        client, self._client = self._client, None
        if client is None:
            return
        if logout and not self.settings.access_token:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.logout(), 5)
        await client.close()

    async def _drop(self, client: nio.AsyncClient) -> None:
        """Forget a client whose login the homeserver no longer knows (the next use logs in)."""
        async with self._connecting:
            if self._client is client:
                self._client = None
        self._stop_typing()  # its notices went through this client: none may open it again
        await client.close()

    def _current(self, client: nio.AsyncClient) -> bool:
        return self._client is client

    def _stop_typing(self) -> None:
        for task in self._typing.values():
            task.cancel()
        self._typing.clear()

    async def check(self) -> list[str]:
        try:
            client = await self._login()
        except Exception as exc:
            return [f"{self.settings.homeserver} as {self.settings.user}: {_why(exc)}"]
        with contextlib.suppress(Exception):
            if not self.settings.access_token:
                await client.logout()  # a password login made a device: not left behind
        await client.close()
        return []

    # --- receiving -------------------------------------------------------------------------------
    async def listen(self, deliver: Deliver) -> None:
        try:
            client = await self._connect()
            log.info("channel.matrix.listening", user=client.user_id)
            while True:
                response = await client.sync(
                    timeout=self.settings.sync_timeout_ms, since=self._since, full_state=self._since is None
                )
                if not isinstance(response, nio.SyncResponse):
                    if _logged_out(response):
                        await self._drop(client)  # logged out elsewhere: log in again on the next start
                    raise ConnectionError(f"sync failed: {_error(response)}")
                for room_id, invite in response.rooms.invite.items():
                    await self._guarded(self._invited(client, room_id, invite), room_id)
                for room_id, joined in response.rooms.join.items():
                    for event in joined.timeline.events:
                        await self._guarded(self._take(client, room_id, event, deliver), room_id)
                self._since = response.next_batch  # read: a restart of `listen` goes on from here
        except asyncio.CancelledError:
            await self.close(logout=True)
            raise

    async def _guarded(self, step: Awaitable[None], room_id: str) -> None:
        """One event handled; a malformed one is logged and skipped, never read again."""
        try:
            await step
        except Exception as exc:
            log.warning("channel.matrix.unreadable", room=room_id, error=_why(exc))

    async def _take(self, client: nio.AsyncClient, room_id: str, event: Any, deliver: Deliver) -> None:
        incoming = await self._incoming(client, room_id, event)
        if incoming is not None:
            await deliver(incoming)

    async def _invited(self, client: nio.AsyncClient, room_id: str, invite: Any) -> None:
        inviter = inviter_of(client.user_id, invite.invite_state)
        if inviter is not None and await self.is_listed(inviter):
            joined = await client.join(room_id)
            if isinstance(joined, nio.JoinResponse):
                log.info("channel.matrix.joined", room=room_id, inviter=inviter)
            else:
                log.warning("channel.matrix.join_failed", room=room_id, error=_error(joined))
            return
        log.warning("channel.stranger", channel=self.name, sender=inviter, room=room_id, invite=True)
        await client.room_leave(room_id)  # declines the invite

    async def _incoming(self, client: nio.AsyncClient, room_id: str, event: Any) -> Incoming | None:
        """A room event as the worker sees it (None: not a person's new message to answer)."""
        if not isinstance(event, nio.RoomMessageText | nio.RoomMessageMedia):
            return None
        if event.sender == client.user_id or event.server_timestamp < self.started_ms:
            return None
        content = _dict(event.source.get("content"))
        relates = _dict(content.get("m.relates_to"))
        if relates.get("rel_type") == "m.replace":
            return None  # an edit of an earlier message: not a new one
        root = relates.get("event_id") if relates.get("rel_type") == "m.thread" else None
        replied = _dict(relates.get("m.in_reply_to")).get("event_id")
        if not isinstance(root, str):
            root = None
        conversation = f"{room_id}|{event.sender}" + (f"|{root}" if root else "")
        attachments: list[Attachment] = []
        text = ""
        if isinstance(event, nio.RoomMessageText):
            text = _strip_fallback(event.body)
        elif await self.is_listed(event.sender):  # a stranger's file is never fetched
            attachment = await self._download(client, event)
            if attachment is not None:
                attachments.append(attachment)
        thread = [str(replied)] if isinstance(replied, str) and not relates.get("is_falling_back") else []
        return Incoming(
            channel=self.name,
            sender=event.sender,
            text=text,
            key=event.event_id,
            thread=[*thread, conversation],
            attachments=attachments,
            title=_title(text, attachments),
            context={"room": room_id, "thread_root": root},
            conversation=conversation,
        )

    async def _download(self, client: nio.AsyncClient, event: Any) -> Attachment | None:
        info = _dict(_dict(event.source.get("content")).get("info"))
        size = info.get("size")
        if isinstance(size, int) and size > MAX_DOWNLOAD_BYTES:
            log.warning("channel.matrix.too_large", event_id=event.event_id, size=size)
            return None
        got = await client.download(mxc=event.url)
        if not isinstance(got, nio.MemoryDownloadResponse):
            log.warning("channel.matrix.download_failed", event_id=event.event_id, error=_error(got))
            return None
        name = event.body if event.body and "/" not in event.body else got.filename or "file"
        kind = info.get("mimetype") or got.content_type or "application/octet-stream"
        return Attachment(name=name, data=got.body, media_type=str(kind))

    # --- sending ---------------------------------------------------------------------------------
    def content(self, out: Outgoing) -> dict[str, Any]:
        """The m.room.message content of one answer: body, its HTML, and its place in the room."""
        content: dict[str, Any] = {
            "msgtype": "m.text",
            "body": out.text,
            "format": "org.matrix.custom.html",
            "formatted_body": render(out.text),
        }
        if len(json.dumps(content).encode()) > MAX_EVENT_BYTES:
            del content["format"], content["formatted_body"]
        if out.reply is not None:
            content["m.relates_to"] = _relates(out.reply)
        return content

    def _room(self, out: Outgoing) -> str:
        room = out.reply.context.get("room") if out.reply is not None else out.to
        if not isinstance(room, str) or not room.startswith("!"):
            raise ValueError(f"{room!r} is not a Matrix room id (!room:server)")
        return room

    async def send(self, message: Outgoing) -> list[str]:
        room = self._room(message)
        client = await self._connect()
        keys: list[str] = []
        content = {**self.content(message), SENT_KEY: uuid.uuid4().hex}
        sent = await client.room_send(room, "m.room.message", content)
        if _logged_out(sent) and not self.settings.access_token:  # log in again, once
            await self._drop(client)
            client = await self._connect()
            landed = await self._landed(client, room, content[SENT_KEY])
            sent = landed or await client.room_send(room, "m.room.message", content)
        if not isinstance(sent, nio.RoomSendResponse):
            raise ConnectionError(f"sending to {room} failed: {_error(sent)}")
        keys.append(sent.event_id)
        for attachment in message.attachments:
            keys.append(await self._send_file(client, room, attachment, message))
        log.info("channel.matrix.sent", room=room)
        return keys

    async def _landed(self, client: nio.AsyncClient, room: str, key: str) -> nio.RoomSendResponse | None:
        """The answer sent as `key` with a login since revoked, if it reached the room after all."""
        recent = await client.room_messages(room, limit=20)
        for event in recent.chunk if isinstance(recent, nio.RoomMessagesResponse) else []:
            if event.sender == client.user_id and _dict(event.source.get("content")).get(SENT_KEY) == key:
                return nio.RoomSendResponse(event.event_id, room)
        return None

    async def _send_file(
        self, client: nio.AsyncClient, room: str, attachment: Attachment, out: Outgoing
    ) -> str:
        uploaded, _keys = await client.upload(
            lambda *_: attachment.data,
            content_type=attachment.media_type,
            filename=attachment.name,
            filesize=len(attachment.data),
        )
        if not isinstance(uploaded, nio.UploadResponse):
            raise ConnectionError(f"uploading {attachment.name} failed: {_error(uploaded)}")
        kind = attachment.media_type.partition("/")[0]
        content: dict[str, Any] = {
            "msgtype": {"image": "m.image", "audio": "m.audio"}.get(kind, "m.file"),
            "body": attachment.name,
            "url": uploaded.content_uri,
            "info": {"mimetype": attachment.media_type, "size": len(attachment.data)},
        }
        if out.reply is not None:
            content["m.relates_to"] = _relates(out.reply)
        sent = await client.room_send(room, "m.room.message", content)
        if not isinstance(sent, nio.RoomSendResponse):
            raise ConnectionError(f"sending {attachment.name} to {room} failed: {_error(sent)}")
        return sent.event_id

    async def recipients(self, to: str) -> list[str]:
        """The room's joined and invited members other than Navi, from the room's current state on
        the homeserver (a schedule delivers only where all of them are listed for its owner);
        `NotPrivate` when the room is open to more than its members (see `audience`)."""
        if not to.startswith("!"):
            raise ValueError(f"{to!r} is not a Matrix room id (!room:server)")
        client = await self._connect()
        state = await client.room_get_state(to)
        if not isinstance(state, nio.RoomGetStateResponse):
            raise ConnectionError(f"Navi is not in {to}: {_error(state)}")
        return audience(client.user_id, state.events)

    # --- typing ----------------------------------------------------------------------------------
    async def working(self, message: Incoming, on: bool) -> None:
        room = message.context.get("room")
        if not isinstance(room, str):
            return
        task = self._typing.pop(room, None)
        if task is not None:
            task.cancel()
        client = self._client
        if client is None:  # not logged in (stopping): no notice worth a login
            return
        if on:
            self._typing[room] = asyncio.get_running_loop().create_task(self._keep_typing(client, room))
        else:
            await client.room_typing(room, typing_state=False)

    async def _keep_typing(self, client: nio.AsyncClient, room: str) -> None:
        # Only while `client` is the connection: a request on a closed nio client opens a new HTTP
        # session on it that nobody closes (seen after a revoked login: an unclosed aiohttp session).
        with contextlib.suppress(Exception):
            while self._current(client):
                await client.room_typing(room, typing_state=True, timeout=TYPING_MS)
                await asyncio.sleep(TYPING_MS / 1000 * 2 / 3)


def inviter_of(own: str, invite_state: list[Any]) -> str | None:
    """Who invited `own` to a room: the sender of the invite event itself, the last m.room.member
    event for `own` in the invite's state (the homeserver puts it after the room's stripped state).
    Only that one: the stripped state before it is the inviting server's word (over federation it
    is whatever that server sent) and may hold any member event, even one for `own` "sent" by
    someone on the allowlist. None when that last event is not an invite."""
    mine = [
        e
        for e in invite_state
        if (source := _dict(getattr(e, "source", None))).get("type") == "m.room.member"
        and source.get("state_key") == own
    ]
    last = mine[-1] if mine else None
    if not isinstance(last, nio.InviteMemberEvent) or last.membership != "invite":
        return None
    return last.sender


def audience(own: str, state: list[Any]) -> list[str]:
    """Who reads what is sent to a room with this current state, besides `own`: its joined and
    invited members (an invited person reads the room once they accept). `NotPrivate` when the room
    is open to more than them: anyone may join it (join rule `public`, or `restricted` to the
    members of other rooms) or read it without joining (history visibility `world_readable`)."""
    members: set[str] = set()
    join_rule, visibility = "invite", "shared"  # what a room without these events is
    for event in state:
        event = _dict(event)
        kind, key, content = event.get("type"), event.get("state_key"), _dict(event.get("content"))
        if kind == "m.room.member" and isinstance(key, str) and key != own:
            if content.get("membership") in ("join", "invite"):
                members.add(key)
        elif kind == "m.room.join_rules" and key == "":
            join_rule = str(content.get("join_rule"))
        elif kind == "m.room.history_visibility" and key == "":
            visibility = str(content.get("history_visibility"))
    if join_rule not in PRIVATE_JOIN_RULES:
        raise NotPrivate(f"the room's join rule is {join_rule!r}: people join it without an invite")
    if visibility == "world_readable":
        raise NotPrivate("the room's history is world_readable: anyone can read it without joining")
    return sorted(members)


def _logged_out(response: Any) -> bool:
    return getattr(response, "status_code", None) == "M_UNKNOWN_TOKEN"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _relates(reply: Incoming) -> dict[str, Any]:
    """An answer's place: a reply to the person's message, in its thread when it was in one."""
    reply_to = {"event_id": reply.key}
    root = reply.context.get("thread_root")
    if root:
        return {"rel_type": "m.thread", "event_id": root, "is_falling_back": True, "m.in_reply_to": reply_to}
    return {"m.in_reply_to": reply_to}


def _title(text: str, attachments: list[Attachment]) -> str:
    first = text.strip().split("\n", 1)[0] if text.strip() else ""
    if not first and attachments:
        first = attachments[0].name
    return " ".join(first.split())[:80]


def _error(response: Any) -> str:
    message = getattr(response, "message", None) or type(response).__name__
    code = getattr(response, "status_code", None)
    return f"{code}: {message}" if code else str(message)


def _why(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


__all__ = ["MatrixChannel", "MatrixSettings", "audience", "inviter_of", "render"]
