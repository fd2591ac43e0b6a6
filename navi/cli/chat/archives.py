"""`navi chat`'s archive commands, as the reference's CLI has them: `/load FILE` imports a
session-archive/v1 file (Navi's or AbstractCore's; `.gz` unpacked) and opens it; `/facts` and
`/judge [CRITERIA…]` ask the server's analysis (`POST /sessions/{id}/analysis`, through the
conversation's model: the facts as triples, an assessment with a score) and show it. The server keeps
what it made with the conversation, so the next `/export` carries it too."""

from __future__ import annotations

import asyncio
import gzip
import zlib
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from rich.text import Text

from navi.cli.chat.app import Chat

MAX_ARCHIVE_BYTES = 64 * 1024 * 1024  # what Navi imports by default (NAVI_IMPORT_MAX_MB); it says more
ANALYSIS_TIMEOUT = 600.0  # seconds: a model on a CPU reads the whole conversation
MAX_CRITERIA = 12


class Unreadable(ValueError):
    """The file cannot be read as an archive; the text says why, for the user."""


def read_archive(text: str) -> tuple[Path, bytes]:
    """The archive file `text` names (a path, or a pasted file:// URI) and its bytes (unpacked when
    the name ends in `.gz`), at most `MAX_ARCHIVE_BYTES`."""
    text = text.strip().strip("'\"")
    path = Path(unquote(urlsplit(text).path) if text.startswith("file://") else text).expanduser()
    try:
        with path.open("rb") as fh:
            if path.name.lower().endswith(".gz"):
                with gzip.GzipFile(fileobj=fh) as unpacked:
                    data = unpacked.read(MAX_ARCHIVE_BYTES + 1)
            else:
                data = fh.read(MAX_ARCHIVE_BYTES + 1)
    except FileNotFoundError:
        raise Unreadable(f"no file {path}") from None
    except IsADirectoryError:
        raise Unreadable(f"{path} is a folder — give the archive's file") from None
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise Unreadable(f"{path} is not a readable gzip file ({exc})") from None
    except OSError as exc:
        raise Unreadable(f"cannot read {path}: {(exc.strerror or str(exc)).lower()}") from None
    if len(data) > MAX_ARCHIVE_BYTES:
        raise Unreadable(f"{path} holds more than {MAX_ARCHIVE_BYTES // (1024 * 1024)} MB: too large to load")
    return path, data


async def cmd_load(chat: Chat, arg: str) -> bool:
    """/load FILE: import a session-archive/v1 file as a new conversation, and open it."""
    if not arg:
        chat.error("/load FILE: a session-archive/v1 file (/export, `navi sessions export`, AbstractCore)")
        return True
    try:
        path, body = await asyncio.to_thread(read_archive, arg)
    except Unreadable as exc:
        chat.error(str(exc))
        return True
    imported = await chat.remote.request(
        "POST",
        "/sessions/import",
        content=body,
        headers={"Content-Type": "application/json"},
        timeout=120,
    )
    chat.say(f"Loaded {path.name}: {imported.get('messages', 0)} messages, a conversation of its own.")
    await chat.open(str(imported["session_id"]))
    return True


async def _analyse(chat: Chat, ask: dict[str, Any], what: str) -> dict[str, Any] | None:
    if chat.session is None:
        chat.error(f"nothing to {what} yet: the conversation starts with its first message")
        return None
    chat.say(f"Asking the model to {what} the conversation…")
    path = f"/sessions/{quote(chat.session['id'])}/analysis"
    return dict(await chat.remote.request("POST", path, json=ask, timeout=ANALYSIS_TIMEOUT))


async def cmd_facts(chat: Chat, arg: str) -> bool:
    """/facts: the facts of this conversation as (subject, predicate, object), through its model."""
    got = await _analyse(chat, {"facts": True}, "extract facts from")
    if got is None:
        return True
    triples = (got.get("facts") or {}).get("simple_triples") or []
    if not triples:
        chat.say("No facts found in this conversation.")
        return True
    chat.console.print(Text(f"Facts ({len(triples)}):", style="bold"))
    for subject, predicate, obj in triples:
        line = Text("  • ")
        line.append(str(subject), style="cyan")
        line.append(f" {predicate} ")
        line.append(str(obj), style="bold")
        chat.console.print(line)
    return True


async def cmd_judge(chat: Chat, arg: str) -> bool:
    """/judge [CRITERIA…]: an assessment of this conversation (score 1–5, why, strengths, what to do
    better), on the criteria given (separated by spaces or commas) or the server's."""
    criteria = list(dict.fromkeys(c for c in arg.replace(",", " ").split() if c))
    if len(criteria) > MAX_CRITERIA or any(len(c) > 100 for c in criteria):
        chat.error(f"/judge takes at most {MAX_CRITERIA} criteria of 100 characters")
        return True
    ask: dict[str, Any] = {"assessment": True, **({"criteria": criteria} if criteria else {})}
    got = await _analyse(chat, ask, "judge")
    if got is None:
        return True
    judged = got.get("assessment") or {}
    head = Text("Assessment: ", style="bold")
    head.append(f"{judged.get('overall_score', '?')}/5", style="bold cyan")
    if judged.get("criteria"):
        head.append(f"  ({', '.join(map(str, judged['criteria']))})", style="dim")
    chat.console.print(head)
    if judged.get("judge_summary"):
        chat.console.print(Text(f"  {judged['judge_summary']}"))
    for title, key in (("Strengths", "strengths"), ("To do better", "actionable_feedback")):
        items = judged.get(key) or []
        if items:
            chat.console.print(Text(f"{title}:", style="bold"))
            for item in items:
                chat.console.print(Text(f"  • {item}"))
    return True
