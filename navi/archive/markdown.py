"""A conversation as a Markdown document: its name, when it began, then each message a person saw
on the active branch (the user's and the answers; tool calls, tool results and the page's own
records are left out), each under a heading naming who said it and when (UTC).

Messages are Markdown already (answers) or plain text a person typed: both are kept as written,
inside the message's section. A heading a message holds is pushed below the message's own level
(`#` → `####`), so the document's outline stays the conversation's.
"""

from __future__ import annotations

import re
from datetime import datetime

from navi.llm.messages import Message
from navi.sessions.models import Session, as_utc, display_only

UNTITLED = "Conversation"
_HEADING = re.compile(r"^(#{1,6})(?=\s)", re.MULTILINE)
_FENCE = re.compile(r"^(```|~~~)", re.MULTILINE)


def when(value: datetime) -> str:
    return as_utc(value).strftime("%Y-%m-%d %H:%M UTC")


def title_of(session: Session) -> str:
    return " ".join((session.name or "").split()) or UNTITLED


def shown(message: Message) -> bool:
    """What a person saw as a message: the user's words and the answers' text."""
    if display_only(message) or message.is_plan or message.is_summary:
        return False
    return message.role in ("user", "assistant") and bool((message.content or "").strip())


def _demote(text: str) -> str:
    """Headings in a message's text, three levels down (at most `######`); fenced code untouched."""
    out, fenced = [], False
    for part in re.split(r"(\n)", text):
        if _FENCE.match(part):
            fenced = not fenced
        elif not fenced:
            part = _HEADING.sub(lambda m: "#" * min(6, len(m.group(1)) + 3), part)
        out.append(part)
    return "".join(out)


def conversation_markdown(session: Session, *, assistant: str = "Navi", person: str = "You") -> str:
    """The session's active branch as Markdown (see the module's docstring)."""
    lines = [f"# {title_of(session)}", "", f"Started {when(session.created_at)}.", ""]
    for message in session.messages:
        if not shown(message):
            continue
        who = person if message.role == "user" else assistant
        note = " (stopped)" if message.stopped else ""
        lines += [
            f"### {who} · {when(message.created_at)}{note}",
            "",
            _demote(message.content or "").strip(),
            "",
        ]
    return "\n".join(lines).rstrip() + "\n"


def export_filename(session: Session, extension: str) -> str:
    """A file name for the export: `navi-<title>-<id start>.<extension>`, ASCII letters, digits,
    dots and dashes only (it goes in a header)."""
    safe = re.sub(r"[^A-Za-z0-9.-]+", "-", title_of(session)).strip("-.")[:60] or "conversation"
    return f"navi-{safe}-{session.id[:8]}.{extension}"
