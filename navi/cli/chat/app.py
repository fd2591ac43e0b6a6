"""`navi chat` in a terminal: the prompt, the open session, and following its turns.

The session's WebSocket stays open while the session is (`SessionConnection`); its frames, the
keys typed during a turn and Ctrl-C all arrive in one queue, so a turn is one loop over that queue.
Between turns prompt_toolkit reads the next message while a small task keeps the session's name
and the connection state current in the bottom bar.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.rule import Rule
from rich.text import Text

from navi.cli.chat.blocks import TextBlock, ToolBlock, UserBlock
from navi.cli.chat.connection import NotConnected, SessionConnection
from navi.cli.chat.history import final_answer, history_blocks, spans
from navi.cli.chat.keys import TypeAhead, turn_keys
from navi.cli.chat.question import Question
from navi.cli.chat.sources import Source, sources_of
from navi.cli.chat.sources import render as render_sources
from navi.cli.chat.turn import NO_CONTEXT, Context, LiveTurn, context_of, gauge, gauge_short
from navi.cli.remote import Remote, RemoteError
from navi.protocol import FileRef

HISTORY_TURNS = 3  # exchanges shown when a session is opened
REFRESH = 0.08  # seconds between redraws of the live region
AWAY_GRACE = 1.5  # after a reconnect, how long frames of a run that just ended may take to arrive
KEYS = {"y": "allow", "n": "deny", "a": "always"}
# A scheduled run's status (`schedule_run` frames), as the bar says it.
SCHEDULED = {
    "running": "running",
    "waiting_approval": "waits for your approval",
    "ok": "done",
    "error": "failed",
    "skipped": "skipped",
}


class Chat:
    def __init__(self, remote: Remote, console: Console, *, profile: str | None, history_file: Path) -> None:
        self.remote = remote
        self.console = console
        self.history_file = history_file
        self.profile_id = profile  # for the next new session
        self.profiles: dict[str, str] = {}  # id → name
        self.session: dict[str, Any] | None = None  # id, name, profile_id
        self.conn: SessionConnection | None = None
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.context: Context = NO_CONTEXT
        self.images: list[tuple[str, str]] = []  # (name, data: URI), sent with the next message
        self.files: list[FileRef] = []  # uploaded, as a message frame names them
        self.interrupts = 0  # Ctrl-C at an empty prompt in a row; the second one quits
        self.refill = ""  # a message that was not sent, put back into the prompt
        self.ahead = TypeAhead()  # typed during a reply: sent (lines) or put in the prompt after it
        # The last /sessions or /search list, for /open N: (session id, the hit's message id or None).
        self.numbered: list[tuple[str, str | None]] = []
        self.busy_elsewhere = False  # another window's reply is running in this session
        self.prompt: Any = None
        self.pending_notice = ""  # something that happened while the prompt waited, said after it
        self.scheduled = ""  # the latest news of a scheduled run (any session), in the bar
        self.sources: list[Source] = []  # the documents the latest answer cites, for /source N

    # --- printing -------------------------------------------------------------------------------

    def say(self, text: str, style: str = "dim") -> None:
        self.console.print(Text(text, style=style))

    def error(self, text: str) -> None:
        self.console.print(Text(f"✗ {text}", style="red"))

    @property
    def session_id(self) -> str | None:
        return self.session["id"] if self.session else None

    def profile_name(self, profile_id: str | None) -> str:
        """The profile's name; '' for a new conversation on Navi's default profile (not known yet)."""
        return self.profiles.get(profile_id or "", profile_id or "")

    def title(self) -> str:
        if self.session is None:
            return "new conversation"
        return str(self.session.get("name") or "untitled conversation")

    def toolbar(self) -> str:
        """The bar under the prompt. In a narrow terminal (80 columns) the gauge says its share only
        and a long title is cut, so the bar still reads whole rather than cut mid-figure."""
        width = shutil.get_terminal_size().columns
        for g in (gauge(*self.context), gauge_short(*self.context)):
            bar = " " + " · ".join(self._bar_parts(g))
            if len(bar) < width:
                break
        if len(bar) >= width:
            bar = bar[: max(1, width - 2)] + "…"
        hint = "Esc Enter: new line · /help"
        return (
            bar + " " * max(3, width - len(bar) - len(hint) - 1) + hint
            if len(bar) + len(hint) + 4 <= width
            else bar
        )

    def _bar_parts(self, context_gauge: str) -> list[str]:
        profile = self.session["profile_id"] if self.session else self.profile_id
        parts = [p for p in (self.title(), self.profile_name(profile)) if p]
        if context_gauge:
            parts.append(context_gauge)
        if self.images or self.files:
            parts.append(f"📎 {len(self.images) + len(self.files)} attached")
        if self.conn is not None and self.conn.state == "reconnecting":
            parts.append("reconnecting…")
        if self.busy_elsewhere:
            parts.append("a reply is running in another window")
        if self.scheduled:
            parts.append(self.scheduled)
        return parts

    # --- sessions -------------------------------------------------------------------------------

    async def close_session(self) -> None:
        if self.conn is not None:
            await self.conn.close()
        self.conn = None
        self.session = None
        self.context = NO_CONTEXT
        self.images, self.files = [], []
        self.busy_elsewhere = False
        self.inbox = asyncio.Queue()

    def _connect(self, session_id: str) -> None:
        self.inbox = asyncio.Queue()
        self.conn = SessionConnection(self.remote.target, session_id, self.inbox)
        self.conn.start()

    async def open(self, session_id: str, *, at: str | None = None) -> None:
        """Open a session: its latest exchanges, then (if a reply is running) that reply. `at`: a
        message of the shown branch to draw too (a search hit), with its exchange, when it is older."""
        detail = await self.remote.session(session_id)
        await self.close_session()
        messages = detail.pop("messages", [])
        self.session = {k: detail.get(k) for k in ("id", "name", "profile_id")}
        self.context = context_of(detail)
        self.console.print(
            Rule(f"{self.title()} · {self.profile_name(detail.get('profile_id'))}", style="cyan")
        )
        if detail.get("active"):  # drawn up to the user's last message; the replay draws the rest
            last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
            messages = messages[: last_user + 1]
        drawn = spans(messages, HISTORY_TURNS, at)
        if drawn[0][0]:
            self.say(f"… {drawn[0][0]} earlier messages (/export FILE saves them all)")
        for k, (start, end) in enumerate(drawn):
            if k:
                self.say(f"… {start - drawn[k - 1][1]} later messages")
            for n, block in enumerate(history_blocks(messages[start:end])):
                if n and isinstance(block, UserBlock):
                    self.console.print()  # a blank line between exchanges, as after a live turn
                self.console.print(block.final())
        self._connect(session_id)
        if detail.get("active"):
            await self.follow(replay=True)

    async def new(self) -> None:
        await self.close_session()
        profile = self.profile_name(self.profile_id)
        with_profile = f" ({profile})" if profile else ""
        self.say(f"New conversation{with_profile}; it is created when you send the first message.")

    async def ensure_session(self) -> str:
        if self.session is None:
            created = await self.remote.create(self.profile_id)
            self.session = {
                "id": created["session_id"],
                "name": created.get("name"),
                "profile_id": created.get("profile_id"),
            }
            self._connect(created["session_id"])
        assert self.session is not None
        return str(self.session["id"])

    def session_updated(self, frame: dict[str, Any]) -> None:
        if self.session is None or frame.get("session_id") != self.session["id"] or frame.get("deleted"):
            return
        self.session["name"] = frame.get("name")
        self.session["profile_id"] = frame.get("profile_id") or self.session["profile_id"]

    def schedule_run(self, frame: dict[str, Any]) -> None:
        """A scheduled run of the user's started, waits for an approval, or ended: said in the bar
        (its turn streams in its own session, which may not be this one)."""
        title = str(frame.get("title") or "a schedule")
        status = frame.get("status")
        said = SCHEDULED.get(str(status), str(status))
        if status == "waiting_approval" and frame.get("tool"):
            said += f" ({frame['tool']})"
        self.scheduled = f"⏰ {title}: {said}"

    def job(self, frame: dict[str, Any]) -> None:
        """A background job of the user's took a step or ended: said in the bar (`/jobs` lists
        them; its result is posted into the conversation that started it)."""
        title = str(frame.get("title") or "a job")
        state = str(frame.get("state"))
        steps = f" · {frame.get('steps', 0)}/{frame.get('max_steps', 0)} steps" if state == "running" else ""
        self.scheduled = f"⏳ {title}: {state}{steps}"

    # --- between turns --------------------------------------------------------------------------

    async def idle(self) -> None:
        """While the prompt waits: keep the bar current (name, connection); note others' replies."""
        while True:
            frame = await self.inbox.get()
            kind = frame.get("type")
            if kind == "session_updated":
                self.session_updated(frame)
            elif kind == "schedule_run":
                self.schedule_run(frame)
            elif kind == "job":
                self.job(frame)
            elif kind == "stream_start":
                self.busy_elsewhere = True
            elif kind in ("stream_end", "stream_stopped") or (kind == "error" and frame.get("seq")):
                self.busy_elsewhere = False
                if kind == "stream_end":
                    self.context = context_of(frame)
            elif kind == "_gone":
                self.session, self.conn = None, None
                self.pending_notice = f"{frame['message']}; your next message starts a new one"
            if self.prompt is not None and self.prompt.app.is_running:
                self.prompt.app.invalidate()

    # --- a turn ---------------------------------------------------------------------------------

    async def send(self, text: str) -> None:
        """Send a message with the attachments, and follow its turn."""
        try:
            await self.ensure_session()
            frame: dict[str, Any] = {"type": "message", "content": text}
            if self.images:
                frame["images"] = [data for _, data in self.images]
            if self.files:
                frame["files"] = [f.model_dump(exclude_none=True) for f in self.files]
            assert self.conn is not None
            await self.conn.send(frame)
        except (RemoteError, NotConnected) as exc:
            self.error(f"{exc} (your message was not sent)")
            self.refill = text
            return
        self.images, self.files = [], []
        self.interrupts = 0
        await self.follow()

    async def retry(self) -> None:
        if self.conn is None:
            self.error("nothing to retry here")
            return
        try:
            await self.conn.send({"type": "retry"})
        except NotConnected as exc:
            self.error(str(exc))
            return
        await self.follow()

    async def follow(self, *, replay: bool = False) -> None:
        """Draw the turn from its frames until it ends. `replay`: a turn already running (opened
        mid-run); otherwise the turn of the message just sent, which starts with its stream_start."""
        conn = self.conn
        if conn is None:
            return
        turn = LiveTurn(self.console, context=self.context, ahead=self.ahead)
        started = replay
        stopping = False
        presses = 0  # Ctrl-C during this reply
        dropped = False  # the connection dropped during this turn
        checks: set[asyncio.Task[None]] = set()

        def check_later(delay: float) -> None:
            task = asyncio.create_task(self._resync(delay))
            checks.add(task)
            task.add_done_callback(checks.discard)

        def answer(block: ToolBlock, decision: str) -> None:
            block.answering = True

            async def deliver() -> None:
                try:
                    await conn.send({"type": "approval", "call_id": block.call_id, "decision": decision})
                except NotConnected as exc:
                    block.answering = False
                    turn.notice(f"✗ the answer was not sent: {exc}", "red")

            task = asyncio.create_task(deliver())
            checks.add(task)
            task.add_done_callback(checks.discard)

        def reply(question: Question, action: str, content: dict[str, Any] | None) -> None:
            question.sending = True
            said: dict[str, Any] = {"type": "elicitation", "elicitation_id": question.elicitation_id}
            said.update(action=action, **({"content": content} if content is not None else {}))

            async def deliver() -> None:
                try:
                    await conn.send(said)
                except NotConnected as exc:
                    question.refused(f"the answer was not sent: {exc}")

            task = asyncio.create_task(deliver())
            checks.add(task)
            task.add_done_callback(checks.discard)

        if replay:
            check_later(AWAY_GRACE)  # the run may have ended between reading the session and connecting
        ticker = asyncio.create_task(self._tick(turn))
        try:
            with (
                turn,
                turn_keys(
                    lambda k: self.inbox.put_nowait({"type": "_key", "key": k}),
                    lambda: self.inbox.put_nowait({"type": "_interrupt"}),
                ),
            ):
                while True:
                    frame = await self.inbox.get()
                    kind = frame.get("type")
                    if kind == "_key" and (question := turn.question()) is not None:
                        said = question.key(str(frame["key"]))
                        if said is not None:
                            reply(question, *said)
                        continue
                    if kind == "_key":
                        asking = turn.asking()
                        decision = KEYS.get(str(frame["key"]).lower())
                        if asking and decision and (decision != "always" or asking[0].always_scope):
                            answer(asking[0], decision)
                        else:
                            self.ahead.feed(str(frame["key"]))
                        continue
                    if kind == "_interrupt":
                        # The first Ctrl-C stops the reply; more while it stops do not quit (only
                        # Ctrl-D, or Ctrl-C at an empty prompt, does); the third leaves it running.
                        presses += 1
                        if presses >= 3:
                            turn.notice("left the reply running; /stop stops it, /open follows it again")
                            break
                        if stopping:
                            turn.hint = "stopping… (Ctrl-C once more leaves it running)"
                            continue
                        stopping = True
                        turn.phase, turn.detail = "stopping", ""
                        turn.hint = "Ctrl-C twice more leaves it running"
                        if started:
                            task = asyncio.create_task(self._stop(turn))
                            checks.add(task)
                            task.add_done_callback(checks.discard)
                        continue
                    if kind == "_connection":
                        if frame["state"] == "reconnecting":
                            turn.phase, turn.detail = "reconnecting", ""
                            dropped = True
                        elif frame["state"] == "open" and dropped:  # not the first open of a new session
                            turn.phase, dropped = "waiting", False
                            check_later(AWAY_GRACE)
                        continue
                    if kind == "_away":
                        self._finish_away(turn, frame)
                        break
                    if kind == "_gone":
                        turn.notice(f"✗ {frame['message']}", "red")
                        self.session, self.conn = None, None
                        break
                    if kind == "session_updated":
                        self.session_updated(frame)
                        continue
                    if kind == "schedule_run":
                        self.schedule_run(frame)
                        continue
                    if kind == "job":
                        self.job(frame)
                        continue
                    if kind == "error" and (
                        frame.get("seq") is None or frame.get("code") == "nothing_to_retry"
                    ):
                        if self._refused(turn, frame, started):
                            break
                        continue
                    if kind == "stream_start":
                        started = True
                        if stopping:  # Ctrl-C came before the reply started: stop it now
                            task = asyncio.create_task(self._stop(turn))
                            checks.add(task)
                            task.add_done_callback(checks.discard)
                    elif not started:
                        continue  # the end of another window's run, before ours started
                    if turn.handle(frame):
                        break
        finally:
            ticker.cancel()
            for task in list(checks):
                task.cancel()
            self.context = turn.context
        self.console.print()
        if turn.profile_name and self.session is not None:
            with contextlib.suppress(RemoteError):
                self.session["profile_id"] = (await self.remote.session(self.session["id"])).get("profile_id")
        if turn.outcome == "answered" and self.session is not None:
            await self.show_sources(turn.answer_text())

    async def show_sources(self, answer: str) -> None:
        """List the documents the answer cites (nothing when it cites none); a failure to read them
        costs the list, never the chat."""
        self.sources = []
        if self.session is None:
            return
        with contextlib.suppress(RemoteError):
            self.sources = await sources_of(self.remote, self.session["id"], answer)
        if self.sources:
            self.console.print(render_sources(self.sources))
            self.console.print()

    def _refused(self, turn: LiveTurn, frame: dict[str, Any], started: bool) -> bool:
        """An error frame that belongs to no run; True when it ends the wait for our turn."""
        code = frame.get("code")
        if code == "approval_not_found":
            turn.notice(f"ℹ {frame.get('message', '')}", "yellow")
            for block in turn.tools.values():
                if block.call_id == frame.get("call_id"):
                    block.answering = False
            return False
        if code in ("bad_answer", "elicitation_not_found"):
            for block in turn.tools.values():
                for question in block.questions:
                    if question.elicitation_id == frame.get("elicitation_id"):
                        question.refused(str(frame.get("message", "")))
            return False
        if code == "busy":
            turn.notice(
                "✗ Navi is still answering in this conversation (another window?): your message was not "
                "sent and is back in the prompt; /stop stops that reply",
                "red",
            )
            return True
        if code == "too_slow":
            return False  # the socket closes; the reconnect picks the run up again
        turn.notice(f"✗ {frame.get('message', '')}", "red")
        return not started

    async def _tick(self, turn: LiveTurn) -> None:
        while True:
            turn.refresh()
            await asyncio.sleep(REFRESH)

    async def _stop(self, turn: LiveTurn) -> None:
        try:
            if not await self.remote.stop(str(self.session_id)):
                turn.notice("nothing was running any more", "dim")
        except RemoteError as exc:
            turn.notice(f"✗ could not stop: {exc}", "red")

    async def _resync(self, delay: float) -> None:
        """After a reconnect: if the run ended while we were away, no frame will say so; once the
        session says no run is going and `delay` passed without its frames, say it ourselves."""
        if self.session_id is None:
            return
        try:
            detail = await self.remote.session(self.session_id)
        except RemoteError:
            return
        if detail.get("active"):
            return
        await asyncio.sleep(delay)
        self.inbox.put_nowait({"type": "_away", "detail": detail})

    def _finish_away(self, turn: LiveTurn, frame: dict[str, Any]) -> None:
        detail = frame["detail"]
        answer = final_answer(detail.get("messages") or [])
        last = turn.blocks[-1] if turn.blocks else None
        if answer:
            already = last.text if isinstance(last, TextBlock) and not last.done else ""
            if already and answer.startswith(already):
                turn.handle({"type": "stream_delta", "delta": answer[len(already) :]})
            else:
                turn.handle({"type": "stream_delta", "delta": answer})
        turn.notice("(the reply ended while the connection was down; this is how it ended)")
        turn.handle(
            {
                "type": "stream_end",
                "content": answer,
                "context_tokens": detail.get("context_token_count") or 0,
                "max_context_tokens": detail.get("max_context_tokens") or 0,
            }
        )
