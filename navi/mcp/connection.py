"""One MCP server: started in the background, its tools listed, calls made, restarted when it dies.

The official SDK's `Client` is entered and left by one long-lived task per server (its task groups
must be), which waits until the connection breaks, the tool list changes or Navi closes. Calls come
from the tools' own tasks and go through the open client. The SDK negotiates the protocol
(`mode="auto"`): a server that answers `server/discover` is spoken to in 2026-07-28 (no session
handshake; tool-list changes come on a `subscriptions/listen` stream Navi opens), any other gets
the `initialize` handshake of 2025-11-25 (`notifications/tools/list_changed` come unasked).
A server's question to the user during a call (elicitation, either era) goes to
`elicitation.py`, which asks in the run the call belongs to; the user's time does not count
against the call's `timeout`.

- **Start-up** runs in the background: a slow server holds up nothing but its own tools.
  A stdio server gets a safe environment (the SDK's: `HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM`,
  `USER`) plus its entry's `env`, never Navi's own variables (tokens, `DATABASE_URL`); its stderr
  goes to a file whose tail is logged when it fails and shown by `navi doctor`.
- **A call** has the entry's `timeout` and follows the run's stop. Either one cancels the awaiting
  task, and the SDK then sends `notifications/cancelled` for the request.
- **A dead server** (its process killed, its connection closed) fails the call that noticed, and
  is started again in the background after a delay that doubles with each failure in a row (1 s
  up to 60 s). A call that finds it down waits for a start already running or due within
  `WAIT_FOR_START` seconds, and otherwise fails at once, saying when the next attempt is.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

import httpx2
import mcp_types
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

if TYPE_CHECKING:  # the SDK's client is imported when a server is first opened (about 0.6 s)
    from mcp import Client
    from mcp.shared.exceptions import MCPError

from navi import runctx
from navi.logging import get_logger
from navi.mcp.config import ServerConfig
from navi.mcp.elicitation import Elicitations
from navi.mcp.results import to_result
from navi.tools.base import ToolResult

log = get_logger(__name__)

START_TIMEOUT = 30.0
LIST_TIMEOUT = 30.0
FIRST_RETRY = 1.0
MAX_RETRY = 60.0
WAIT_FOR_START = 5.0
STDERR_TAIL = 2_000
CLOSE_TIMEOUT = 10.0
MAX_PAGES = 50


class ServerConnection:
    """One configured server. `start()` begins connecting; `aclose()` ends it for good."""

    def __init__(
        self,
        config: ServerConfig,
        on_tools: Callable[[ServerConnection], None] = lambda _c: None,
        *,
        first_retry: float = FIRST_RETRY,
        start_timeout: float = START_TIMEOUT,
        elicitations: Elicitations | None = None,
        tokens_file: str = "",
    ) -> None:
        self.config = config
        self.tokens_file = tokens_file  # where OAuth tokens of servers live (`oauth.py`)
        self.elicitations = elicitations or Elicitations()
        self.on_tools = on_tools  # called whenever `tools` is listed again
        self.first_retry = first_retry
        self.start_timeout = start_timeout
        self.tools: list[mcp_types.Tool] = []
        self.state = "stopped"  # starting, ready, down, closed
        self.error = ""  # why the last start or connection failed
        self.protocol_version = ""  # what the last connection negotiated: 2026-07-28 or a handshake era one
        self.starts = 0  # connections opened so far (restarts show up here)
        self.failures = 0  # failures in a row since the last successful call
        self.retry_at = 0.0  # monotonic time of the next start after a failure
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._retry: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()  # the connection task's reason to act: broken, relist or close
        self._broken = False
        self._relist = False
        self._closing = False
        self._attempt: asyncio.Future[None] | None = None  # done when the running start has ended
        self._stderr: IO[str] | None = None
        self._failed_stderr = ""  # what it wrote before it last failed (a restart opens a new file)
        self._calls: dict[int, _Call] = {}  # the calls running now, by the id of their task

    # --- life cycle ------------------------------------------------------------------------------
    def start(self) -> None:
        """Begin a connection in the background (no-op while one is starting or open)."""
        if self._closing or (self._task is not None and not self._task.done()):
            return
        self.state = "starting"
        self._broken = self._relist = False
        self._wake = asyncio.Event()
        self._attempt = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._run(self._attempt), name=f"mcp:{self.config.name}")

    async def wait_started(self, within: float | None = None) -> bool:
        """Wait (at most `within` seconds) until the running start has ended; True when ready."""
        if self._attempt is not None and not self._attempt.done():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._attempt), within)
        return self.state == "ready"

    async def aclose(self) -> None:
        self._closing = True
        self.state = "closed"
        if self._retry is not None:
            self._retry.cancel()
        self._wake.set()
        if self._task is not None and not self._task.done():
            try:
                await asyncio.wait_for(asyncio.shield(self._task), CLOSE_TIMEOUT)
            except (TimeoutError, Exception):
                self._task.cancel()
                with contextlib.suppress(BaseException):
                    await self._task
        self._close_stderr()

    def stderr_tail(self) -> str:
        """The last lines the server wrote to stderr (stdio servers), for logs and doctor: this
        start's, or, while a restart has written nothing yet, those of the start that failed."""
        return self._read_stderr() or self._failed_stderr

    def _read_stderr(self) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.flush()
            size = self._stderr.seek(0, os.SEEK_END)
            self._stderr.seek(max(0, size - STDERR_TAIL))
            return self._stderr.read().strip()
        except (OSError, ValueError):
            return ""

    async def _run(self, attempt: asyncio.Future[None]) -> None:
        self.starts += 1
        self._close_stderr()
        try:
            async with contextlib.AsyncExitStack() as stack:
                async with asyncio.timeout(self.start_timeout):
                    client = await self._open(stack)
                    await self._list(client)
                self._client = client
                self.protocol_version = client.protocol_version
                self.state, self.error = "ready", ""
                log.info(
                    "mcp_server_ready",
                    server=self.config.name,
                    tools=len(self.tools),
                    protocol=self.protocol_version,
                )
                _settle(attempt)
                await self._serve(client)
        except Exception as exc:
            self.error = _describe(exc, self.start_timeout)
        finally:
            self._client = None
            _settle(attempt)
        if self._closing:
            return
        self._failed()

    async def _serve(self, client: Client) -> None:
        """Hold the connection open; re-list tools when the server says they changed (a 2025-era
        server sends `notifications/tools/list_changed` unasked; a 2026-07-28 one to a
        `subscriptions/listen` stream, opened here when its capabilities say it sends them)."""
        listener: asyncio.Task[None] | None = None
        caps = client.server_capabilities.tools
        if self.protocol_version in MODERN_PROTOCOL_VERSIONS and caps is not None and caps.list_changed:
            listener = asyncio.create_task(self._listen(client), name=f"mcp-listen:{self.config.name}")
        try:
            await self._hold(client)
        finally:
            if listener is not None:
                await _cancel(listener)

    async def _listen(self, client: Client) -> None:
        try:
            async with client.listen(tools_list_changed=True) as events:
                async for _event in events:
                    self._relist = True
                    self._wake.set()
        except Exception as exc:  # the server refused or the stream broke: calls notice a dead server
            log.warning("mcp_listen_ended", server=self.config.name, error=_describe(exc, LIST_TIMEOUT))

    async def _hold(self, client: Client) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            if self._closing or self._broken:
                if self._broken:
                    self.error = self.error or "the connection was lost"
                return
            if self._relist:
                self._relist = False
                try:
                    async with asyncio.timeout(LIST_TIMEOUT):
                        await self._list(client)
                except Exception as exc:
                    why = _describe(exc, LIST_TIMEOUT)
                    log.warning("mcp_relist_failed", server=self.config.name, error=why)

    def _failed(self) -> None:
        """The server is down: log why, start it again after the backoff. Its tools stay listed (a
        call meanwhile says the server is down and when it restarts), until it lists others."""
        self.failures += 1
        self._failed_stderr = self._read_stderr() or self._failed_stderr
        delay = min(MAX_RETRY, self.first_retry * 2 ** (self.failures - 1))
        self.retry_at = time.monotonic() + delay
        self.state = "down"
        log.warning(
            "mcp_server_down",
            server=self.config.name,
            error=self.error,
            stderr=self.stderr_tail()[-500:] or None,
            retry_in=round(delay, 1),
        )
        self._retry = asyncio.create_task(self._restart_after(delay))

    async def _restart_after(self, delay: float) -> None:
        await asyncio.sleep(delay)
        if not self._closing:
            self.start()

    async def _open(self, stack: contextlib.AsyncExitStack) -> Client:
        """Enter the SDK's client for this server on `stack` (handshake included)."""
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client
        from mcp.client.streamable_http import streamable_http_client

        from navi.mcp.tasks import TasksClient

        config = self.config
        transport: Any
        if config.command is not None:
            # Open for as long as this connection; closed by the next start or `aclose`.
            self._stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")  # noqa: SIM115
            params = StdioServerParameters(
                command=config.command, args=list(config.args), env=dict(config.env), cwd=config.cwd
            )
            transport = stdio_client(params, errlog=self._stderr)
        else:
            assert config.url is not None
            auth: Any = None
            if config.oauth:  # the SDK's OAuth client, on the tokens `navi mcp-login` stored
                from navi.mcp.oauth import provider

                auth = provider(config, self.tokens_file or "navi_mcp_oauth.json")
            http = await stack.enter_async_context(
                httpx2.AsyncClient(
                    headers=config.headers, auth=auth, timeout=httpx2.Timeout(30.0, read=300.0)
                )
            )
            transport = streamable_http_client(config.url, http_client=http)
        client = Client(
            transport,
            mode="auto",
            message_handler=self._on_message,
            elicitation_callback=self._elicit,
            extensions=[TasksClient(self._task_input)],
            cache=None,
            client_info=mcp_types.Implementation(name="navi", version=_version()),
        )
        return await stack.enter_async_context(client)

    async def _list(self, client: Client) -> None:
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        self.tools = tools
        self.on_tools(self)

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            self._relist = True
            self._wake.set()
        elif isinstance(message, Exception):
            log.warning("mcp_transport_error", server=self.config.name, error=str(message)[:300])

    def _close_stderr(self) -> None:
        if self._stderr is not None:
            with contextlib.suppress(OSError):
                self._stderr.close()
            self._stderr = None

    # --- calls -----------------------------------------------------------------------------------
    async def call(self, tool: str, args: dict[str, Any], *, shown_as: str) -> ToolResult:
        """Call `tool` on the server; the run's stop and the entry's timeout cancel it there."""
        ctx = runctx.current()
        stop = ctx.stop_event if ctx is not None else None
        deadline = time.monotonic() + self.config.timeout
        client = await self._ready_client(deadline)
        if isinstance(client, ToolResult):
            return client
        call = asyncio.ensure_future(client.call_tool(tool, args))
        running = _Call(ctx, shown_as)
        self._calls[id(call)] = running
        waits: set[asyncio.Future[Any]] = {call}
        stopper = asyncio.ensure_future(stop.wait()) if stop is not None else None
        if stopper is not None:
            waits.add(stopper)
        try:
            while True:  # the time the user takes to answer the server's questions is not the call's
                done, _ = await asyncio.wait(
                    waits, timeout=max(0.0, deadline - time.monotonic()), return_when=asyncio.FIRST_COMPLETED
                )
                if done or not (running.asking or running.answered):
                    break
                deadline += running.answered
                running.answered = 0.0
                if running.asking:
                    deadline = max(deadline, time.monotonic() + 1.0)
            if call not in done:
                await _cancel(call)  # the SDK sends notifications/cancelled for the request
                if stopper is not None and stopper in done:
                    why = "stopped by the user; the MCP server was told to cancel the call"
                    return ToolResult.fail(why, stopped=True)
                return ToolResult.fail(
                    f"{shown_as} took longer than {self.config.timeout:g} s (the timeout of the MCP server "
                    f"'{self.config.name}') and was cancelled"
                )
            from mcp.shared.exceptions import MCPError

            try:
                result = call.result()
            except MCPError as exc:
                if _connection_lost(exc):
                    return self._lost(shown_as, str(exc))
                return ToolResult.fail(f"the MCP server '{self.config.name}' refused the call: {exc}")
            except Exception as exc:  # transport failures: the connection is gone
                return self._lost(shown_as, _describe(exc, self.config.timeout))
            self.failures = 0
            return await to_result(result, shown_as)
        except asyncio.CancelledError:
            await _cancel(call)
            raise
        finally:
            self._calls.pop(id(call), None)
            if stopper is not None:
                stopper.cancel()

    async def _elicit(
        self, context: Any, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        """A server's question during a call (`elicitation/create`, or `input_required` on
        2026-07-28): asked in the run of the call it came with; never answered for the user."""
        running = self._asking_call()
        if running is None:  # no call, or several and no way to tell which one asks
            log.warning("mcp_elicitation_unplaced", server=self.config.name, calls=len(self._calls))
            return mcp_types.ElicitResult(action="cancel")
        url = params.url if isinstance(params, mcp_types.ElicitRequestURLParams) else None
        schema = params.requested_schema if isinstance(params, mcp_types.ElicitRequestFormParams) else None
        running.asking += 1
        started = time.monotonic()
        try:
            answer = await self.elicitations.ask(
                running.ctx,
                server=self.config.name,
                tool=running.shown_as,
                message=params.message,
                requested_schema=schema,
                url=url,
            )
        finally:
            running.asking -= 1
            running.answered += time.monotonic() - started
        content: dict[str, Any] | None = answer.content
        return mcp_types.ElicitResult(action=answer.action, content=content)

    async def _task_input(self, _ctx: Any, _key: str, request: Any) -> Any:
        """A task's `inputRequests` entry: an elicitation is asked as any other; others refused."""
        asked = request if isinstance(request, dict) else {}
        if asked.get("method") != "elicitation/create":
            return {"action": "cancel"}
        question = mcp_types.ElicitRequest.model_validate(asked)
        answer = await self._elicit(None, question.params)
        return answer.model_dump(by_alias=True, mode="json", exclude_none=True)

    def _asking_call(self) -> _Call | None:
        """The running call a question belongs to: the one whose task asks (the 2026-07-28 flow
        runs in the call's own task), else the only call running (a 2025-era server's request
        arrives on the connection's reader)."""
        here = runctx.current()
        for running in self._calls.values():
            if here is not None and running.ctx is here:
                return running
        calls = list(self._calls.values())
        return calls[0] if len(calls) == 1 else None

    async def _ready_client(self, deadline: float) -> Client | ToolResult:
        """The open client, after waiting for a start that is running or due soon."""
        if self._client is not None and not self._broken:
            return self._client
        if self.state == "closed":
            return ToolResult.fail(f"the MCP server '{self.config.name}' is closed (Navi is shutting down)")
        due = self.retry_at - time.monotonic()
        if self.state == "down" and due <= min(WAIT_FOR_START, deadline - time.monotonic()):
            if self._retry is not None:
                self._retry.cancel()
            self.start()  # now rather than in `due` seconds: someone is waiting
        if self.state == "starting":
            await self.wait_started(max(0.0, deadline - time.monotonic()))
        if self._client is not None and self.state == "ready":
            return self._client
        why = self.error or "it has not started yet"
        tail = self.stderr_tail()
        again = max(0.0, self.retry_at - time.monotonic())
        return ToolResult.fail(
            f"the MCP server '{self.config.name}' is not running ({why})"
            + (f"; its stderr ends with: {tail[-500:]}" if tail else "")
            + (f". Navi starts it again in {again:.0f} s" if self.state == "down" else "")
        )

    def _lost(self, shown_as: str, why: str) -> ToolResult:
        """The connection broke during a call: fail the call and have the server started again."""
        if not self._broken:
            self._broken = True
            self.error = f"the connection was lost: {why}"
            self._wake.set()
        return ToolResult.fail(
            f"{shown_as} failed: the MCP server '{self.config.name}' stopped answering ({why}). "
            "Navi restarts it; the next call may work."
        )

    def describe_state(self) -> str:
        if self.state == "ready":
            return f"ready, {len(self.tools)} tool{'s' if len(self.tools) != 1 else ''}"
        return f"{self.state}{f': {self.error}' if self.error else ''}"


@dataclass(eq=False)
class _Call:
    """A call running now: whose run it is, and the time the user spent on the server's questions."""

    ctx: runctx.RunContext | None
    shown_as: str
    asking: int = 0  # questions waiting for the user now
    answered: float = 0.0  # seconds spent on answered questions, not yet added to the deadline


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def _cancel(task: asyncio.Future[Any]) -> None:
    if task.done():
        return
    task.cancel()
    with contextlib.suppress(BaseException):
        await asyncio.wait_for(task, 5.0)


def _connection_lost(exc: MCPError) -> bool:
    return exc.code == mcp_types.CONNECTION_CLOSED


def _describe(exc: BaseException, timeout: float) -> str:
    """One line for an exception that may be an ExceptionGroup from the SDK's task groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, TimeoutError):
        return f"no answer within {timeout:g} s"
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    text = str(exc).strip() or type(exc).__name__
    return text if len(text) <= 300 else text[:299] + "…"


def _version() -> str:
    import navi

    return getattr(navi, "__version__", "0")
