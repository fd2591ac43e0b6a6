"""The slash commands of `navi chat`, and file paths pasted at the prompt (attached, not sent)."""

from __future__ import annotations

import asyncio
import json
import re
import shlex
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from rich.style import Style
from rich.text import Text

from navi.cli.chat import archives, branching, finding
from navi.cli.chat.app import Chat
from navi.cli.chat.sources import passage
from navi.cli.remote import RemoteError, image_data_url
from navi.protocol import FileRef

HELP = """\
Enter sends · Esc Enter (or Alt+Enter) starts a new line · Up/Down: earlier messages · Tab completes commands
Ctrl-C stops a reply (what it wrote stays; pressing it again does not quit)
At an empty prompt, Ctrl-C twice (or Ctrl-D) quits; with text there, Ctrl-C clears it
Ctrl-D while a reply streams quits once it (and what you queued before) is done
While a reply waits for your approval: y allows, n declines, a always allows (when offered)

/new               a new conversation (created with its first message)
/sessions          the conversations there are (newest first)
/search WORDS      find messages in all your conversations
/open ID|N         open one (its id, the start of it, or its number in the last /sessions or /search)
/profile [P]       switch this conversation's profile (no P: list them)
/rename NAME       rename this conversation
/export FILE       save this conversation as a session-archive/v1 file
/load FILE         import a session-archive/v1 file (.gz too) as a new conversation, and open it
/facts             the facts of this conversation (subject, predicate, object), from its model
/judge [CRITERIA]  an assessment of this conversation (score, strengths, what to do better)
/attach PATH…      attach files (pictures go to the model as images); pasting a path does it too
/detach            drop what is attached and not sent yet
/source N          the passage the latest answer's source N cites (its Sources list)
/retry             run the last failed turn again
/edit TEXT         run your last message again with new text (the old version stays)
/regenerate        another answer to your last message (the old one stays)
/continue          the rest of the latest answer, when its length limit cut it off
/branch [prev|next|N]  the versions of this conversation; show another one
/stop              stop a reply that is still running (one you left with Ctrl-C three times)
/background TEXT   run TEXT as a background job: this conversation stays free, the result comes here
/research TEXT     research TEXT as a background job: sub-questions, pages read, a report citing them
/jobs [stop ID]    your background jobs, their steps and state; stop one
/help              this
/quit              leave (Ctrl-D too)"""

Handler = Callable[[Chat, str], Awaitable[bool]]


def _ago(stamp: str | None) -> str:
    if not stamp:
        return ""
    try:
        when = datetime.fromisoformat(stamp)
    except ValueError:
        return ""
    now = datetime.now(when.tzinfo)
    seconds = max(0, int((now - when).total_seconds()))
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            return f"{seconds // size} {unit} ago"
    return "just now"


def said(session: dict[str, Any]) -> int:
    """The messages a person wrote or read (no tool results); older servers count every message."""
    return int(session.get("text_message_count", session.get("message_count", 0)) or 0)


def describe(session: dict[str, Any]) -> str:
    name = session.get("name") or "untitled"
    return f"“{name}” ({said(session)} messages, {_ago(str(session.get('last_active') or ''))})"


async def cmd_new(chat: Chat, arg: str) -> bool:
    await chat.new()
    return True


async def cmd_sessions(chat: Chat, arg: str) -> bool:
    listed = await chat.remote.sessions()
    if not listed:
        chat.say("No conversations yet.")
        return True
    chat.numbered = [(str(s["id"]), None) for s in listed]
    for n, s in enumerate(listed[:30], 1):
        line = Text(f"{'*' if s['id'] == chat.session_id else ' '}{n:>3}  ", style="bold")
        line.append(f"{s['id'][:8]}  ", style="cyan")
        line.append(f"{_ago(s.get('last_active')):>11}  {said(s):>4} msgs  ", style="dim")
        line.append(f"{s.get('profile_id', ''):<13} {s.get('name') or 'untitled'}")
        if s.get("active"):
            line.append("  (answering)", style="yellow")
        chat.console.print(line)
    if len(listed) > 30:
        chat.say(f"… and {len(listed) - 30} older ones")
    return True


async def cmd_open(chat: Chat, arg: str) -> bool:
    """/open ID (or the start of one), or N: the Nth of the last /sessions or /search list (a
    search hit opens on the branch that holds its message)."""
    if not arg:
        chat.error("/open needs a conversation: its id, or its number in /sessions or /search")
        return True
    if arg.isdigit() and 1 <= int(arg) <= len(chat.numbered):
        session_id, message_id = chat.numbered[int(arg) - 1]
        if message_id is not None:
            await finding.open_hit(chat, session_id, message_id)
        else:
            await chat.open(session_id)
        return True
    await chat.open(await chat.remote.find_session(arg))
    return True


