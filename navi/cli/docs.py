"""`navi docs add|list|search|rm|collections|attach|detach`: your documents, straight from the database.

The owner's documents (`local`) unless `--user NAME` names another user's (docs/documents.md).

**Indexing.** `navi docs add` stores each file (a folder: its files, recursively, hidden files
and folders skipped) in a collection (`--collection NAME`, made when missing; by default
"Documents") and queues it. Then:

- when a Navi server answers on this machine (`NAVI_HOST:NAVI_PORT`), its indexer reads them in
  the background (`navi docs list` shows their state);
- otherwise they are read right here, before the command ends, with a line per document;
- `--queue` only queues (a server started later indexes them), `--now` reads them here even
  while a server runs (each document is still read once: whoever claims it first reads it).

Reading here claims queued documents oldest first, so documents queued earlier (by anyone) are
read before the new ones.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from navi.cli.common import PLAIN_HELP, echo_list, fail
from navi.cli.docs_watch import watch
from navi.cli.stores import UserOption, known_user, with_stores

app = typer.Typer(
    help="Your documents: add, list, search, remove.", no_args_is_help=True, rich_markup_mode=PLAIN_HELP
)
DEFAULT_COLLECTION = "Documents"
CollectionOption = Annotated[
    str | None, typer.Option("--collection", "-c", metavar="NAME", help="The collection, by name.")
]


@dataclass
class Candidate:
    path: Path
    name: str  # the document's name in its collection: the path below the folder given
    problem: str | None = None


def gather(paths: list[Path], max_bytes: int) -> list[Candidate]:
    """The files to add: each file given, and each folder's files (recursively, no hidden ones,
    no links out of it, only document kinds Navi reads). A file given by name that cannot be
    read is listed with its problem; a folder's file of another kind is left out silently."""
    from navi.api.document_files import DOCUMENT_EXTENSIONS
    from navi.documents.extract.sniff import extension

    found: list[Candidate] = []
    for given in paths:
        if given.is_dir():
            root = given.resolve()
            for path in sorted(root.rglob("*")):
                rel = path.relative_to(root)
                if any(part.startswith(".") for part in rel.parts) or not path.is_file():
                    continue
                if path.is_symlink() and not path.resolve().is_relative_to(root):
                    continue
                if extension(path.name) not in DOCUMENT_EXTENSIONS:
                    continue
                found.append(_candidate(path, f"{given.name}/{rel.as_posix()}", max_bytes))
        elif given.is_file():
            found.append(_candidate(given, given.name, max_bytes))
        else:
            found.append(Candidate(given, given.name, "no such file or folder"))
    return found


def _candidate(path: Path, name: str, max_bytes: int) -> Candidate:
    try:
        size = path.stat().st_size
    except OSError as exc:
        return Candidate(path, name, exc.strerror or str(exc))
    if size > max_bytes:
        return Candidate(path, name, f"{size / 2**20:,.0f} MB is over DOCUMENTS_MAX_BYTES")
    return Candidate(path, name)


async def _collection(rt: Any, owner: str, name: str | None, *, make: bool) -> Any:
    """The owner's collection named `name` (the default one when None); made when missing and
    `make`, else None."""
    wanted = (name or DEFAULT_COLLECTION).strip()
    for c in await rt.documents.list_collections(owner):
        if c.name == wanted:
            return c
    if not make:
        return None
    return await rt.documents.create_collection(owner, wanted)


def _server_running(settings: Any) -> str | None:
    """The address of a Navi server answering on this machine (`NAVI_HOST:NAVI_PORT`), if one does."""
    import httpx

    host = settings.navi_host
    host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    url = f"http://{f'[{host}]' if ':' in host else host}:{settings.navi_port}"
    try:
        answer = httpx.get(f"{url}/health", timeout=0.5)
    except httpx.HTTPError:
        return None
    return url if answer.status_code == 200 and answer.json().get("status") == "ok" else None


def _no_store(rt: Any) -> None:
    if rt.documents is None:
        fail("documents need Navi's database (DB_PATH or DATABASE_URL)", 1)


