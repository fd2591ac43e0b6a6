"""Navi as an MCP server: other agents and desktop clients delegate to Navi through four tools.

- `ask` runs one Navi turn through the normal agent loop (tools, memory, planning, naming), like a
  page's message, and returns the answer with the session id: without a session id a new session
  is made, with one that session goes on.
- `list_sessions` lists the user's sessions; `search_memory` searches the user's remembered facts;
  `search_documents` searches the documents the user gave Navi, each passage with its citation.

The tools are defined once (`build_server`) and served two ways: over stdio by `navi mcp`
(`serve_stdio`: the runtime built in-process, acting as the owner), and as streamable HTTP at
`/mcp` in Navi's own app (`mount_http`), behind the access control every route has, each call
acting as the user of the request that carried it. The tools act through a `NaviHost` that the
server's lifespan yields: the runtime, the run manager and the approvals setting.

A turn asked for here is unattended, as through the OpenAI-compatible API: nobody can answer an
approval, so calls that need one are denied at once (`NAVI_MCP_APPROVALS=allow` runs them) and the
answer ends with a note saying so. A caller that cancels its request stops the turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from navi import __version__
from navi.agent.turns import TurnOptions
from navi.api.identity import USER_KEY
from navi.api.turns import Answer, new_session, wait_for
from navi.compose import Runtime
from navi.jobs.models import ACTIVE, JobLimit
from navi.jobs.service import JobError
from navi.mcp.task_store import TaskStore
from navi.mcp.tasks import TasksServer
from navi.profiles.registry import UnknownProfile
from navi.runctx import Unattended
from navi.runs import RunActive, RunManager
from navi.sessions.models import Session, is_session_id

# Run as tasks (io.modelcontextprotocol/tasks) for clients that can poll.
LONG_TOOLS = ("ask", "background_job")
JOB_POLL = 1.0  # seconds between looks at a running job
APPROVALS_SETTING = "NAVI_MCP_APPROVALS"  # named in the note about denied calls
INSTRUCTIONS = (
    "Navi is the user's own AI agent: it has tools (web, files, shell, SSH, code, HTTP APIs), "
    "remembers the user across sessions and keeps long conversations. Use `ask` to delegate a task "
    "or a question to it; pass the returned session_id to continue the same conversation."
)
Lifespan = Callable[[MCPServer[Any]], AbstractAsyncContextManager["NaviHost"]]


@dataclass(frozen=True)
class NaviHost:
    """What the tools act through. `user` is who every call acts as (stdio: the owner); None means
    the user of each call's HTTP request, as Navi's access control resolved it."""

    runtime: Runtime
    runs: RunManager
    approvals: Unattended
    max_message_bytes: int
    user: str | None = None


class AskResult(BaseModel):
    answer: str = Field(description="Navi's answer (with a note when tool calls were denied)")
    session_id: str = Field(description="The session that holds the conversation: pass it to go on")
    stopped: bool = Field(False, description="The turn was stopped before it finished")


class SessionItem(BaseModel):
    id: str
    name: str | None = Field(description="The session's title (named after its first exchange)")
    profile: str
    updated: datetime = Field(description="When the session was last active (UTC)")
    message_count: int


class SessionList(BaseModel):
    sessions: list[SessionItem]


class FactItem(BaseModel):
    id: int
    category: str
    key: str
    value: str
    updated: datetime


class FactList(BaseModel):
    facts: list[FactItem]


class PassageItem(BaseModel):
    citation: str = Field(description='Where the passage is: "contract.pdf, p. 12, § 9 Termination"')
    text: str
    document: str = Field(description="The document's name")
    document_id: str
    collection_id: str
    page: int | None = Field(None, description="The PDF page (1-based), when it has one")
    chunk_id: int
    score: float


class PassageList(BaseModel):
    passages: list[PassageItem]


def _host(ctx: Context) -> NaviHost:
    host = ctx.request_context.lifespan_context
    if not isinstance(host, NaviHost):  # a server built without Navi's lifespan: a bug
        raise ToolError("Navi is not running")
    return host


def _user(ctx: Context, host: NaviHost) -> str:
    """Who this call acts as: the host's user, or the one access control put on its request."""
    if host.user is not None:
        return host.user
    scope = getattr(ctx.request_context.request, "scope", None) or {}
    user = scope.get(USER_KEY)
    if not isinstance(user, str) or not user:  # access control always sets it: never guess one
        raise ToolError("this request has no user")
    return user


async def _session(host: NaviHost, user: str, session_id: str) -> Session:
    session = (
        await host.runtime.sessions.get(session_id, owner=user, display=False)
        if is_session_id(session_id)
        else None
    )
    if session is None:  # another user's session is as unknown as one that does not exist
        raise ToolError(f"no session '{session_id}': list_sessions shows yours")
    return session


