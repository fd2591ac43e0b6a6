"""A stdio MCP server for the tests (run as a script): its pid, a call that hangs, its environment.

`hang` writes the server's pid to the file named by HANG_PID_FILE (an `env` entry in the
servers file) once it is running, so a test can kill the process in the middle of the call.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import anyio.to_thread
from mcp.server.mcpserver import MCPServer

server = MCPServer("navi-test-stdio")


@server.tool()
def pid() -> str:
    """The server's process id."""
    return str(os.getpid())


@server.tool()
async def hang() -> str:
    """Never returns (until the process is killed)."""
    path = os.environ.get("HANG_PID_FILE")
    if path:
        await anyio.to_thread.run_sync(_write_pid, path)
    await anyio.sleep(3600)
    return "woke up"


def _write_pid(path: str) -> None:
    Path(path + ".tmp").write_text(str(os.getpid()))
    os.replace(path + ".tmp", path)


@server.tool()
def environment() -> str:
    """The names of the environment variables the server got, and the working folder."""
    return " ".join(sorted(os.environ)) + f"\ncwd={os.getcwd()}"


if __name__ == "__main__":
    print("navi-test-stdio: starting", file=sys.stderr)
    server.run()