@app.command()
def add(
    paths: Annotated[list[Path], typer.Argument(metavar="PATH...", help="Files or folders.")],
    collection: CollectionOption = None,
    queue: Annotated[bool, typer.Option("--queue", help="Only queue; a running Navi reads them.")] = False,
    now: Annotated[bool, typer.Option("--now", help="Read them here even while a Navi server runs.")] = False,
    user: UserOption = "local",
) -> None:
    """Add documents to a collection and index them (see `navi docs --help`)."""
    from navi.cli.common import settings_or_exit

    if queue and now:
        fail("--queue and --now contradict each other")
    settings = settings_or_exit()
    candidates = gather(paths, settings.documents_max_bytes)
    if not candidates:
        fail(
            "no documents there (Navi reads PDF, Office, OpenDocument, EPUB, HTML, Markdown, text, CSV, "
            "e-mail)",
            1,
        )
    server = None if (queue or now) else _server_running(settings)
    here = not queue and server is None

    async def work(rt: Any) -> int:
        _no_store(rt)
        owner = await known_user(rt, user)
        shelf = await _collection(rt, owner, collection, make=True)
        added, problems = [], 0
        for c in candidates:
            if c.problem:
                typer.echo(f"navi: skipped {c.path}: {c.problem}", err=True)
                problems += 1
                continue
            data = await asyncio.to_thread(c.path.read_bytes)
            document = await rt.documents.add_document(owner, shelf.id, c.name, data=data)
            added.append(document)
            typer.echo(f"Added {document.id}  {c.name} → {shelf.name}")
        if not added:
            return problems
        if not here:
            where = (
                f"the Navi server at {server} reads them"
                if server
                else "a Navi server reads them when it runs"
            )
            typer.echo(f"Queued {len(added)}; {where} (`navi docs list` shows how far).")
            return problems
        why = "--now" if now else "no Navi server is running"
        typer.echo(f"Reading {len(added)} here ({why})…")
        return problems + await _index_here(rt, owner, {d.id for d in added})

    failures = with_stores(work, writes=True)
    if failures:
        raise typer.Exit(1)


async def _index_here(rt: Any, owner: str, ids: set[str]) -> int:
    """Index queued documents in this process until every one of `ids` is done; the failures."""
    from navi.documents.indexer import Indexer, Outcome
    from navi.runs.leases import worker_name

    failed = 0

    def said(outcome: Outcome) -> None:
        nonlocal failed
        d = outcome.document
        if outcome.state == "ready":
            typer.echo(f"  ready   {d.name}  ({outcome.chunks} passages)")
        elif outcome.state == "failed":
            failed += d.id in ids
            typer.echo(f"  failed  {d.name}: {outcome.reason}")

    indexer = Indexer(rt.documents, rt.embedder, rt.document_settings.limits, worker_name())
    indexer.on_done = said
    waiting = set(ids)
    while waiting:
        outcome = await indexer.index_next()
        if outcome is not None:
            waiting.discard(outcome.document.id)
            continue
        # None queued: the rest are being read by another process (or were deleted meanwhile).
        states = {i: await rt.documents.get_document(owner, i) for i in waiting}
        waiting = {i for i, d in states.items() if d is not None and d.state in ("queued", "indexing")}
        if waiting:
            await asyncio.sleep(0.5)
    return failed


def _collection_names(collections: list[Any]) -> dict[str, str]:
    return {c.id: c.name for c in collections}


@app.command("list")
def list_documents(
    collection: CollectionOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    user: UserOption = "local",
) -> None:
    """Documents with their state (queued, indexing, ready, failed), pages, passages and error."""

    async def work(rt: Any) -> tuple[list[Any], dict[str, str]]:
        if rt.documents is None:
            return [], {}
        owner = await known_user(rt, user)
        names = _collection_names(await rt.documents.list_collections(owner))
        shelf = None
        if collection is not None:
            shelf = await _collection(rt, owner, collection, make=False)
            if shelf is None:
                fail(f"no collection '{collection}' — `navi docs collections` shows them", 1)
        return await rt.documents.list_documents(owner, shelf.id if shelf else None), names

    documents, names = with_stores(work)

    def line(d: Any) -> str:
        state = f"{d.state} {d.progress:.0%}" if d.state == "indexing" else d.state
        counts = f"{d.pages:>5} pp {d.chunks:>6} passages" if d.state == "ready" else " " * 24
        error = f"  — {d.error}" if d.error else ""
        if d.warnings:
            more = f" (+{len(d.warnings) - 1} more)" if len(d.warnings) > 1 else ""
            error += f"  ⚠ {d.warnings[0]}{more}"
        return f"{d.id}  {state:<13} {counts}  {names.get(d.collection_id, '?')}: {d.name}{error}"

    echo_list(documents, as_json=as_json, empty="No documents yet.", line=line, record=_record)


def _record(d: Any) -> Any:
    from navi.api.routes.documents import DocumentOut

    return DocumentOut.of(d)


