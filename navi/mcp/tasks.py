"""MCP Tasks (`io.modelcontextprotocol/tasks`, the 2026-07-28 extension, SEP-2663) on the SDK's
extension API (`mcp` 2.3.0 ships the API, not the extension).

A server may answer `tools/call` with a task handle (`resultType: "task"`) instead of the result,
when the client declared the extension in the request's capabilities; the client then asks
`tasks/get` until the task is `completed` (its `result` is what the call would have returned),
`failed` or `cancelled`, and may send `tasks/cancel`. No request stays open meanwhile.

- `TasksClient`: what Navi's client declares; its claim finishes a task returned by a server:
  it polls (at the server's `pollIntervalMs`, between 0.2 and 5 s), and a call cancelled by
  Navi (a stop, the timeout) sends `tasks/cancel`. A task that asks for input
  (`input_required`) is answered through the connection's own callbacks (elicitation) and
  `tasks/update`.
- `TasksServer`: what Navi's own MCP server offers: the tools it names (`ask`) run as tasks for
  clients that declared the extension, each task visible only to the user who started it, kept
  where `store_of` says (the database: any worker answers `tasks/get` and `tasks/cancel`).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, ClassVar, Literal

import mcp_types
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.server.extension import Extension, MethodBinding
from mcp.shared.exceptions import MCPError
from pydantic import ConfigDict, Field

from navi.logging import get_logger
from navi.mcp.task_store import BEAT_SECONDS, STALE_SECONDS, MemoryTaskStore, TaskRecord, TaskStore

log = get_logger(__name__)

TASKS = "io.modelcontextprotocol/tasks"
Status = Literal["working", "input_required", "completed", "failed", "cancelled"]
TERMINAL = ("completed", "failed", "cancelled")
POLL_MS = 1_000
TTL_MS = 3_600_000
MAX_TASKS_PER_OWNER = 50


# --- the wire ------------------------------------------------------------------------------------
class TaskCreated(mcp_types.Result):
    """`CreateTaskResult`: the task handle a server returns instead of a result."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"] = "task"
    task_id: str
    status: Status = "working"
    status_message: str | None = None
    created_at: str = ""
    last_updated_at: str = ""
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class TaskState(mcp_types.Result):
    """A `tasks/get` answer: the task, with `result`, `error` or `inputRequests` per its status."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["complete"] = "complete"
    task_id: str
    status: Status
    status_message: str | None = None
    created_at: str = ""
    last_updated_at: str = ""
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = Field(default=None, alias="inputRequests")


class TaskIdParams(mcp_types.RequestParams):
    task_id: str = Field(min_length=1, max_length=200)


class UpdateParams(TaskIdParams):
    input_responses: dict[str, Any] | None = None


class _TaskRequest(mcp_types.Request[TaskIdParams, str]):
    name_param: ClassVar[str | None] = "taskId"  # SEP-2663: the Mcp-Name header carries the task id


class _UpdateRequest(mcp_types.Request[UpdateParams, str]):
    name_param: ClassVar[str | None] = "taskId"


class _Ack(mcp_types.Result):
    result_type: Literal["complete"] = "complete"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# --- the client ----------------------------------------------------------------------------------
class TasksClient(ClientExtension):
    """Navi's client declares the extension and waits for a task by polling it."""

    identifier = TASKS

    def __init__(self, answer_input: Callable[[ClaimContext, str, Any], Any] | None = None) -> None:
        # How a task's `inputRequests` are answered: (context, key, request) → response; None: not.
        self.answer_input = answer_input

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return (ResultClaim(result_type="task", model=TaskCreated, resolve=self._finish),)

    async def _finish(self, created: TaskCreated, ctx: ClaimContext) -> mcp_types.CallToolResult:
        task_id, interval = created.task_id, created.poll_interval_ms
        answered: set[str] = set()
        log.info("mcp_task_created", tool=ctx.tool_name, task=task_id[:40])
        try:
            while True:
                await asyncio.sleep(min(5.0, max(0.2, (interval or POLL_MS) / 1000)))
                state = await ctx.session.send_request(
                    _TaskRequest(method="tasks/get", params=TaskIdParams(task_id=task_id)), TaskState
                )
                interval = state.poll_interval_ms or interval
                if state.status == "completed":
                    return mcp_types.CallToolResult.model_validate(state.result or {"content": []})
                if state.status == "failed":
                    error = state.error or {}
                    raise MCPError(
                        int(error.get("code", -32603)), str(error.get("message", "the task failed"))
                    )
                if state.status == "cancelled":
                    why = state.status_message or "the server cancelled the task"
                    return mcp_types.CallToolResult(content=[mcp_types.TextContent(text=why)], is_error=True)
                if state.status == "input_required" and state.input_requests:
                    await self._answer(ctx, task_id, state.input_requests, answered)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):  # a stop or the timeout: tell the server, briefly
                async with asyncio.timeout(5):
                    await ctx.session.send_request(
                        _TaskRequest(method="tasks/cancel", params=TaskIdParams(task_id=task_id)), _Ack
                    )
            raise

    async def _answer(
        self, ctx: ClaimContext, task_id: str, asked: dict[str, Any], answered: set[str]
    ) -> None:
        fresh = {k: v for k, v in asked.items() if k not in answered}
        if not fresh or self.answer_input is None:
            return
        responses: dict[str, Any] = {}
        for key, request in fresh.items():
            responses[key] = await self.answer_input(ctx, key, request)
            answered.add(key)
        params = UpdateParams(task_id=task_id, input_responses=responses)
        await ctx.session.send_request(_UpdateRequest(method="tasks/update", params=params), _Ack)


