"""Navi's side of the tool host: user tools are imported and run in another process, under the
sandbox, and appear in the registry as proxies.

`ToolHost.load(tools_dir)` checks the files here without running them (`navi.tools.loader`),
starts a fresh host process, has it import the files one by one (a file whose top-level code hangs
or kills the host is reported and left out), checks what the host says each tool is, and returns a
proxy `Tool` per tool. Only then is the previous host retired: it finishes the calls it is running
and exits. Each load starts from a fresh process, so a reload really gives fresh module state.

A call is a request to the current host. It ends with the tool's result, or when the call's
timeout passes or the run's stop event is set: the host is asked to cancel the call, and a host
that does not confirm within a second (a tool blocking its event loop) is killed. A dead host is
started again, with the same folder loaded, by the next call; the call that was running when it
died gets an error saying so.

The host is untrusted: its replies are size-capped frames whose every field is checked before use,
and a user tool can never take a built-in's name, whatever the host says.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Collection
from pathlib import Path
from typing import Any

import navi
from navi import runctx
from navi.logging import get_logger
from navi.sandbox import Sandbox, SandboxRefused
from navi.tools.base import Tool, ToolResult
from navi.tools.host.listings import Listings, folder_key
from navi.tools.host.process import HostError, HostProcess
from navi.tools.loader import Format, LoadError, LoadResult, ToolListing, listing_problems, tool_files

log = get_logger(__name__)

HOST_MODULE = "navi.tools.host"
START_TIMEOUT = 30.0  # a fresh host answers in about 0.1 s; this is for a machine under heavy load
IMPORT_TIMEOUT = 10.0  # one file's top-level code
CANCEL_GRACE = 1.0  # how long a cancelled call may take to confirm before the host is killed
MAX_TEXT = 2_000  # of one problem or error message from the host
MAX_PROBLEMS = 20


def _text(value: Any, limit: int = MAX_TEXT) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class HostedTool(Tool):
    """A user tool living in the tool host; `hosted_tool` subclasses it with the host's listing."""

    name = "hosted_tool"
    description = ""
    source_file: str = ""

    def __init__(self, host: ToolHost) -> None:
        self.host = host

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        ctx = runctx.current()
        return await self.host.call(
            self.name,
            params,
            time_limit=self.timeout,
            stop_event=ctx.stop_event if ctx else None,
            session_id=ctx.session_id if ctx else "",
        )


def hosted_tool(host: ToolHost, listing: ToolListing, file: str) -> Tool:
    """A proxy with the name, description, schema and timeout the host listed (already checked)."""
    attrs = {
        "name": listing.name,
        "description": listing.description,
        "parameters": listing.parameters,
        "timeout": listing.timeout,
        "source_file": file,
    }
    return type(f"Hosted_{listing.name}", (HostedTool,), attrs)(host)


