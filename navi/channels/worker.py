"""The channel worker: messages from channels become runs of the `RunManager`, their answers go back.

For each message that arrives: a refusal of the channel's own (a mail its receiving server did not
authenticate) and a sender not on the allowlist are logged and get no answer. Otherwise the
message's thread names its session (a new one, of the listed user, when it starts a conversation);
`!stop` stops the session's run; a reply while the run waits for an approval answers it (yes / no /
always; where senders can be forged, only a reply to the question itself from the address it was
asked of: `Channel.answers_by_reply`); anything else is a new turn — one sent while a turn answers
waits for it and is answered after, in the order the messages came — its attachments saved to the
session's folder as uploads are (the same kinds refused), so the model reaches them as it reaches
uploads. The run is followed until it has answered: an approval is asked in the thread (denied
at once when the channel cannot ask), the answer is sent split the channel's way; the channel shows
Navi working meanwhile (`Channel.working`: Matrix's typing notice). Schedules deliver their
answers through `deliver()`, to listed addresses only (every address `Channel.recipients` says a
delivery reaches: a Matrix room's joined and invited members),
never where more people can read it (`NotPrivate`: a public or world-readable room).

The composition root owns the worker's task (`run()`); nothing here is reached from HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import mimetypes
import os
import re
import unicodedata
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

from navi.agent.approvals import Decision
from navi.agent.gate import ApprovalNotFound
from navi.agent.turns import NewMessage, TurnOptions
from navi.channels.base import Attachment, Channel, Incoming, NotPrivate, Outgoing
from navi.channels.store import ChannelStore
from navi.channels.voice_notes import hear, spoken_answer
from navi.llm.attached import AttachedFile
from navi.runs.manager import RunManager
from navi.runs.run import AgentRun, RunActive, Subscriber
from navi.sessions.files import claim
from navi.sessions.filetypes import SNIFF_BYTES, executable_reason, kind_reason, zip_reason
from navi.sessions.store import SessionStore
from navi.voice import Voice

log = structlog.stdlib.get_logger(__name__)

STOP_COMMAND = "!stop"
ANSWERS: dict[str, Decision] = {
    "yes": "allow",
    "y": "allow",
    "allow": "allow",
    "no": "deny",
    "n": "deny",
    "deny": "deny",
    "always": "always",
}
MAX_ATTACHMENTS = 20
RETRY_SECONDS = (1.0, 2.0, 5.0, 15.0, 60.0)  # a channel that fails is started again after these
# A message sent while a turn answers in its conversation waits for that turn, as in a chat, at
# most this long; then it is refused saying so.
WAIT_FOR_TURN_SECONDS = 900.0


@dataclass
class Waiting:
    """An approval asked in a channel: which call, the message it answers, and the keys the
    question was sent under (an answer must reply to one where `Channel.answers_by_reply`)."""

    call_id: str
    message: Incoming
    keys: list[str] = field(default_factory=list)


@dataclass
class ChannelWorker:
    channels: Sequence[Channel]
    store: ChannelStore
    runs: RunManager
    sessions: SessionStore
    profile_id: str
    files_root: Path
    max_file_bytes: int
    # Voice messages transcribed with it (None: answered saying voice is not set up), and the
    # channels whose voice messages are answered with audio too (voice_notes.py).
    voice: Voice | None = None
    voice_replies: frozenset[str] = frozenset()
    _waiting: dict[str, Waiting] = field(default_factory=dict)
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)
    # Per session, the messages waiting for the turn before them, in the order they came.
    _order: dict[str, asyncio.Lock] = field(default_factory=dict)

    def channel(self, name: str) -> Channel | None:
        return next((c for c in self.channels if c.name == name), None)

    # --- listening -------------------------------------------------------------------------------
    async def run(self) -> None:
        """Every channel listening, each started again after a failure, until cancelled."""
        for channel in self.channels:
            channel.listed = functools.partial(self._listed, channel.name)
        try:
            await asyncio.gather(*(self._listen(channel) for channel in self.channels))
        finally:
            for task in list(self._tasks):
                task.cancel()
            if self._tasks:
                await asyncio.wait(list(self._tasks), timeout=5)
            for channel in self.channels:  # a login made by a send while listening waited to restart
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(channel.stopped(), 10)

    async def _listed(self, channel: str, address: str) -> bool:
        return await self.store.user_of(channel, address) is not None

    async def _listen(self, channel: Channel) -> None:
        failures = 0
        while True:
            try:
                await channel.listen(lambda message: self.receive(channel, message))
                failures = 0
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                wait = RETRY_SECONDS[min(failures, len(RETRY_SECONDS) - 1)]
                failures += 1
                log.warning("channel.failed", channel=channel.name, error=f"{type(exc).__name__}: {exc}")
                await asyncio.sleep(wait)

    async def receive(self, channel: Channel, message: Incoming) -> None:
        """One message from `channel`; never raises (a bad message is logged, the next one read)."""
        try:
            await self._receive(channel, message)
        except Exception as exc:
            log.exception("channel.message_failed", channel=channel.name, error=str(exc))

    async def _receive(self, channel: Channel, message: Incoming) -> None:
        if message.refused is not None:
            log.warning(
                "channel.refused",
                channel=channel.name,
                sender=message.sender,
                key=message.key,
                reason=message.refused,
            )
            return  # no answer: the sender may be forged, and an answer would go to whoever it names
        user = await self.store.user_of(channel.name, message.sender)
        if user is None:
            log.warning("channel.stranger", channel=channel.name, sender=message.sender)
            return
        if await self.store.session_of(channel.name, [message.key], user) is not None:
            log.info("channel.duplicate", channel=channel.name, key=message.key)  # read before
            return
        session_id = await self.store.session_of(channel.name, message.thread, user)
        if session_id is None or await self.sessions.get(session_id, owner=user, display=False) is None:
            made = await self.sessions.create(self.profile_id, owner=user, name=message.title or None)
            session_id = made.id
        keys = [message.key, *([message.conversation] if message.conversation else [])]
        await self.store.link(channel.name, keys, session_id, user)
        log.info("channel.message", channel=channel.name, sender=message.sender, session_id=session_id)
        command = message.text.strip().lower()
        if command == STOP_COMMAND:
            stopped = await self.runs.controls.stop(session_id)
            await self._reply(channel, message, session_id, "Stopped." if stopped else "Nothing was running.")
            return
        waiting = self._waiting.get(session_id)
        if waiting is not None:
            await self._answer(channel, message, session_id, waiting, command)
            return
        heard = await hear(self.voice, message.attachments)  # voice messages: their words
        files, refused = self._save(session_id, heard.others)
        refused = [*heard.problems, *refused]
        said = "\n\n".join(part for part in (message.text.strip(), *heard.words) if part)
        text = said or ("(see the attached files)" if files else "")
        if refused:
            await self._reply(channel, message, session_id, "Not taken:\n" + "\n".join(refused))
        if not text:
            return
        before = _names(self.files_root / session_id)
        aloud = heard.spoken and channel.name in self.voice_replies
        start = functools.partial(
            self.runs.start,
            session_id,
            NewMessage(text, files=files),
            # Answered in the channel: no other notification.
            TurnOptions(unattended=None if channel.can_ask else "deny", purpose="channel"),
        )
        order = self._order.get(session_id)
        if order is None or not order.locked():  # nothing waits before it: answered now if free
            try:
                run = await start()
            except RunActive:
                pass
            else:  # followed from here, before its first frame can go out
                sub = await self.runs.followers.follow(session_id, run_id=run.run_id)
                self._spawn(self._follow(channel, message, session_id, sub, before, aloud=aloud))
                return
        self._spawn(self._after_the_turn(channel, message, session_id, start, before, aloud))

    async def _after_the_turn(
        self,
        channel: Channel,
        message: Incoming,
        session_id: str,
        start: Callable[[], Awaitable[AgentRun]],
        before: set[str],
        aloud: bool,
    ) -> None:
        """A message sent while a turn answers: it waits for that turn (and the messages waiting
        before it), then is answered, as a chat answers messages in order. The channel goes on
        listening meanwhile (a stop, an approval's answer)."""
        order = self._order.setdefault(session_id, asyncio.Lock())
        loop = asyncio.get_running_loop()
        async with order:  # fair: the waiting messages start in the order they came
            deadline = loop.time() + WAIT_FOR_TURN_SECONDS
            while True:
                await self.runs.controls.wait(session_id, 5.0)
                try:
                    run = await start()
                    break
                except RunActive:
                    if loop.time() > deadline:
                        busy = f"Navi is still answering your last message (send {STOP_COMMAND})."
                        await self._reply(channel, message, session_id, busy)
                        return
        sub = await self.runs.followers.follow(session_id, run_id=run.run_id)
        await self._follow(channel, message, session_id, sub, before, aloud=aloud)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer(
        self, channel: Channel, message: Incoming, session_id: str, waiting: Waiting, command: str
    ) -> None:
        if channel.answers_by_reply and (
            message.sender != waiting.message.sender or not set(message.thread) & set(waiting.keys)
        ):
            log.warning(
                "channel.approval_not_a_reply",
                channel=channel.name,
                sender=message.sender,
                key=message.key,
                session_id=session_id,
            )
            await self._reply(
                channel,
                message,
                session_id,
                "Navi waits for your answer to its question: reply to that message with yes, no or "
                f"always ({STOP_COMMAND} stops).",
            )
            return
        word = command.split()[0].strip(".!,") if command.split() else ""
        decision = ANSWERS.get(word)
        if decision is None:
            await self._reply(
                channel,
                message,
                session_id,
                f"Navi waits for your answer: yes, no or always ({STOP_COMMAND} stops).",
            )
            return
        with contextlib.suppress(ApprovalNotFound):  # answered meanwhile (timed out): nothing to do
            await self.runs.controls.approve(session_id, waiting.call_id, decision)
        self._waiting.pop(session_id, None)

    # --- following a run -------------------------------------------------------------------------
    async def _follow(
        self,
        channel: Channel,
        message: Incoming,
        session_id: str,
        sub: Subscriber | None,
        before: set[str],
        *,
        aloud: bool = False,
    ) -> None:
        """Follow the run (`sub`: `Followers.follow`) until it has answered; the answer goes back
        with the files the run made in the session's folder (`before`: the names there when it
        started), and spoken (`aloud`)."""
        if sub is None:  # the run is gone already: nothing to say
            return
        await self._working(channel, message, True)
        try:
            while True:
                frame = await sub.queue.get()
                if frame is sub:
                    return
                kind = frame.get("type")
                if kind == "approval_required":
                    await self._working(channel, message, False)  # the person's turn
                    await self._ask(channel, message, session_id, frame)
                elif kind == "approval_resolved":
                    waiting = self._waiting.get(session_id)
                    if waiting is not None and waiting.call_id == frame.get("call_id"):
                        del self._waiting[session_id]
                    await self._working(channel, message, True)
                elif kind == "stream_end":
                    await self._working(channel, message, False)
                    answer = str(frame.get("content") or "(no answer)")
                    made = self._made(session_id, before)
                    if aloud and (note := await spoken_answer(self.voice, answer)) is not None:
                        made.append(note)
                    await self._reply(channel, message, session_id, answer, made)
                    return
                elif kind == "stream_stopped":
                    return
                elif kind == "error":
                    await self._reply(channel, message, session_id, f"Navi failed: {frame.get('message')}")
                    return
        except Exception as exc:
            log.exception(
                "channel.follow_failed", channel=channel.name, session_id=session_id, error=str(exc)
            )
        finally:
            sub.close()
            await self._working(channel, message, False)
            waiting = self._waiting.get(session_id)
            going = self.runs.slots.get(session_id)
            if waiting is not None and (going is None or going.run_id != sub.run_id):  # it ended
                del self._waiting[session_id]

    async def _working(self, channel: Channel, message: Incoming, on: bool) -> None:
        try:
            await channel.working(message, on)
        except Exception as exc:  # a typing indicator is never worth a lost answer
            log.warning("channel.working_failed", channel=channel.name, error=f"{type(exc).__name__}: {exc}")

    async def _ask(self, channel: Channel, message: Incoming, session_id: str, frame: dict[str, Any]) -> None:
        call_id = str(frame.get("call_id"))
        if not channel.can_ask:  # (runs of such channels are unattended: this is a safety net)
            with contextlib.suppress(ApprovalNotFound):
                await self.runs.controls.approve(session_id, call_id, "deny")
            return
        waiting = self._waiting[session_id] = Waiting(call_id=call_id, message=message)
        args = json.dumps(frame.get("args") or {}, ensure_ascii=False, indent=2)
        always = frame.get("always_scope")
        question = (
            f"Navi wants to run {frame.get('tool')}: {frame.get('reason') or ''}\n\n{args}\n\n"
            "Reply yes to allow it, no to refuse it"
            + (f", always to allow {always} from now on" if always else "")
            + "."
        )
        waiting.keys.extend(await self._reply(channel, message, session_id, question))

    async def _reply(
        self,
        channel: Channel,
        message: Incoming,
        session_id: str,
        text: str,
        attachments: Sequence[Attachment] = (),
    ) -> list[str]:
        """Send `text` in reply to `message`; the keys it was sent under."""
        sent: list[str] = []
        parts = channel.split(text)
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            out = Outgoing(
                to=message.sender, text=part, reply=message, attachments=list(attachments) if last else []
            )
            keys = await channel.send(out)
            sent.extend(keys)
            owner = await self.store.user_of(channel.name, message.sender)
            if owner is not None:
                await self.store.link(channel.name, keys, session_id, owner)
        return sent

    # --- schedules ---------------------------------------------------------------------------------
    async def deliver(
        self, owner: str, channel_name: str, to: str, title: str, text: str, session_id: str | None = None
    ) -> str | None:
        """Send a schedule's answer to `to` on the channel; why not, or None when sent. Only an
        address listed for the schedule's owner is sent to, and only when everyone it reaches is
        (a schedule cannot write to strangers, nor to a room anyone may read). A reply to what was
        sent continues `session_id`, the run's session."""
        channel = self.channel(channel_name)
        if channel is None:
            return f"no channel {channel_name!r} is configured"
        address = channel.normalize(to)
        try:
            reached = await channel.recipients(address)
        except NotPrivate as exc:
            return f"{to} is not private: {exc}"
        except Exception as exc:
            return f"{to}: {type(exc).__name__}: {exc}"
        if not reached:
            return f"{to} reaches nobody on {channel.name}"
        for recipient in reached:
            if await self.store.user_of(channel.name, recipient) != owner:
                who = to if recipient == address else f"{to} reaches {recipient}, who"
                return f"{who} is not on the {channel.name} allowlist for {owner}"
        for part in channel.split(text):
            keys = await channel.send(Outgoing(to=address, text=part, title=title))
            if session_id is not None:
                await self.store.link(channel.name, keys, session_id, owner)
        return None

    # --- attachments -------------------------------------------------------------------------------
    def _save(
        self, session_id: str, attachments: Sequence[Attachment]
    ) -> tuple[list[AttachedFile], list[str]]:
        """The attachments written to the session's folder, as uploads: (the files, refusals)."""
        files: list[AttachedFile] = []
        refused: list[str] = []
        folder = self.files_root / session_id
        for attachment in attachments[:MAX_ATTACHMENTS]:
            name = safe_name(attachment.name)
            reason = self._refusal(name, attachment.data)
            if reason is not None:
                refused.append(f"- {name}: {reason}")
                continue
            folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            folder.mkdir(mode=0o700, exist_ok=True)
            path = claim(folder, name)
            if path is None:
                raise OSError(f"no free name for {name} in {folder}")
            with open(path, "wb") as out:
                out.write(attachment.data)
            if (
                why := zip_reason(path) or kind_reason(name, attachment.data[:SNIFF_BYTES], path)
            ) is not None:
                path.unlink(missing_ok=True)
                refused.append(f"- {name}: {why}")
                continue
            files.append(AttachedFile(name=path.name, path=str(path)))
        if len(attachments) > MAX_ATTACHMENTS:
            refused.append(
                f"- {len(attachments) - MAX_ATTACHMENTS} more: at most {MAX_ATTACHMENTS} files a message"
            )
        return files, refused

    def _made(self, session_id: str, before: set[str]) -> list[Attachment]:
        """The files a run left in the session's folder (regular files, not links, at most
        `MAX_ATTACHMENTS`, together at most `max_file_bytes`): attached to its answer."""
        folder = self.files_root / session_id
        made: list[Attachment] = []
        total = 0
        for name in sorted(_names(folder) - before):
            path = folder / name
            try:
                if path.is_symlink() or not path.is_file() or name.startswith("."):
                    continue
                size = path.stat().st_size
                if total + size > self.max_file_bytes or len(made) >= MAX_ATTACHMENTS:
                    log.warning("channel.file_not_sent", session_id=session_id, name=name, size=size)
                    continue
                data = path.read_bytes()
            except OSError:
                continue
            total += size
            kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
            made.append(Attachment(name=name, data=data, media_type=kind))
        return made

    def _refusal(self, name: str, data: bytes) -> str | None:
        if len(data) > self.max_file_bytes:
            return f"larger than {self.max_file_bytes // (1024 * 1024)} MB"
        return executable_reason(name, data[:SNIFF_BYTES])


def _names(folder: Path) -> set[str]:
    try:
        return {entry.name for entry in os.scandir(folder)}
    except OSError:  # no folder yet: nothing in it
        return set()


def safe_name(raw: str) -> str:
    """A file name with no directory part, no control characters, no leading dots, ≤ 150 chars."""
    name = unicodedata.normalize("NFC", raw.replace("\\", "/").rsplit("/", 1)[-1])
    name = "".join(ch for ch in name if ch.isprintable() and ch not in '<>:"|?*\x00')
    name = re.sub(r"\s+", " ", name).strip(" .")
    return (name or "attachment")[-150:]
