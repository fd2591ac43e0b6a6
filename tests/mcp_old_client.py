"""An MCP client on the 2025 SDK (`mcp` 1.27.2), run with `navi.testing.old_mcp.old_sdk_path()`
first on PYTHONPATH: `python mcp_old_client.py URL TOKEN MESSAGE` connects over streamable HTTP
with the 2025-11-25 handshake, calls `ask`, and prints one JSON line: the negotiated version, the
tools, and the structured result."""

import asyncio
import json
import sys

import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def main(url: str, token: str, message: str) -> None:
    async with (
        httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http,
        streamable_http_client(url, http_client=http) as (read, write, _session_id),
        ClientSession(read, write) as session,
    ):
        started = await session.initialize()
        tools = sorted(t.name for t in (await session.list_tools()).tools)
        result = await session.call_tool("ask", {"message": message})
        said = {"protocol": started.protocolVersion, "tools": tools, "result": result.structuredContent}
        print(json.dumps(said))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
