"""The tool host's loop: answer Navi's requests (import a file, run a call, cancel a call).

Started by Navi as `python -m navi.tools.host` under the sandbox, with the protocol on its stdin
and stdout. Before anything else it moves the protocol pipes to other descriptors and points fd 0
at /dev/null and fd 1 at stderr, so whatever a tool prints (even a C library or a child process
writing to fd 1) ends up in Navi's log, never in a frame. Calls run concurrently as tasks; a cancel
request cancels the call's task. The host ends when Navi closes its end of the pipe.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import sys
from pathlib import Path
from typing import Any

from navi import runctx
from navi.tools.base import Tool, ToolResult
from navi.tools.host.imports import as_result, load_tool_file
from navi.tools.host.protocol import MAX_FRAME, ProtocolError, encode, read_frame


def _take_protocol_fds() -> tuple[int, int]:
    """The protocol's (input, output) descriptors, with fds 0 and 1 given to /dev/null and stderr."""
    proto_in, proto_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return proto_in, proto_out


class Host:
    def __init__(self, fd_in: int, fd_out: int) -> None:
        self.fd_in = fd_in
        self.fd_out = fd_out
        self.tools: dict[str, Tool] = {}
        self.calls: dict[Any, asyncio.Task[None]] = {}

    def send(self, message: dict[str, Any]) -> None:
        try:
            data = encode(message)
        except ProtocolError as exc:
            data = encode({"id": message.get("id"), "error": f"the tool's result cannot be returned: {exc}"})
        view = memoryview(data)
        while view:
            written = os.write(self.fd_out, view)
            view = view[written:]

    def import_file(self, request: dict[str, Any]) -> dict[str, Any]:
        tools, problems = load_tool_file(Path(str(request.get("path"))))
        listed = []
        for tool in tools:
            self.tools.setdefault(tool.name, tool)  # as in Navi: an earlier file keeps its name
            listed.append(
                {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                    "timeout": tool.timeout,
                }
            )
        return {"id": request.get("id"), "tools": listed, "problems": problems}

    async def call(self, request: dict[str, Any]) -> None:
        rid = request.get("id")
        name = request.get("tool")
        tool = self.tools.get(name) if isinstance(name, str) else None
        try:
            if tool is None:
                self.send({"id": rid, "error": f"no tool named {name!r} is loaded in the tool host"})
                return
            args = request.get("args")
            ctx = runctx.RunContext(
                session_id=str(request.get("session_id") or "tool-host"), persistent=False
            )
            with runctx.using(ctx):
                result = as_result(await tool.execute(args if isinstance(args, dict) else {}))
            self.send({"id": rid, "result": _result(result)})
        except asyncio.CancelledError:
            self.send({"id": rid, "cancelled": True})
        except (Exception, SystemExit) as exc:  # a class tool may raise; sys.exit() is a failure too
            self.send({"id": rid, "result": _result(ToolResult.fail(f"{type(exc).__name__}: {exc}"))})
        finally:
            self.calls.pop(rid, None)

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=MAX_FRAME)
        pipe = os.fdopen(self.fd_in, "rb", buffering=0)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
        while True:
            try:
                request = await read_frame(reader)
            except ProtocolError as exc:
                print(f"tool host: {exc}", file=sys.stderr)
                break
            if request is None:
                break
            op = request.get("op")
            if op == "ping":
                self.send({"id": request.get("id"), "pong": True})
            elif op == "import":
                self.send(self.import_file(request))
            elif op == "call":
                self.calls[request.get("id")] = asyncio.create_task(self.call(request))
            elif op == "cancel":
                task = self.calls.get(request.get("id"))
                if task is not None:
                    task.cancel()
            else:
                self.send({"id": request.get("id"), "error": f"unknown request {op!r}"})
        for task in list(self.calls.values()):
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.gather(*self.calls.values(), return_exceptions=True), 1.0)


def _result(result: ToolResult) -> dict[str, Any]:
    # Intents (such as switching profile) are the loop's business and stay with built-in tools.
    return {
        "success": bool(result.success),
        "output": str(result.output),
        "error": None if result.error is None else str(result.error),
        "metadata": result.metadata if isinstance(result.metadata, dict) else {},
    }


def main() -> None:
    proto_in, proto_out = _take_protocol_fds()
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    asyncio.run(Host(proto_in, proto_out).serve())
