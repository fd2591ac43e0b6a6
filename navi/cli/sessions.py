"""`navi sessions list|search|export|import|rename|move|rename-folder|archive|unarchive|delete`,
straight against the configured database.

They need no running Navi. A running one notices a rename or a deletion the next time it reads
the session (an open page keeps showing it until it reloads); to delete a conversation that is
answering right now, stop it first, or delete it in the web page.

Each acts on one user's sessions: the owner's (`local`) unless `--user NAME` names another —
someone `navi users add` made, or a name a proxy forwarded for that owns sessions or memory. Another
user's session is "no session" here too, as it is over HTTP.
"""

from __future__ import annotations

import gzip
import json
import os
import sys
import zlib
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from navi.cli.common import PLAIN_HELP, echo_list, fail, settings_or_exit
from navi.cli.stores import UserOption, known_user, with_runtime, with_stores

T = TypeVar("T")
app = typer.Typer(
    help="List, search, export, import, rename, file, archive and delete sessions.",
    no_args_is_help=True,
    rich_markup_mode=PLAIN_HELP,
)


@app.command("list")
def list_sessions(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    archived: Annotated[bool, typer.Option("--archived", help="Only the archived sessions.")] = False,
    user: UserOption = "local",
) -> None:
    """Sessions, pinned first, then most recently active (archived ones with --archived only;
    temporary chats never)."""

    async def work(rt: Any) -> list[Any]:
        found = await rt.sessions.list(owner=await known_user(rt, user))
        return [s for s in found if s.archived == archived and not s.temporary]

    def line(info: Any) -> str:
        pin = "*" if info.pinned else " "
        when = info.last_active.strftime("%Y-%m-%d %H:%M")
        return (
            f"{pin} {info.id}  {when}  {info.message_count:>5} msgs  {info.profile_id:<13} {info.name or ''}"
            + (f"  [{info.folder}]" if info.folder else "")
        )

    echo_list(with_stores(work), as_json=as_json, empty="No sessions yet.", line=line)


def _day(value: str | None, option: str) -> Any:
    from datetime import date

    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        fail(f"{option} takes a day as YYYY-MM-DD, not {value[:40]!r}", 1)