async def cmd_profile(chat: Chat, arg: str) -> bool:
    current = chat.session["profile_id"] if chat.session else chat.profile_id
    if not arg:
        for pid, name in chat.profiles.items():
            chat.console.print(Text(f"{'*' if pid == current else ' '} {pid:<14} {name}"))
        return True
    if arg not in chat.profiles:
        chat.error(f"unknown profile '{arg}' — choose one of: {', '.join(chat.profiles)}")
        return True
    if chat.session is None:
        chat.profile_id = arg
    else:
        updated = await chat.remote.update(chat.session["id"], profile_id=arg)
        chat.session["profile_id"] = updated.get("profile_id", arg)
    chat.say(f"Profile: {chat.profiles[arg]}", "magenta")
    return True


async def cmd_rename(chat: Chat, arg: str) -> bool:
    if chat.session is None:
        chat.error("nothing to rename yet: the conversation starts with its first message")
        return True
    updated = await chat.remote.update(chat.session["id"], name=arg)
    chat.session["name"] = updated.get("name")
    chat.say(f"Renamed: {chat.title()}" if arg else "Name cleared.")
    return True


async def cmd_export(chat: Chat, arg: str) -> bool:
    if chat.session is None:
        chat.error("nothing to export yet: the conversation starts with its first message")
        return True
    path = as_path(arg or f"navi-{chat.session['id'][:8]}.json")
    archive = await chat.remote.export(chat.session["id"])
    try:
        await asyncio.to_thread(_write, path, json.dumps(archive, indent=2, ensure_ascii=False) + "\n")
    except OSError as exc:
        chat.error(f"cannot write {path}: {(exc.strerror or str(exc)).lower()} — give another FILE")
        return True
    chat.say(f"Wrote {path} ({len(archive.get('messages', []))} messages).")
    return True


async def cmd_attach(chat: Chat, arg: str) -> bool:
    if not arg:
        shown = [name for name, _ in chat.images] + [f.name or "" for f in chat.files]
        chat.say(
            f"Attached: {', '.join(shown)}" if shown else "Nothing attached. /attach PATH attaches a file."
        )
        return True
    try:
        paths = [as_path(p) for p in shlex.split(arg)]
    except ValueError as exc:
        chat.error(f"cannot read the paths: {exc}")
        return True
    for path in paths:
        await attach(chat, path)
    return True


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


async def attach(chat: Chat, path: Path) -> None:
    if not await asyncio.to_thread(path.is_file):
        chat.error(f"no file {path}")
        return
    data = await asyncio.to_thread(image_data_url, path)
    if data is not None:
        chat.images.append((path.name, data))
        chat.say(f"🖼 {path.name} attached (the model sees it with your next message)")
        return
    session_id = await chat.ensure_session()
    uploaded = await chat.remote.upload(session_id, path)
    chat.files.append(FileRef(name=uploaded["name"], path=uploaded["path"]))
    chat.say(
        f"📎 {uploaded['name']} uploaded ({uploaded.get('size', 0):,} bytes); it goes with your next message"
    )


async def cmd_detach(chat: Chat, arg: str) -> bool:
    count = len(chat.images) + len(chat.files)
    chat.images, chat.files = [], []
    chat.say(f"Dropped {count} attachment{'s' if count != 1 else ''}.")
    return True


async def cmd_retry(chat: Chat, arg: str) -> bool:
    await chat.retry()
    return True


async def cmd_stop(chat: Chat, arg: str) -> bool:
    if chat.session is None:
        chat.say("Nothing is running.")
        return True
    stopped = await chat.remote.stop(chat.session["id"])
    chat.say("Stopped." if stopped else "Nothing is running.")
    return True


async def cmd_background(chat: Chat, arg: str) -> bool:
    if not arg:
        chat.error("/background needs the task: /background read these pages and compare them")
        return True
    session_id = await chat.ensure_session()
    job = await chat.remote.start_job(arg, session_id)
    chat.say(f"⏳ Background job {job['id'][:8]} “{job['title']}” started; its result will be posted here.")
    return True


async def cmd_research(chat: Chat, arg: str) -> bool:
    if not arg:
        chat.error("/research needs the question: /research which e-bikes under 2 kg … (URLs to start from)")
        return True
    session_id = await chat.ensure_session()
    job = await chat.remote.start_job(arg, session_id, mode="research")
    chat.say(f"🔎 Research {job['id'][:8]} “{job['title']}” started; its report will be posted here.")
    return True


