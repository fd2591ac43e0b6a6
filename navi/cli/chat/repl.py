"""The prompt of `navi chat`: Enter sends, Esc Enter (Alt+Enter) adds a line, history across runs,
Tab completes slash commands (and /profile's profiles), Ctrl-C clears the line or, at an empty
prompt, (twice) quits; slash commands and pasted paths go to `commands`."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable, Iterator
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.application import get_app
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from rich.text import Text

from navi.cli.chat.app import Chat
from navi.cli.chat.commands import COMMANDS, SUMMARIES, attach, describe, pasted_paths, run_command
from navi.cli.chat.keys import quiet_interrupts
from navi.cli.remote import RemoteError


class SlashCompleter(Completer):
    """Tab after "/" offers the commands (with what each does); after "/profile " the profiles."""

    def __init__(self, profiles: Iterable[str] = ()) -> None:
        self.profiles = profiles

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        text = document.text_before_cursor
        if not text.startswith("/") or "\n" in text:
            return
        name, space, arg = text[1:].partition(" ")
        if not space:
            for command in COMMANDS:
                if command.startswith(name.lower()) and command in SUMMARIES:
                    yield Completion(
                        f"/{command} ", -len(text), display=f"/{command}", display_meta=SUMMARIES[command]
                    )
        elif name == "profile" and " " not in arg:
            for profile in self.profiles:
                if profile.startswith(arg):
                    yield Completion(profile, -len(arg))


def key_bindings() -> KeyBindings:
    keys = KeyBindings()

    @keys.add("enter")
    def _send(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.text.strip():
            buffer.validate_and_handle()

    @keys.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @keys.add("c-c")
    def _interrupt(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.text:
            buffer.reset()  # the first Ctrl-C clears what was typed
        else:
            event.app.exit(exception=KeyboardInterrupt())

    return keys


def prompt_session(history_file: Path, completer: Completer | None = None) -> PromptSession[str]:
    try:
        history_file.parent.mkdir(parents=True, exist_ok=True)
        history: FileHistory | InMemoryHistory = FileHistory(str(history_file))
        history_file.touch(mode=0o600, exist_ok=True)
    except OSError:
        history = InMemoryHistory()  # an unwritable state folder costs the history, not the chat
    return PromptSession(
        history=history,
        multiline=True,
        key_bindings=key_bindings(),
        prompt_continuation=lambda width, line, wrap: "· ".rjust(width),
        enable_history_search=False,
        completer=completer,
        complete_while_typing=False,  # Tab asks; typing a message is never interrupted by a menu
    )


YES, NO = ("", "y", "yes"), ("n", "no")


def _answer_keys() -> KeyBindings:
    """`y` or `n` as the first key answers at once (no Enter): a bare `n` followed by the first
    message must not be read as that message, which would continue the old conversation."""
    keys = KeyBindings()
    first = Condition(lambda: not get_app().current_buffer.text)
    for key in ("y", "Y", "n", "N"):

        @keys.add(key, filter=first)
        def _(event: KeyPressEvent, key: str = key) -> None:
            event.app.exit(result=key)

    return keys


async def ask_yes(question: str) -> tuple[bool, str]:
    """A yes/no question before the chat starts; Enter or `y` means yes, `n` no, each at once.
    Anything else typed there was meant for the chat: it counts as yes (the default) and is given
    back, to go in the prompt."""
    session: PromptSession[str] = PromptSession(key_bindings=_answer_keys())
    answer = await session.prompt_async(FormattedText([("bold", question), ("", " [Y/n] ")]))
    word = answer.strip().lower()
    if word in YES or word in NO:
        return word in YES, ""
    return True, answer.strip()


async def start(chat: Chat, session_ref: str | None, new: bool) -> None:
    """Open what was asked for: SESSION, a new one, or (asked) the most recent one."""
    if session_ref:
        await chat.open(await chat.remote.find_session(session_ref))
        return
    if not new:
        listed = await chat.remote.sessions()  # pinned first: the latest is the last active
        if listed:
            latest = max(listed, key=lambda s: str(s.get("last_active") or ""))
            yes, typed = await ask_yes(f"Continue {describe(latest)}?")
            if yes:
                await chat.open(str(latest["id"]))
                if typed:  # not lost: it waits in the prompt, Enter sends it
                    chat.refill = typed
                    chat.say("(what you typed is in the prompt: Enter sends it)")
                return
    await chat.new()


async def interact(chat: Chat, session_ref: str | None, new: bool) -> int:
    profiles = await chat.remote.profiles()
    chat.profiles = {p["id"]: p["name"] for p in profiles}
    if chat.profile_id and chat.profile_id not in chat.profiles:
        raise RemoteError(
            f"unknown profile '{chat.profile_id}' — choose one of: {', '.join(chat.profiles)}", "bad"
        )
    try:
        await start(chat, session_ref, new)
    except (KeyboardInterrupt, EOFError):
        return 0
    chat.say("Type a message; /help lists commands and keys (Tab completes them).")
    prompt = prompt_session(chat.history_file, SlashCompleter(chat.profiles))
    chat.prompt = prompt
    with quiet_interrupts():
        return await _loop(chat, prompt)


async def _loop(chat: Chat, prompt: PromptSession[str]) -> int:
    try:
        while True:
            if chat.ahead.lines:  # typed (with Enter) during the reply: sent as if typed now
                line = chat.ahead.lines.pop(0)
                chat.console.print(Text("› ", style="bold green") + Text(line))
                text = line.strip()
                if not await _handle(chat, text, line):
                    return 0
                continue
            if chat.ahead.quit:  # Ctrl-D pressed during the reply
                return 0
            idle = asyncio.create_task(chat.idle())
            try:
                default = chat.refill or chat.ahead.partial
                chat.refill, chat.ahead.partial = "", ""
                line = await prompt.prompt_async(
                    FormattedText([("ansigreen bold", "› ")]),
                    default=default,
                    bottom_toolbar=chat.toolbar,
                )
            except KeyboardInterrupt:
                if chat.interrupts:
                    return 0
                chat.interrupts = 1
                chat.say("(Ctrl-C again, or Ctrl-D, quits)")
                continue
            except EOFError:
                return 0
            finally:
                idle.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await idle
            if chat.pending_notice:
                chat.error(chat.pending_notice)
                chat.pending_notice = ""
            chat.interrupts = 0
            if not await _handle(chat, line.strip(), line):
                return 0
    finally:
        await chat.close_session()


async def _handle(chat: Chat, text: str, line: str) -> bool:
    """One line from the prompt (or typed ahead): paths attach, slash commands run, the rest is
    sent. False when the chat should end (/quit)."""
    if not text:
        return True
    paths = pasted_paths(text)
    if paths:
        for path in paths:
            try:
                await attach(chat, path)
            except RemoteError as exc:
                chat.error(str(exc))
        return True
    if text.startswith("/"):
        return bool(await run_command(chat, text))
    await chat.send(line.rstrip())
    return True