@app.command()
def search(
    query: Annotated[str, typer.Argument(metavar="QUERY", help="What to look for.")],
    collection: CollectionOption = None,
    limit: Annotated[int, typer.Option(min=1, max=100, help="At most this many passages.")] = 5,
    user: UserOption = "local",
) -> None:
    """The passages that best match QUERY, each with its citation ("contract.pdf, p. 3")."""
    from navi.api.routes.documents import query_vector

    async def work(rt: Any) -> list[Any]:
        if rt.documents is None:
            return []
        owner = await known_user(rt, user)
        scope = None
        if collection is not None:
            shelf = await _collection(rt, owner, collection, make=False)
            if shelf is None:
                fail(f"no collection '{collection}' — `navi docs collections` shows them", 1)
            scope = [shelf.id]
        vector, model = await query_vector(rt.embedder, query)
        return list(
            await rt.documents.search(
                owner, query, collections=scope, limit=limit, query_vector=vector, embedder=model
            )
        )

    hits = with_stores(work)
    if not hits:
        typer.echo(f"No passage matches '{query}'.")
        return
    for n, hit in enumerate(hits, 1):
        text = " ".join(hit.text.split())
        typer.echo(f"{n}. {hit.citation()}  [{hit.document_id}]")
        typer.echo(f"   {text[:300]}{'…' if len(text) > 300 else ''}")


@app.command()
def rm(
    document_id: Annotated[str, typer.Argument(metavar="ID", help="The document's id (`navi docs list`).")],
    user: UserOption = "local",
) -> None:
    """Remove a document and its passages."""

    async def work(rt: Any) -> Any:
        if rt.documents is None:
            return None
        owner = await known_user(rt, user)
        document = await rt.documents.get_document(owner, document_id)
        if document is not None and await rt.documents.delete_document(owner, document_id):
            return document
        return None

    gone = with_stores(work)
    if gone is None:
        fail(f"no document '{document_id}' — `navi docs list` shows them", 1)
    typer.echo(f"Removed {gone.name}.")


@app.command()
def collections(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    user: UserOption = "local",
) -> None:
    """Collections, with how many documents each holds."""

    async def work(rt: Any) -> list[Any]:
        if rt.documents is None:
            return []
        return list(await rt.documents.list_collections(await known_user(rt, user)))

    def line(c: Any) -> str:
        what = {"session": "a conversation's", "folder": f"folder {c.path}"}.get(c.kind, "")
        profiles = f"  [profiles: {', '.join(c.profiles)}]" if c.profiles else ""
        return f"{c.id}  {c.documents:>6} docs  {c.name}{f'  ({what})' if what else ''}{profiles}"

    def record(c: Any) -> Any:
        from navi.api.routes.documents import CollectionOut

        return CollectionOut.of(c)

    echo_list(with_stores(work), as_json=as_json, empty="No collections yet.", line=line, record=record)


ProfileOption = Annotated[
    str, typer.Option("--profile", "-p", metavar="ID", help="The profile (`navi config` lists them).")
]


def _attach_profile(collection: str, profile: str, user: str, *, attach: bool) -> None:
    async def work(rt: Any) -> str | None:
        _no_store(rt)
        if profile not in rt.profiles:
            return f"no profile '{profile}'; the profiles: {', '.join(rt.profiles.ids())}"
        owner = await known_user(rt, user)
        found = await _collection(rt, owner, collection, make=False)
        if found is None:
            return f"no collection '{collection}' — `navi docs collections` lists them"
        if attach:
            await rt.documents.attach_profile(owner, profile, found.id)
        elif not await rt.documents.detach_profile(owner, profile, found.id):
            return f"'{collection}' is not attached to profile '{profile}'"
        return None

    problem = with_stores(work)
    if problem:
        fail(problem, 1)
    if attach:
        typer.echo(f"Every conversation with profile '{profile}' reads '{collection}' now.")
    else:
        typer.echo(f"Conversations with profile '{profile}' no longer read '{collection}'.")


@app.command()
def attach(
    collection: Annotated[str, typer.Argument(metavar="COLLECTION", help="The collection, by name.")],
    profile: ProfileOption,
    user: UserOption = "local",
) -> None:
    """Attach a collection to a profile: every conversation with that profile reads it."""
    _attach_profile(collection, profile, user, attach=True)


@app.command()
def detach(
    collection: Annotated[str, typer.Argument(metavar="COLLECTION", help="The collection, by name.")],
    profile: ProfileOption,
    user: UserOption = "local",
) -> None:
    """Detach a collection from a profile."""
    _attach_profile(collection, profile, user, attach=False)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="docs")


app.command("watch")(watch)  # navi/cli/docs_watch.py: a folder scanned, then followed
