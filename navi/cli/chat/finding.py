"""`navi chat`'s /search: the messages of all the user's conversations with some words
(`GET /search`, docs/api.md#search), numbered, so that `/open N` opens one — on the version of
the conversation (its branch) that holds the message, drawn with the message's exchange."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from rich.text import Text

from navi.cli.chat.app import Chat
from navi.cli.chat.history import holds
from navi.cli.remote import RemoteError

USAGE = "/search WORDS: the messages of all your conversations with every word (then /open N opens one)"
LIMIT = 20
_WORD = re.compile(r"[^\W_]")
MARK = "bold yellow"


def _when(stamp: object) -> str:
    try:
        return datetime.fromisoformat(str(stamp)).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return ""


def _printable(text: str) -> str:
    """`text` with control characters (a terminal would obey them) as one character each, so the
    highlights' offsets still hold."""
    return "".join(c if c.isprintable() else "�" for c in text)


def hit_line(n: int, hit: dict[str, Any]) -> Text:
    """`  1  Trip to Lisbon · 2026-03-01 10:01 · Navi` and under it the snippet, its matches marked."""
    who = "you" if hit.get("role") == "user" else "Navi"
    line = Text(f"{n:>3}  ", style="bold")
    line.append(_printable(str(hit.get("session_name") or "untitled")))
    line.append(f" · {_when(hit.get('created_at'))} · {who}\n     ", style="dim")
    snippet, at = _printable(str(hit.get("snippet") or "")), 0
    for start, end in hit.get("highlights") or []:
        if at <= start < end <= len(snippet):
            line.append(snippet[at:start])
            line.append(snippet[start:end], style=MARK)
            at = end
    line.append(snippet[at:])
    return line


async def cmd_search(chat: Chat, arg: str) -> bool:
    if not _WORD.search(arg):
        chat.error(USAGE)
        return True
    hits = await chat.remote.search(arg, LIMIT)
    if not hits:
        chat.error(f"no matches for “{arg[:80]}” in your conversations")
        return True
    chat.numbered = [(str(h["session_id"]), str(h["message_id"])) for h in hits]
    for n, hit in enumerate(hits, 1):
        chat.console.print(hit_line(n, hit))
    more = " (the best 20)" if len(hits) == LIMIT else ""
    chat.say(f"/open N opens one{more}, on the version of its conversation that holds the message")
    return True


async def open_hit(chat: Chat, session_id: str, message_id: str) -> None:
    """Open the session on the branch that holds `message_id`, that message drawn. When it is not
    on the shown branch, that branch becomes the active one (as /branch does)."""
    shown = (await chat.remote.session(session_id)).get("messages") or []
    switched = False
    if not any(holds(m, message_id) for m in shown):
        try:
            await chat.remote.switch_branch(session_id, message_id)
            switched = True
        except RemoteError as exc:
            if exc.code != "busy":
                raise
            chat.error("a reply is running there: it opens on the version answered — /open N again later")
    await chat.open(session_id, at=message_id)
    if switched:
        chat.say("The message is on another version of this conversation: that one is shown now (/branch)")
