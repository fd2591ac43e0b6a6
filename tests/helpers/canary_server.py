"""A stand-in for Navi's server that has a secret in its environment from its start.

/proc/<pid>/environ shows a process's environment as it was when the process started, so a secret
a test sets later (monkeypatch) is invisible there: to test what a child can read of its server,
the server must be a process started with the secret. This one runs one job given as JSON on the
command line — a code_exec program, or one call of a user tool through the tool host — with a test
sandbox (`policy` overrides), and prints the tool's result as JSON.

    PYTHONPATH=<repo> NAVI_API_TOKEN=… python -m tests.helpers.canary_server '{"kind": "code_exec", …}'
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from navi import runctx
from navi.tools.base import ToolResult
from navi.tools.builtin.code_exec import CodeExecTool
from navi.tools.host.client import ToolHost
from navi.tools.registry import ToolRegistry
from tests.helpers.sandbox import make_sandbox


async def run(job: dict[str, Any]) -> ToolResult:
    sandbox = make_sandbox(**job.get("policy", {}))
    with runctx.using(runctx.RunContext(session_id="s1")):
        if job["kind"] == "code_exec":
            return await CodeExecTool(sandbox=sandbox).execute({"code": job["code"]})
        host = ToolHost(sandbox)
        try:
            registry = ToolRegistry(user_tools=host)
            loaded = await registry.reload_user_tools(job["tools_dir"])
            tool = registry.get(job["tool"])
            if tool is None:
                return ToolResult.fail(f"not loaded: {loaded.errors}")
            return await tool.execute({})
        finally:
            await host.aclose()


def main() -> None:
    result = asyncio.run(run(json.loads(sys.argv[1])))
    print(
        json.dumps(
            {"success": result.success, "output": result.output, "error": result.error, "pid": os.getpid()}
        )
    )


if __name__ == "__main__":
    main()