@app.command("search")
def search(
    query: Annotated[str, typer.Argument(metavar="QUERY", help="Words, all of which a message must have.")],
    since: Annotated[
        str | None, typer.Option("--from", metavar="YYYY-MM-DD", help="Messages on or after this day (UTC).")
    ] = None,
    until: Annotated[
        str | None, typer.Option("--to", metavar="YYYY-MM-DD", help="Messages on or before this day (UTC).")
    ] = None,
    profile: Annotated[
        str | None, typer.Option("--profile", metavar="ID", help="Only sessions in this profile.")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=100, help="At most this many messages.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    user: UserOption = "local",
) -> None:
    """Messages of all sessions with every word of QUERY, best first: each with its session's name,
    its date and a passage (matched words between ** **). The last word also matches the start of
    a word; quotes and other signs are just separators."""
    from datetime import UTC, date, datetime, time, timedelta

    from navi.sessions.search import SearchQuery, marked, terms

    first, last = _day(since, "--from"), _day(until, "--to")
    if first and last and first > last:
        fail("--from is after --to", 1)
    words = terms(query)
    if not words:
        fail("QUERY has no words to search for (letters or digits)", 1)
    ask = SearchQuery(
        words,
        since=datetime.combine(first, time(), tzinfo=UTC) if first else None,
        until=datetime.combine(last + timedelta(days=1), time(), tzinfo=UTC)
        if last and last < date.max
        else None,
        profile=profile,
        limit=limit,
    )

    async def work(rt: Any) -> list[Any]:
        return list(await rt.sessions.search(ask, owner=await known_user(rt, user)))

    def line(hit: Any) -> str:
        when = hit.created_at.strftime("%Y-%m-%d %H:%M")
        return f"{when}  {hit.session_name or '(untitled)'}  [{hit.session_id}]\n    {marked(hit)}"

    echo_list(with_stores(work), as_json=as_json, empty="No message has all of those words.", line=line)


@app.command("export")
def export(
    session_id: Annotated[
        str, typer.Argument(metavar="ID", help="The session's id (see `navi sessions list`).")
    ],
    output: Annotated[
        Path | None,
        typer.Option("-o", "--output", help="File to write, gzipped when it ends in .gz (default: stdout)."),
    ] = None,
    summary: Annotated[
        bool, typer.Option("--summary", help="Summarise the conversation through the model first.")
    ] = False,
    focus: Annotated[
        str | None, typer.Option("--focus", metavar="TEXT", help="What the --summary gives most room to.")
    ] = None,
    assessment: Annotated[
        bool, typer.Option("--assessment", help="Judge the conversation's quality through the model first.")
    ] = False,
    criteria: Annotated[
        list[str] | None,
        typer.Option(
            "--criteria", metavar="A,B", help="What --assessment judges (repeat it, or separate with commas)."
        ),
    ] = None,
    facts: Annotated[
        bool,
        typer.Option("--facts", help="Extract facts (subject, predicate, object) through the model first."),
    ] = False,
    user: UserOption = "local",
) -> None:
    """Write a session as session-archive/v1 JSON, with analytics generated first if asked."""
    from navi.agent.analysis import AnalysisAsk, NothingToAnalyse
    from navi.llm.errors import LLMError

    focus = " ".join((focus or "").split()) or None
    wanted = tuple(dict.fromkeys(c.strip() for item in criteria or () for c in item.split(",") if c.strip()))
    if focus and not summary:
        fail("--focus steers the summary: add --summary", 1)
    if wanted and not assessment:
        fail("--criteria steer the assessment: add --assessment", 1)
    if any(len(c) > 100 for c in wanted) or len(wanted) > 12 or len(focus or "") > 500:
        fail("at most 12 criteria of 100 characters, and a focus of 500", 1)
    ask = AnalysisAsk(summary=summary, focus=focus, assessment=assessment, criteria=wanted, facts=facts)
    if output is not None:
        from navi.compose.parts import secret_named

        own = secret_named(settings_or_exit(), output)
        if own is not None:  # the database above all: writing over it would destroy it
            fail(f"cannot write {output}: it is Navi's own file {own} — give another file", 1)

    async def work(rt: Any) -> dict[str, Any] | None:
        session = await rt.sessions.get(session_id, owner=await known_user(rt, user))
        if session is None:
            return None
        if ask.parts:
            await rt.analyse(session, ask)  # stored with the session, and in `session` for the export
        return await rt.export_archive(session)

    try:
        data = with_runtime(work, writes=bool(ask.parts))
    except (LLMError, NothingToAnalyse) as exc:
        fail(f"no {' and '.join(ask.parts)} written: {exc}", 1)
    if data is None:
        fail(f"no session '{session_id}' — `navi sessions list` shows them", 1)
    text = json.dumps(data, indent=2, ensure_ascii=False)
    if output is None:
        typer.echo(text)
    else:
        body = (text + "\n").encode("utf-8")
        try:
            write_private(output, gzip.compress(body, mtime=0) if gzipped(output) else body)
        except OSError as exc:
            typer.echo(f"navi: cannot write {output}: {exc.strerror or exc}", err=True)
            raise typer.Exit(1) from None
        typer.echo(f"wrote {output} ({len(data['messages'])} messages)")


def gzipped(path: Path | str) -> bool:
    """Whether an archive's file is gzip-compressed: its name says so (`.gz`, as `.json.gz`)."""
    return str(path).lower().endswith(".gz")


def write_private(path: Path, data: bytes) -> None:
    """Write `data` to a file only its owner can read (0600, whatever the umask), also when it
    replaces an existing file: an archive holds a whole conversation."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        os.fchmod(fd, 0o600)
        out.write(data)


def read_capped(source: str, cap: int) -> bytes:
    """Up to `cap + 1` bytes of the archive `source` (`-`: stdin), uncompressed when its name ends
    in `.gz`: the cap counts what the archive unpacks to, so a small bomb stays small."""
    if source == "-":
        return sys.stdin.buffer.read(cap + 1)  # never more than the cap, whatever is piped in
    with Path(source).open("rb") as fh:
        if not gzipped(source):
            return fh.read(cap + 1)
        try:
            with gzip.GzipFile(fileobj=fh) as unpacked:
                return unpacked.read(cap + 1)
        except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
            fail(f"{source} is not a readable gzip file ({exc}) — a name ending in .gz is read as gzip")


class ExportKind(StrEnum):
    chatgpt = "chatgpt"
    claude = "claude"


@app.command("import")
def import_(
    source: Annotated[
        str, typer.Argument(metavar="FILE", help="Archive file (gzip when it ends in .gz), or - for stdin.")
    ],
    origin: Annotated[
        ExportKind | None,
        typer.Option(
            "--from",
            help="FILE is a ChatGPT or Claude data export (the .zip the service sends, or its "
            "conversations.json): each conversation becomes a session (again: nothing is added).",
        ),
    ] = None,
    user: UserOption = "local",
) -> None:
    """Read a session-archive/v1 file into a new session (the user's) and print its id; with
    --from, bring in a ChatGPT or Claude export."""
    from navi.sessions.archive import ArchiveError, parse_archive, settle_profile

    if origin is not None:
        bring_in_export(source, origin.value, user)
        return
    settings = settings_or_exit()
    cap = settings.navi_import_max_bytes
    too_big = f"navi: {source} is larger than the {settings.navi_import_max_mb} MB limit (NAVI_IMPORT_MAX_MB)"
    try:
        data = read_capped(source, cap)
        if len(data) > cap:
            typer.echo(too_big, err=True)
            raise typer.Exit(1)
        # Parsed before any database is opened or created: there is no event loop yet to block.
        session = parse_archive(data, max_messages=settings.navi_import_max_messages)
    except OSError as exc:
        typer.echo(
            f"navi: cannot read {source}: {exc.strerror or exc} — give an archive file, or - for stdin",
            err=True,
        )
        raise typer.Exit(1) from None
    except ArchiveError as exc:
        typer.echo(f"navi: {exc}", err=True)
        raise typer.Exit(1) from None

    async def work(rt: Any) -> None:
        session.owner = await known_user(rt, user)
        settle_profile(session, rt.profiles.ids(), rt.profiles.default_id)
        await rt.sessions.insert(session)

    with_stores(work, writes=True)
    typer.echo(f"imported {session.id} ({len(session.messages)} messages)")


def bring_in_export(source: str, origin: str, user: str) -> None:
    """`navi sessions import --from chatgpt|claude FILE` (the export's zip, or its
    conversations.json): the whole file checked first, then each conversation stored as a session
    unless an earlier import stored it."""
    from navi.sessions.archive import ArchiveError
    from navi.sessions.foreign import NAMES, bring_in, parse_export

    settings = settings_or_exit()
    cap = settings.navi_import_max_bytes
    try:
        data = read_capped(source, cap)
        if len(data) > cap:
            fail(
                f"{source} is larger than the {settings.navi_import_max_mb} MB limit (NAVI_IMPORT_MAX_MB)", 1
            )
        conversations = parse_export(
            origin,
            data,
            max_messages=settings.navi_import_max_messages,
            max_file_messages=settings.navi_import_max_file_messages,
            max_bytes=cap,
        )
    except OSError as exc:
        fail(f"cannot read {source}: {exc.strerror or exc}", 1)
    except ArchiveError as exc:
        fail(f"{source}: {exc}", 1)

    async def work(rt: Any) -> Any:
        owner = await known_user(rt, user)
        return await bring_in(rt.sessions, conversations, owner=owner, profile_id=rt.profiles.default_id)

    report = with_stores(work, writes=True)
    count = sum(len(s.messages) for s in report.imported)
    for session in report.imported:
        typer.echo(f"{session.id}  {len(session.messages):>5} msgs  {session.name or ''}")
    typer.echo(
        f"imported {len(report.imported)} conversations from {NAMES[origin]} ({count} messages); "
        f"{len(report.skipped)} already there"
    )


IdArgument = Annotated[str, typer.Argument(metavar="ID", help="The session's id (see `navi sessions list`).")]


@app.command()
def rename(
    session_id: IdArgument,
    name: Annotated[str, typer.Argument(metavar="NAME", help="The new name; an empty one clears it.")],
    user: UserOption = "local",
) -> None:
    """Give a session a name (shown in the list, the web page and `navi chat`)."""
    clean = " ".join(name.split()) or None

    async def work(rt: Any) -> bool:
        return bool(await rt.sessions.set_name(session_id, clean, owner=await known_user(rt, user)))

    if not with_stores(work):
        fail(f"no session '{session_id}' — `navi sessions list` shows them", 1)
    typer.echo(f"renamed {session_id}: {clean}" if clean else f"cleared the name of {session_id}")


def _place(session_id: str, user: str, done: str, **where: Any) -> None:
    async def work(rt: Any) -> bool:
        return bool(await rt.sessions.set_place(session_id, owner=await known_user(rt, user), **where))

    if not with_stores(work):
        fail(f"no session '{session_id}' — `navi sessions list` shows them", 1)
    typer.echo(done)


@app.command()
def move(
    session_id: IdArgument,
    folder: Annotated[
        str, typer.Argument(metavar="FOLDER", help="The folder's name; an empty one: out of any.")
    ],
    user: UserOption = "local",
) -> None:
    """Put a session in a folder (the web page shows it there)."""
    name = " ".join(folder.split())[:100] or None
    _place(
        session_id,
        user,
        f"moved {session_id} to {name}" if name else f"{session_id} is in no folder",
        folder=name,
    )


@app.command("rename-folder")
def rename_folder(
    folder: Annotated[str, typer.Argument(metavar="FOLDER", help="The folder's name now.")],
    to: Annotated[str, typer.Argument(metavar="NEW", help="Its new name (an existing folder's: merged).")],
    user: UserOption = "local",
) -> None:
    """Rename a folder: every session in it moves to the new name, archived ones too."""
    old, new = " ".join(folder.split()), " ".join(to.split())[:100]
    if not old or not new:
        fail("FOLDER and NEW need a letter, a digit or a sign, not only spaces", 1)

    async def work(rt: Any) -> int:
        return len(await rt.sessions.rename_folder(old, new, owner=await known_user(rt, user)))

    moved = with_stores(work)
    if not moved:
        fail(f"no session is in a folder '{old}' — `navi sessions list` shows the folders", 1)
    typer.echo(f"renamed {old} to {new}: {moved} session(s)")


@app.command()
def archive(session_id: IdArgument, user: UserOption = "local") -> None:
    """Archive a session: out of the list (`list --archived` shows it) until `unarchive`."""
    _place(session_id, user, f"archived {session_id}", archived=True)


@app.command()
def unarchive(session_id: IdArgument, user: UserOption = "local") -> None:
    """Bring an archived session back to the list."""
    _place(session_id, user, f"brought {session_id} back", archived=False)


@app.command()
def delete(
    session_ids: Annotated[list[str], typer.Argument(metavar="ID...", help="Sessions to delete.")],
    user: UserOption = "local",
) -> None:
    """Delete sessions with their messages and uploaded files. There is no undo: export first."""

    async def work(rt: Any) -> list[str]:
        owner = await known_user(rt, user)
        return [sid for sid in session_ids if not await rt.sessions.delete(sid, owner=owner)]

    missing = with_stores(work)
    for sid in session_ids:
        if sid not in missing:
            typer.echo(f"deleted {sid}")
    if missing:
        fail(f"no session {', '.join(repr(m) for m in missing)} — `navi sessions list` shows them", 1)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="sessions")