async def ask(
    ctx: Context,
    message: Annotated[str, Field(description="What to ask or tell Navi", min_length=1)],
    session_id: Annotated[
        str | None, Field(description="Continue this session (from an earlier ask or list_sessions)")
    ] = None,
    profile: Annotated[
        str | None,
        Field(
            description="Profile that answers (secretary, server_admin, smart_home, …); default: "
            "a new session's default profile, or the session's own"
        ),
    ] = None,
) -> AskResult:
    """Run one Navi turn and return its answer and the session id."""
    host = _host(ctx)
    user = _user(ctx, host)
    runtime = host.runtime
    if not message.strip():
        raise ToolError("message is empty: say what Navi should do")
    if len(message.encode("utf-8", "surrogatepass")) > host.max_message_bytes:
        raise ToolError(f"message is longer than {host.max_message_bytes:,} bytes")
    if profile is not None and profile not in runtime.profiles:
        raise ToolError(f"no profile '{profile}': Navi's profiles are {', '.join(runtime.profiles.ids())}")
    if session_id is not None:
        session = await _session(host, user, session_id)
        if await host.runs.slots.busy(session.id, answering=True):
            raise ToolError(str(RunActive(session.id)))
        if profile is not None and profile != session.profile_id:
            await runtime.sessions.set_profile(session.id, profile)  # as choosing it on the page
    else:
        session = await new_session(runtime, profile or runtime.profiles.default_id, user)
    try:
        run = await host.runs.start(
            session.id, message, TurnOptions(unattended=host.approvals, purpose="api")
        )
    except RunActive as exc:
        raise ToolError(str(exc)) from None
    answer = Answer(setting=APPROVALS_SETTING, surface="MCP")
    try:
        await wait_for(host.runs, run, answer)
    except asyncio.CancelledError:
        run.stop_event.set()  # the caller gave up on the answer: stop the turn; it saves what it has
        raise
    if answer.error is not None or not answer.done:
        code, text = answer.failure()
        raise ToolError(f"{text} ({code}; session {session.id})")
    return AskResult(answer=answer.text, session_id=session.id, stopped=answer.stopped)


class JobOutcome(BaseModel):
    job_id: str
    session_id: str = Field(description="The job's own session: its steps and its answer")
    state: str = Field(description="done, failed or stopped")
    result: str | None = Field(None, description="The job's answer (a research: its report)")
    error: str | None = None


async def background_job(
    ctx: Context,
    prompt: Annotated[str, Field(description="The whole task, as you would say it to Navi", min_length=1)],
    mode: Annotated[
        Literal["task", "research"],
        Field(
            description="task: the agent works on it with its tools; research: a report citing what it read"
        ),
    ] = "task",
    title: Annotated[str | None, Field(description="A short title for the job", max_length=200)] = None,
) -> JobOutcome:
    """Run a Navi background job (docs/jobs.md) to its end and return its result. It can take
    minutes: a client that declares MCP Tasks gets a task to poll instead of waiting in the call."""
    host = _host(ctx)
    user = _user(ctx, host)
    jobs = host.runtime.jobs
    if jobs is None:
        raise ToolError("background jobs are not available in this Navi")
    try:
        job = await jobs.start(user, prompt, title=title, mode=mode)
    except (JobError, JobLimit, UnknownProfile) as exc:
        raise ToolError(str(exc)) from None
    try:
        while job.state in ACTIVE:  # any worker's job runner on this database takes it
            await asyncio.sleep(JOB_POLL)
            job = await jobs.store.get(job.id, owner=user) or job
    except asyncio.CancelledError:  # the call or the task was cancelled: so is the job
        with contextlib.suppress(Exception):
            await asyncio.shield(jobs.store.request_stop(job.id, user))
        raise
    return JobOutcome(
        job_id=job.id, session_id=job.session_id, state=job.state, result=job.result, error=job.error
    )


async def list_sessions(
    ctx: Context,
    limit: Annotated[int, Field(description="At most this many", ge=1, le=1000)] = 50,
) -> SessionList:
    """The user's sessions, pinned first, then the most recently active (temporary chats never)."""
    host = _host(ctx)
    infos = [i for i in await host.runtime.sessions.list(owner=_user(ctx, host)) if not i.temporary]
    return SessionList(
        sessions=[
            SessionItem(
                id=i.id,
                name=i.name,
                profile=i.profile_id,
                updated=i.last_active,
                message_count=i.message_count,
            )
            for i in infos[:limit]
        ]
    )


async def search_memory(
    ctx: Context,
    query: Annotated[str, Field(description="Search words (any may match)", min_length=1, max_length=500)],
    limit: Annotated[int, Field(description="At most this many", ge=1, le=200)] = 15,
) -> FactList:
    """Facts Navi remembers about the user that match the query, best first."""
    host = _host(ctx)
    facts = await host.runtime.memory.search_facts(query, owner=_user(ctx, host), limit=limit)
    return FactList(
        facts=[
            FactItem(id=f.id, category=f.category, key=f.key, value=f.value, updated=f.updated_at)
            for f in facts
        ]
    )