async def cmd_jobs(chat: Chat, arg: str) -> bool:
    verb, _, ref = arg.partition(" ")
    listed = await chat.remote.jobs()
    if verb == "stop":
        matches = [j for j in listed if ref and str(j["id"]).startswith(ref.strip())]
        if len(matches) != 1:
            chat.error("/jobs stop needs the id of one of your jobs (or the start of it): /jobs lists them")
            return True
        stopped = await chat.remote.stop_job(str(matches[0]["id"]))
        chat.say(
            f"Job {stopped['id'][:8]}: {stopped['state']}"
            + (", stopping" if stopped["stop_requested"] else "")
        )
        return True
    if not listed:
        chat.say("No background jobs.")
        return True
    for job in listed[:20]:
        line = Text(f"{job['id'][:8]}  ", style="cyan")
        line.append(f"{job['state']:<8} {job['steps']:>3}/{job['max_steps']:<3} steps  ", style="dim")
        line.append(str(job["title"]))
        if job.get("error"):
            line.append(f"  ({job['error']})", style="yellow")
        chat.console.print(line)
    return True


async def cmd_help(chat: Chat, arg: str) -> bool:
    chat.console.print(Text(HELP))
    return True


async def cmd_quit(chat: Chat, arg: str) -> bool:
    return False


# What each command does, from HELP (for Tab's menu): "/open ID|N   open one" → {"open": "open one"}.
SUMMARIES = {
    line.split()[0][1:]: re.split(r"\s{2,}", line, maxsplit=1)[1]
    for line in HELP.splitlines()
    if line.startswith("/") and len(re.split(r"\s{2,}", line, maxsplit=1)) == 2
}


async def cmd_source(chat: Chat, arg: str) -> bool:
    """/source N: the passage of the Nth source the latest answer cites."""
    if not chat.sources:
        chat.error("the latest answer cites no document of this conversation")
        return True
    if not arg.isdigit() or not 1 <= int(arg) <= len(chat.sources):
        chat.error(f"/source needs a number from 1 to {len(chat.sources)}, as the Sources list shows")
        return True
    source = chat.sources[int(arg) - 1]
    text = await passage(chat.remote, source)
    chat.console.print(Text(source.citation, style="bold"))
    chat.console.print(Text(text))
    chat.console.print(Text(source.url, style=Style(link=source.url, dim=True)))
    return True


COMMANDS: dict[str, Handler] = {
    "new": cmd_new,
    "sessions": cmd_sessions,
    "search": finding.cmd_search,
    "open": cmd_open,
    "profile": cmd_profile,
    "rename": cmd_rename,
    "export": cmd_export,
    "load": archives.cmd_load,
    "facts": archives.cmd_facts,
    "judge": archives.cmd_judge,
    "attach": cmd_attach,
    "detach": cmd_detach,
    "source": cmd_source,
    "retry": cmd_retry,
    "edit": branching.cmd_edit,
    "regenerate": branching.cmd_regenerate,
    "continue": branching.cmd_continue,
    "branch": branching.cmd_branch,
    "stop": cmd_stop,
    "background": cmd_background,
    "research": cmd_research,
    "jobs": cmd_jobs,
    "help": cmd_help,
    "quit": cmd_quit,
    "exit": cmd_quit,
}


def as_path(text: str) -> Path:
    """A typed or pasted path; terminals paste dropped files as paths or file:// URIs."""
    if text.startswith("file://"):
        text = unquote(urlsplit(text).path)
    return Path(text).expanduser()


def pasted_paths(text: str) -> list[Path] | None:
    """The files a message consists of, when it is nothing but paths of existing files (a paste
    or a drop onto the terminal); None for a message to send."""
    if "\n" in text.strip() and not all(ln.strip() for ln in text.strip().splitlines()):
        return None
    try:
        words = shlex.split(text)
    except ValueError:
        return None
    if not words or len(words) > 20:
        return None
    paths = [as_path(w) for w in words]
    if all(
        (p.is_absolute() or w.startswith(("./", "~", "file://"))) and p.is_file()
        for p, w in zip(paths, words, strict=True)
    ):
        return paths
    return None


async def run_command(chat: Chat, line: str) -> bool:
    """Run a /command; False when it asks to quit."""
    name, _, arg = line[1:].strip().partition(" ")
    handler = COMMANDS.get(name.lower())
    if handler is None:
        chat.error(f"unknown command /{name} — /help lists them")
        return True
    try:
        return await handler(chat, arg.strip())
    except RemoteError as exc:
        chat.error(str(exc))
        return True
