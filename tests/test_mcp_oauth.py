"""OAuth for remote MCP servers: the SDK's OAuth client on Navi's token file.

Against `mcp_oauth_server.py` (the 2026 SDK as MCP server and authorization server, in memory):
a background connection without tokens fails with "not signed in" and asks nobody; the sign-in
(`sign_in`, what `navi mcp-login` runs) discovers the server through its protected resource
metadata, registers, sends the person to `/authorize` with a PKCE challenge, takes the redirect on
its loopback port and stores the tokens in a mode-600 file; the background connection then gets
in. The "person" here is an HTTP client that opens the address it is shown.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx

from navi.mcp.config import parse_servers
from navi.mcp.connection import ServerConnection
from navi.mcp.oauth import sign_in
from tests.mcp_oauth_server import oauth_mcp_server


async def test_sign_in_then_the_background_connection_gets_in(tmp_path: Path) -> None:
    tokens_file = tmp_path / "navi_mcp_oauth.json"
    with oauth_mcp_server() as (url, authority):
        [config] = parse_servers({"mcpServers": {"remote": {"url": url, "oauth": True}}})

        before = ServerConnection(config, tokens_file=str(tokens_file))
        before.start()
        assert not await before.wait_started(20)
        await before.aclose()
        assert "not signed in to the MCP server 'remote': run `navi mcp-login remote`" in before.error
        assert authority.authorized == 0 and not tokens_file.exists()  # nobody was sent anywhere

        shown: list[str] = []

        async def person_opens(address: str) -> None:  # the browser: the server approves, redirects
            shown.append(address)
            async with httpx.AsyncClient(follow_redirects=True, timeout=10) as browser:
                landed = await browser.get(address)
            assert landed.status_code == 200 and landed.text == "Navi is signed in; you can close this page."

        tools = await sign_in(config, tokens_file, person_opens)
        assert tools == ["whoami"]
        [address] = shown
        query = parse_qs(urlsplit(address).query)
        assert address.startswith(url.removesuffix("/mcp") + "/authorize?")
        assert query["code_challenge_method"] == ["S256"] and len(query["code_challenge"][0]) >= 43  # PKCE
        assert query["resource"] == [url]  # the protected resource, from its metadata
        assert query["redirect_uri"][0].startswith("http://127.0.0.1:")
        assert stat.S_IMODE(tokens_file.stat().st_mode) == 0o600
        saved = json.loads(tokens_file.read_text())["remote"]
        assert (
            saved["tokens"]["access_token"] in authority.tokens
            and saved["client"]["client_id"] in authority.clients
        )

        after = ServerConnection(config, tokens_file=str(tokens_file))
        after.start()
        try:
            assert await after.wait_started(20), after.error
            result = await after.call("whoami", {}, shown_as="remote__whoami")
        finally:
            await after.aclose()
        assert result.success and result.to_message_content() == "signed in"
        assert authority.authorized == 1  # the stored token, no second sign-in