# --- the server ----------------------------------------------------------------------------------
def _state(task: TaskRecord) -> dict[str, Any]:
    data: dict[str, Any] = {
        "taskId": task.task_id,
        "status": task.status,
        "createdAt": task.created,
        "lastUpdatedAt": task.updated,
        "ttlMs": TTL_MS,
        "pollIntervalMs": POLL_MS,
    }
    if task.message:
        data["statusMessage"] = task.message
    if task.status == "completed":
        data["result"] = task.result or {"content": []}
    if task.status == "failed":
        data["error"] = task.error or {"code": -32603, "message": "the task failed"}
    return data


class TasksServer(Extension):
    """Runs the named tools as tasks for clients that declared the extension. `owner_of(ctx)`
    says whose task a request may see (another user's task is unknown to them); `store_of(ctx)`
    where the tasks are kept (navi/mcp/task_store.py: the database, so any worker answers
    `tasks/get` and `tasks/cancel`; by default this process's memory). `clock`: seconds since the
    epoch."""

    identifier = TASKS

    def __init__(
        self,
        tools: Sequence[str],
        owner_of: Callable[[Any], str],
        store_of: Callable[[Any], TaskStore] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.long_tools = frozenset(tools)
        self.owner_of = owner_of
        self.memory = MemoryTaskStore()
        self.store_of: Callable[[Any], TaskStore] = store_of or (lambda ctx: self.memory)
        self.clock = clock
        self.runners: dict[str, asyncio.Task[None]] = {}  # the tasks this process runs

    def methods(self) -> Sequence[MethodBinding]:
        return (
            MethodBinding("tasks/get", TaskIdParams, self._get),
            MethodBinding("tasks/cancel", TaskIdParams, self._cancel),
            MethodBinding("tasks/update", UpdateParams, self._update),
        )

    async def intercept_tool_call(
        self, params: mcp_types.CallToolRequestParams, ctx: Any, call_next: Any
    ) -> Any:
        caps = getattr(ctx.session, "client_capabilities", None)
        declared = bool(caps is not None and caps.extensions and TASKS in caps.extensions)
        if params.name not in self.long_tools or not declared:
            return await call_next(ctx)
        owner, store, now = self.owner_of(ctx), self.store_of(ctx), self.clock()
        await store.forget(now - TTL_MS / 1000)
        if await store.working(owner) >= MAX_TASKS_PER_OWNER:
            raise MCPError(-32603, f"too many running tasks (at most {MAX_TASKS_PER_OWNER}); wait for some")
        stamp = _now()
        task = TaskRecord(
            task_id=secrets.token_urlsafe(16),
            owner=owner,
            tool=params.name,
            created=stamp,
            updated=stamp,
            started=now,
            beat=now,
        )
        await store.create(task.row())  # stored before the handle goes out: any worker finds it
        runner = asyncio.get_running_loop().create_task(self._run(task, store, ctx, call_next))
        self.runners[task.task_id] = runner
        log.info("mcp_task_started", tool=params.name, task=task.task_id[:8])
        return TaskCreated(
            task_id=task.task_id,
            created_at=task.created,
            last_updated_at=task.updated,
            ttl_ms=TTL_MS,
            poll_interval_ms=POLL_MS,
        )

    async def _run(self, task: TaskRecord, store: TaskStore, ctx: Any, call_next: Any) -> None:
        runner = asyncio.current_task()
        assert runner is not None
        watcher = asyncio.get_running_loop().create_task(self._watch(task.task_id, store, runner))
        ended: dict[str, Any]
        try:
            result = await call_next(ctx)
            dump = getattr(result, "model_dump", None)
            out = dump(by_alias=True, mode="json", exclude_none=True) if dump else dict(result)
            ended = {"status": "completed", "result": out}
        except asyncio.CancelledError:
            ended = {"status": "cancelled", "message": "cancelled by the client"}
        except MCPError as exc:
            ended = {"status": "failed", "error": {"code": exc.error.code, "message": exc.error.message}}
        except Exception as exc:
            log.warning("mcp_task_failed", tool=task.tool, error=str(exc)[:300])
            ended = {
                "status": "failed",
                "error": {"code": -32603, "message": str(exc)[:500] or type(exc).__name__},
            }
        finally:
            watcher.cancel()
            self.runners.pop(task.task_id, None)
        try:
            await store.finish(task.task_id, {**ended, "updated": _now()})
        except Exception as exc:  # the database is gone: the task is reported failed once its beats stop
            log.warning("mcp_task_unrecorded", task=task.task_id[:8], error=str(exc)[:300])

    async def _watch(self, task_id: str, store: TaskStore, runner: asyncio.Task[None]) -> None:
        """Beat the task's row while it runs and stop it when a cancel was asked for (through any
        worker)."""
        while True:
            await asyncio.sleep(BEAT_SECONDS)
            try:
                cancel = await store.beat(task_id, self.clock())
            except Exception as exc:
                log.warning("mcp_task_beat_failed", task=task_id[:8], error=str(exc)[:300])
                continue
            if cancel:
                runner.cancel()
                return

    async def _find(self, ctx: Any, task_id: str) -> TaskRecord:
        row = await self.store_of(ctx).get(task_id)
        if row is None or row["owner"] != self.owner_of(ctx):
            raise MCPError(-32602, f"no task {task_id!r}")
        task = TaskRecord.of(row)
        if task.status == "working" and task.beat < self.clock() - STALE_SECONDS:
            task.status = "failed"  # its worker is gone: nobody will finish it
            task.error = {"code": -32603, "message": "the Navi process running the task stopped"}
        return task

    async def _get(self, ctx: Any, params: TaskIdParams) -> TaskState:
        return TaskState.model_validate(_state(await self._find(ctx, params.task_id)))

    async def _cancel(self, ctx: Any, params: TaskIdParams) -> _Ack:
        task = await self._find(ctx, params.task_id)
        runner = self.runners.get(task.task_id)
        if runner is not None and not runner.done():
            runner.cancel()  # it runs here
        elif task.status == "working":
            await self.store_of(ctx).ask_cancel(task.task_id)  # its worker stops it at its next beat
        return _Ack()

    async def _update(self, ctx: Any, params: UpdateParams) -> _Ack:
        await self._find(ctx, params.task_id)  # Navi's tasks ask nothing: responses are ignored
        return _Ack()