class ToolHost:
    """The user tools' process. One per Navi; `aclose()` ends it (the runtime's close does)."""

    def __init__(
        self,
        sandbox: Sandbox,
        *,
        python: str = sys.executable,
        import_timeout: float = IMPORT_TIMEOUT,
        start_timeout: float = START_TIMEOUT,
        listings: Listings | None = None,
    ) -> None:
        """`listings` (the runtime passes its process's) lets a load over files listed before start
        no host until a tool is called; without it every load starts one."""
        self.sandbox = sandbox
        self.listings = listings
        self.python = python
        self.import_timeout = import_timeout
        self.start_timeout = start_timeout
        self._current: HostProcess | None = None
        self._served: set[str] = set()
        self._tools_dir: str | None = None
        self._reserved: frozenset[str] = frozenset()
        self._lock: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
        self._retired: set[HostProcess] = set()
        self._closing: set[asyncio.Task[None]] = set()
        self.starts = 0  # processes started so far (restarts show up here)
        self.closed = False

    def _guard(self) -> asyncio.Lock:
        """One lock for loading and restarting, made anew for each event loop (the runtime may be
        built in one loop and used in another; an asyncio lock belongs to one)."""
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock[0] is not loop:
            self._lock = (loop, asyncio.Lock())
        return self._lock[1]

    # --- loading ---------------------------------------------------------------------------------
    async def load(self, tools_dir: str | os.PathLike[str], *, reserved: Collection[str] = ()) -> LoadResult:
        """Every tool of `tools_dir`, loaded into a fresh host that then replaces the current one."""
        async with self._guard():
            if self.closed:
                return LoadResult(
                    errors=[LoadError(str(tools_dir), "Navi is shutting down: the tool host is closed")]
                )
            self._tools_dir, self._reserved = str(tools_dir), frozenset(reserved)
            result, proc = await self._load(listed=True)
            self._replace(proc, {t.name for t in result.loaded})
        for error in result.errors:
            log.warning("user_tool_load_failed", file=error.file, error=error.message)
        log.info(
            "user_tools_loaded", tools_dir=str(tools_dir), loaded=result.names, errors=len(result.errors)
        )
        return result

    async def _load(self, *, listed: bool = False) -> tuple[LoadResult, HostProcess | None]:
        """The folder's tools and the host that imported them. With `listed`, a folder whose files
        were listed before in this process is listed from `listings` and no host is started yet."""
        assert self._tools_dir is not None
        files, errors = await asyncio.to_thread(tool_files, self._tools_dir)
        result = LoadResult(errors=errors)
        if not files:
            return result, None
        # What lists the folder: its files, the interpreter, and what the sandbox lets an import
        # reach (not the secrets it hides: a Navi's own database path differs from another's).
        policy = self.sandbox.policy
        reach = (
            policy.mode,
            policy.network,
            policy.allowed_paths,
            policy.protected_paths,
            policy.runtime_paths,
        )
        under = f"{self.python}\0{reach!r}\0{self.sandbox.active}"
        key = await asyncio.to_thread(folder_key, self._tools_dir, under) if self.listings else None
        known = self.listings.get(key) if self.listings and listed else None
        proc: HostProcess | None = None
        failed: dict[Path, str] = {}
        if known is not None and all(path.name in known for path, _ in files):
            replies = {path: known[path.name] for path, _ in files}
        else:
            try:
                proc, replies, failed = await self._import_all(files)
            except HostError as exc:
                result.errors.extend(LoadError(path.name, f"cannot be loaded: {exc}") for path, _ in files)
                return result, None
            if self.listings and not failed:
                self.listings.put(key, {path.name: reply for path, reply in replies.items()})
        owners: dict[str, str] = {}
        for path, fmt in files:
            if path in failed:
                result.errors.append(LoadError(path.name, failed[path]))
                continue
            result.errors.extend(self._take(replies[path], path, fmt, owners, result))
        return result, proc

    def _take(
        self, reply: dict[str, Any], path: Path, fmt: Format, owners: dict[str, str], result: LoadResult
    ) -> list[LoadError]:
        """The host's reply for one file → proxies in `result`, and this file's errors."""
        said, listed = reply.get("problems"), reply.get("tools")
        if not isinstance(said, list) or not isinstance(listed, list):
            return [LoadError(path.name, _text(reply.get("error", "the tool host's reply makes no sense")))]
        problems = [_text(p) for p in said[:MAX_PROBLEMS]]
        for entry in listed[:MAX_PROBLEMS]:
            listing, found = listing_problems(entry, path.stem, fmt)
            if listing is None:
                problems.extend(found)
            elif listing.name in self._reserved:
                problems.append(
                    f"{listing.name!r} is the name of a built-in tool; a user tool cannot replace it"
                )
            elif listing.name in owners:
                problems.append(f"the tool name {listing.name!r} is already used by {owners[listing.name]}")
            else:
                owners[listing.name] = path.name
                result.loaded.append(hosted_tool(self, listing, str(path)))
        return [LoadError(path.name, p) for p in problems]

    async def _import_all(
        self, files: list[tuple[Path, Format]]
    ) -> tuple[HostProcess, dict[Path, dict[str, Any]], dict[Path, str]]:
        """A fresh host with every file imported that can be. A file that hangs at import or ends
        the host is recorded in `failed`, and the others are imported again into a new host."""
        failed: dict[Path, str] = {}
        while True:
            proc = await self._spawn()
            replies: dict[Path, dict[str, Any]] = {}
            for path, _fmt in files:
                if path in failed:
                    continue
                try:
                    replies[path] = await proc.ask({"op": "import", "path": str(path)}, self.import_timeout)
                except TimeoutError:
                    failed[path] = (
                        f"importing it did not finish within {self.import_timeout:g} s: top-level code must "
                        "only define things (do the work inside execute)"
                    )
                except HostError as exc:
                    failed[path] = f"importing it ended the tool host: {exc}"
                else:
                    continue
                await proc.kill(f"the tool host was stopped while importing {path.name}")
                break
            else:
                return proc, replies, failed

    def _launch(self, workdir: str) -> tuple[list[str], str, dict[str, str]]:
        """The host's command line (under the sandbox), working directory and environment."""
        assert self._tools_dir is not None
        tools_dir = os.path.realpath(self._tools_dir)
        cwd = os.getcwd() if self.sandbox.policy.unrestricted else tools_dir
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": workdir,
            "TMPDIR": workdir,
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "PYTHONIOENCODING": "utf-8",
            "PYTHONPATH": str(Path(navi.__file__).resolve().parent.parent),
        }
        if os.environ.get("TZ"):
            env["TZ"] = os.environ["TZ"]  # so "local time" means the same as in the server
        argv = self.sandbox.command(
            [self.python, "-s", "-B", "-m", HOST_MODULE],
            workdir=workdir,
            cwd=cwd,
            env=env,
            writable=[tools_dir],  # user tools keep their data beside them (tools/user_notes.json)
        )
        return argv, cwd, env

    async def _spawn(self) -> HostProcess:
        workdir = tempfile.mkdtemp(prefix="navi-toolhost-")
        try:
            argv, cwd, env = self._launch(workdir)
            proc = await asyncio.to_thread(
                subprocess.Popen,
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=env,
                start_new_session=True,
            )
        except (SandboxRefused, OSError) as exc:
            shutil.rmtree(workdir, ignore_errors=True)
            raise HostError(str(exc)) from None
        host = HostProcess(proc, workdir)
        self.starts += 1
        try:
            await host.ask({"op": "ping"}, self.start_timeout)
        except (TimeoutError, HostError) as exc:
            said = host.ended if isinstance(exc, HostError) else f"no answer within {self.start_timeout:g} s"
            await host.kill()
            raise HostError(f"the tool host did not start: {said}") from None
        return host

    def _replace(self, proc: HostProcess | None, served: set[str]) -> None:
        """Make `proc` the host calls go to; the previous one finishes its calls, then closes."""
        old, self._current, self._served = self._current, proc, served
        if old is not None:
            old.retired = True
            self._retired.add(old)
            if old.busy == 0:
                self._close_later(old)

    def _close_later(self, proc: HostProcess) -> None:
        task = asyncio.get_running_loop().create_task(self._close_retired(proc))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def _close_retired(self, proc: HostProcess) -> None:
        await proc.close()
        self._retired.discard(proc)

    # --- calling ---------------------------------------------------------------------------------
    async def _ready(self) -> HostProcess:
        """The current host; started (with the folder loaded) when the load listed the tools from
        `listings`, started again when it has died."""
        current = self._current
        if current is not None and current.alive:
            return current
        async with self._guard():
            if self._current is not None and self._current.alive:
                return self._current
            if self.closed:
                raise HostError("Navi is shutting down: the tool host is closed")
            if self._tools_dir is None:
                raise HostError("no user tools are loaded")
            died = self._current  # None: the load listed the tools without starting a host
            result, proc = await self._load()
            if proc is None:
                problems = "; ".join(str(e) for e in result.errors) or "the tools folder has no tools"
                raise HostError(f"it could not be started{' again' if died else ''}: {problems}")
            if died is not None:
                log.warning("tool_host_restarted", reason=died.ended, loaded=result.names)
            else:
                log.info("tool_host_started", loaded=result.names)
            self._replace(proc, {t.name for t in result.loaded})
            return proc

    async def call(
        self,
        name: str,
        args: dict[str, Any],
        *,
        time_limit: float,
        stop_event: asyncio.Event | None = None,
        session_id: str = "",
    ) -> ToolResult:
        """Run user tool `name` in the host; a timeout or stop cancels it there (or ends the host)."""
        if stop_event is not None and stop_event.is_set():
            return ToolResult.fail("stopped by the user", stopped=True)
        try:
            proc = await self._ready()
        except HostError as exc:
            return ToolResult.fail(f"user tools cannot run now: {exc}")
        if name not in self._served:
            return ToolResult.fail(
                f"{name} is not loaded in the tool host any more (its file changed or no longer loads); "
                "call reload_tools to see why"
            )
        proc.busy += 1
        stopper = asyncio.ensure_future(stop_event.wait()) if stop_event is not None else None
        future: asyncio.Future[dict[str, Any]] | None = None
        rid = 0
        try:
            rid, future = proc.request({"op": "call", "tool": name, "args": args, "session_id": session_id})
            waits: set[asyncio.Future[Any]] = {future} | ({stopper} if stopper else set())
            done, _ = await asyncio.wait(waits, timeout=time_limit, return_when=asyncio.FIRST_COMPLETED)
            if future in done:
                return self._result(name, future)
            stopped = stopper is not None and stopper in done
            killed = await self._abandon(proc, rid, future)
            restarted = " The tool host was restarted; the next call starts it again." if killed else ""
            if stopped:
                return ToolResult.fail(f"stopped by the user.{restarted}", stopped=True)
            return ToolResult.fail(f"{name} ran longer than {time_limit:g} s and was stopped.{restarted}")
        except HostError as exc:
            return ToolResult.fail(f"{name} could not run: {exc}. The next call starts the tool host again.")
        except asyncio.CancelledError:
            if future is not None and not future.done():
                await self._abandon(proc, rid, future)
            raise
        finally:
            if stopper is not None:
                stopper.cancel()
            proc.busy -= 1
            if proc.busy == 0 and proc.retired:
                self._close_later(proc)

    async def _abandon(self, proc: HostProcess, rid: int, future: asyncio.Future[dict[str, Any]]) -> bool:
        """Cancel call `rid` in the host; kill the host if it does not confirm in time. True if killed."""
        with contextlib.suppress(HostError):
            proc.send({"op": "cancel", "id": rid})
        try:
            await asyncio.wait_for(asyncio.shield(future), CANCEL_GRACE)
            return False
        except (TimeoutError, HostError, asyncio.CancelledError):
            pass
        log.warning("tool_host_killed", reason="a call did not stop when cancelled")
        await proc.kill("the tool host was restarted: a call did not stop when cancelled")
        return True

    def _result(self, name: str, future: asyncio.Future[dict[str, Any]]) -> ToolResult:
        exc = future.exception()
        if exc is not None:
            return ToolResult.fail(
                f"{name} could not finish: {exc}. The next call starts the tool host again."
            )
        reply = future.result()
        if reply.get("cancelled"):
            return ToolResult.fail(f"{name} was cancelled")
        result = reply.get("result")
        if not isinstance(result, dict):
            return ToolResult.fail(_text(reply.get("error", "the tool host gave no result")))
        metadata = result.get("metadata")
        error = result.get("error")
        output = result.get("output")
        return ToolResult(
            success=result.get("success") is True,
            output=output if isinstance(output, str) else "",
            error=None if error is None else _text(error, 20_000),
            metadata=metadata if isinstance(metadata, dict) else {},
        )

    async def aclose(self) -> None:
        """End every host process (the runtime's close calls this once); nothing starts after."""
        self.closed = True
        current, self._current = self._current, None
        for proc in [*self._retired, *([current] if current else [])]:
            await proc.close()  # idempotent; safe from any event loop
        self._retired.clear()