async def search_documents(
    ctx: Context,
    query: Annotated[
        str, Field(description="What to look for (words or a question)", min_length=1, max_length=500)
    ],
    collection: Annotated[str | None, Field(description="Only this collection (its name or id)")] = None,
    document: Annotated[str | None, Field(description="Only this document (its name or id)")] = None,
    limit: Annotated[int, Field(description="At most this many", ge=1, le=50)] = 5,
) -> PassageList:
    """Passages of the user's documents that match the query, best first, each with its citation."""
    host = _host(ctx)
    user = _user(ctx, host)
    retrieval = host.runtime.retrieval
    if retrieval is None:
        raise ToolError("this Navi keeps no documents (it runs without a database)")
    collections = documents = None
    if collection is not None:
        found = await retrieval.collection(user, collection)
        if found is None:  # another user's collection is as unknown as a missing one
            raise ToolError(f"no collection '{collection}'")
        collections = [found.id]
    if document is not None:
        doc = await retrieval.document(user, document, collections[0] if collections else None)
        if doc is None:
            raise ToolError(f"no document '{document}'")
        documents = [doc.id]
    hits = await retrieval.search(user, query, collections=collections, documents=documents, limit=limit)
    return PassageList(
        passages=[
            PassageItem(
                citation=h.citation(),
                text=h.text,
                document=h.document_name,
                document_id=h.document_id,
                collection_id=h.collection_id,
                page=h.place.page,
                chunk_id=h.chunk_id,
                score=h.score,
            )
            for h in hits
        ]
    )


def _task_owner(ctx: Any) -> str:
    """Whose task a request may see: the user access control put on it (stdio: the one user)."""
    scope = getattr(getattr(ctx, "request", None), "scope", None) or {}
    user = scope.get(USER_KEY)
    return user if isinstance(user, str) and user else "local"


def _task_store(ctx: Any) -> TaskStore:
    """Where the tasks are kept: the runtime's (the database, shared by every worker)."""
    host = getattr(ctx, "lifespan_context", None)
    if not isinstance(host, NaviHost):  # a server built without Navi's lifespan: a bug
        raise ToolError("Navi is not running")
    return host.runtime.mcp.tasks


def build_server(lifespan: Lifespan) -> MCPServer[Any]:
    """The one definition of Navi's MCP tools; `lifespan` yields the `NaviHost` they act through."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    server: MCPServer[Any] = MCPServer(
        "navi",
        title="Navi",
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        # `ask` runs a whole turn: a 2026-07-28 client that declared Tasks gets a task to poll.
        extensions=[TasksServer(LONG_TOOLS, _task_owner, _task_store)],
    )
    # The SDK's constructor sets up the root logger when nothing has yet; Navi's commands own that.
    root.handlers[:], root.level = handlers, level
    server.add_tool(
        ask,
        title="Ask Navi",
        description="Run one turn of Navi, the user's own AI agent, through its normal agent loop "
        "(tools, memory, planning) and return its answer with the session id. Without session_id a "
        "new session starts; with one, that conversation goes on. Tool calls that need the user's "
        "approval are not run unless Navi's settings allow them.",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=True),
    )
    server.add_tool(
        background_job,
        title="Run a Navi background job",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=True),
    )
    server.add_tool(
        list_sessions,
        title="List Navi sessions",
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )
    server.add_tool(
        search_memory,
        title="Search Navi's memory",
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )
    server.add_tool(
        search_documents,
        title="Search the user's documents",
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )
    return server


def hosting(host: Callable[[], NaviHost]) -> Lifespan:
    """A lifespan that yields the host `host()` returns when the server starts."""

    @asynccontextmanager
    async def lifespan(_server: MCPServer[Any]) -> AsyncIterator[NaviHost]:
        yield host()

    return lifespan


def http_endpoint(
    host: Callable[[], NaviHost], path: str, max_body_bytes: int
) -> tuple[StreamableHTTPSessionManager, StreamableHTTPASGIApp]:
    """The tools as streamable HTTP (for `/mcp`, `navi/api/mcp_http.py`): the session manager, which
    the caller runs (`async with manager.run()`) for as long as it serves, and the ASGI endpoint.

    Stateless: every request stands alone (the conversation is Navi's session, named by the
    client), so nothing is kept between requests and each is checked and scoped like any other.
    Host, Origin and token checks are Navi's own (`AccessControl`), so the SDK's are off; its body
    cap is Navi's.
    """
    server = build_server(hosting(host))
    server.streamable_http_app(
        streamable_http_path=path,
        stateless_http=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        max_request_body_size=max_body_bytes,
    )
    manager = server.session_manager
    return manager, StreamableHTTPASGIApp(manager)  # a plain ASGI app: the SDK reads the request itself
