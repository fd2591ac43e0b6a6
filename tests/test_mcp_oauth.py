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


async def test_an_expired_token_is_refreshed_without_asking_anyone(tmp_path: Path) -> None:
    """After the access token's lifetime (an hour later, as the token file says), the background
    connection trades the refresh token for new tokens at the authorization server's `/token` —
    the SDK's client, in the same process or after a restart — stores them, and gets in; nobody
    is sent to sign in again. A refresh the server refuses is "not signed in", and again nobody
    is asked."""
    tokens_file = tmp_path / "navi_mcp_oauth.json"
    with oauth_mcp_server() as (url, authority):
        [config] = parse_servers({"mcpServers": {"remote": {"url": url, "oauth": True}}})

        async def person_opens(address: str) -> None:
            async with httpx.AsyncClient(follow_redirects=True, timeout=10) as browser:
                await browser.get(address)

        assert await sign_in(config, tokens_file, person_opens) == ["whoami"]
        first = json.loads(tokens_file.read_text())["remote"]["tokens"]
        assert first["expires_at"] > 0  # kept with it: the SDK learns it only when it gets one

        def an_hour_later() -> None:  # the access token expires, at the server and in the file
            data = json.loads(tokens_file.read_text())
            token = data["remote"]["tokens"]
            authority.tokens[token["access_token"]].expires_at = 1
            token["expires_at"] = 1.0
            tokens_file.write_text(json.dumps(data))

        an_hour_later()
        connection = ServerConnection(config, tokens_file=str(tokens_file))
        connection.start()
        try:
            assert await connection.wait_started(20), connection.error
            result = await connection.call("whoami", {}, shown_as="remote__whoami")
        finally:
            await connection.aclose()
        assert result.success and result.to_message_content() == "signed in"
        now = json.loads(tokens_file.read_text())["remote"]["tokens"]
        assert now["access_token"] != first["access_token"] and now["access_token"] in authority.tokens
        assert first["refresh_token"] not in authority.refresh  # traded in (rotated)
        assert now["refresh_token"] in authority.refresh and now["expires_at"] > 1.0
        assert authority.authorized == 1  # no second sign-in

        # Refused (the refresh token was revoked): "not signed in", nobody asked.
        an_hour_later()
        authority.refresh.clear()
        refused = ServerConnection(config, tokens_file=str(tokens_file))
        refused.start()
        assert not await refused.wait_started(20)
        await refused.aclose()
        assert "not signed in to the MCP server 'remote'" in refused.error
        assert authority.authorized == 1
