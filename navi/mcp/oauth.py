"""OAuth for remote MCP servers (the authorization section of the spec), with the SDK's client.

An entry with `"oauth": true` is a server that asks for a bearer token it issues through its
authorization server. The SDK's `OAuthClientProvider` does the protocol: on a 401 it reads the
server's protected resource metadata (RFC 9728), then the authorization server's metadata,
registers Navi as a client when the server offers that (a client metadata document or dynamic
registration), and runs the authorization-code flow with PKCE, checking the issuer (RFC 9207);
later it refreshes the token once it expired. What Navi adds:

- **Where tokens live**: one file beside the database (`navi_mcp_oauth.json`, mode 600), like
  Navi's access token and push keys, hidden from the file tools and the sandbox like them; with
  each token, when it expires, so a connection opened later (a restart) refreshes an expired one.
- **Who signs in**: a person, once, with `navi mcp-login NAME`: it prints the authorization
  address to open, waits for the browser's redirect on a loopback port
  (`http://127.0.0.1:PORT/callback`), and stores the tokens. A background connection never
  starts a sign-in: without tokens (or when the refresh is refused) it fails with
  "not signed in", and the server's tools stay out until `navi mcp-login` is run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from navi.logging import get_logger
from navi.mcp.config import ServerConfig

if TYPE_CHECKING:
    from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
    from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

log = get_logger(__name__)

CALLBACK_PATH = "/callback"
LOGIN_TIMEOUT = 300.0


class SignInNeeded(RuntimeError):
    def __init__(self, server: str) -> None:
        super().__init__(f"not signed in to the MCP server '{server}': run `navi mcp-login {server}`")


class FileTokens:
    """The SDK's `TokenStorage` for one server, in Navi's OAuth file (created with mode 600)."""

    def __init__(self, path: str | Path, server: str, clock: Callable[[], float] = time.time) -> None:
        self.path = Path(path)
        self.server = server
        self.clock = clock

    def _all(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("mcp_oauth_file_unreadable", path=str(self.path), error=str(exc)[:200])
            return {}
        return data if isinstance(data, dict) else {}

    def _mine(self) -> dict[str, Any]:
        entry = self._all().get(self.server)
        return entry if isinstance(entry, dict) else {}

    def _save(self, key: str, value: dict[str, Any]) -> None:
        data = self._all()
        entry = self._mine()
        data[self.server] = {**entry, key: value}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temp = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=1)
        os.chmod(temp, 0o600)
        os.replace(temp, self.path)

    async def get_tokens(self) -> OAuthToken | None:
        from mcp.shared.auth import OAuthToken

        saved = self._mine().get("tokens")
        if not isinstance(saved, dict):
            return None
        return OAuthToken.model_validate({k: v for k, v in saved.items() if k != "expires_at"})

    async def set_tokens(self, tokens: OAuthToken) -> None:
        """Kept with when the access token expires (`expires_at`, seconds since the epoch): the
        SDK knows a token's expiry only when it receives it, not when it loads it again."""
        saved = tokens.model_dump(mode="json", exclude_none=True)
        if tokens.expires_in is not None:
            saved["expires_at"] = self.clock() + int(tokens.expires_in)
        self._save("tokens", saved)

    def expires_at(self) -> float | None:
        """When the stored access token expires (None: unknown, or no token)."""
        saved = self._mine().get("tokens")
        at = saved.get("expires_at") if isinstance(saved, dict) else None
        return float(at) if isinstance(at, int | float) else None

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        from mcp.shared.auth import OAuthClientInformationFull

        saved = self._mine().get("client")
        return OAuthClientInformationFull.model_validate(saved) if isinstance(saved, dict) else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._save("client", client_info.model_dump(mode="json", exclude_none=True))

    def signed_in(self) -> bool:
        return isinstance(self._mine().get("tokens"), dict)

    def redirect_uri(self) -> str | None:
        """The loopback address registered at the first sign-in (a later one reuses it)."""
        uris = self._mine().get("client", {}).get("redirect_uris") or []
        return str(uris[0]) if uris else None


def provider(
    config: ServerConfig,
    tokens_file: str | Path,
    *,
    redirect_uri: str = f"http://127.0.0.1:0{CALLBACK_PATH}",
    redirect_handler: Callable[[str], Awaitable[None]] | None = None,
    callback_handler: Callable[[], Awaitable[AuthorizationCodeResult]] | None = None,
) -> OAuthClientProvider:
    """The SDK's OAuth client for `config`. Without handlers (a background connection) a needed
    sign-in fails with `SignInNeeded` instead of waiting for a person."""
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientMetadata
    from pydantic import AnyUrl

    assert config.url is not None
    if redirect_handler is None and not FileTokens(tokens_file, config.name).signed_in():
        raise SignInNeeded(config.name)  # nothing to try: no registration, no request

    async def refuse(_url: str) -> None:
        raise SignInNeeded(config.name)

    async def never() -> AuthorizationCodeResult:
        raise SignInNeeded(config.name)

    metadata = OAuthClientMetadata(
        client_name="Navi",
        redirect_uris=[AnyUrl(redirect_uri)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
        scope=config.oauth_scope,
    )
    storage = FileTokens(tokens_file, config.name)
    auth = OAuthClientProvider(
        server_url=config.url,
        client_metadata=metadata,
        storage=storage,
        redirect_handler=redirect_handler or refuse,
        callback_handler=callback_handler or never,
    )
    # The stored token's expiry, which the SDK does not read back with it: an expired one is then
    # refreshed (the refresh token traded at the server's token endpoint) before a request, instead
    # of being sent, refused with 401, and taken for a sign-in nobody is there to do.
    auth.context.token_expiry_time = storage.expires_at()
    return auth


class LoopbackCallback:
    """The browser's redirect after sign-in, received on 127.0.0.1 (RFC 8252's loopback redirect)."""

    def __init__(self, port: int = 0) -> None:
        self.port = port
        self._got: asyncio.Future[dict[str, str]] | None = None
        self._server: asyncio.Server | None = None

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    async def __aenter__(self) -> LoopbackCallback:
        self._got = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *_exc: object) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = (await asyncio.wait_for(reader.readline(), 10)).decode("latin-1")
            target = line.split(" ")[1] if line.count(" ") >= 2 else ""
            parts = urlsplit(target)
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            done = parts.path == CALLBACK_PATH and ("code" in query or "error" in query)
            body = "Navi is signed in; you can close this page." if "code" in query else "Sign-in failed."
            status = "200 OK" if done else "404 Not Found"
            head = f"HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\n"
            writer.write(
                f"{head}Content-Length: {len(body.encode())}\r\nConnection: close\r\n\r\n{body}".encode()
            )
            await writer.drain()
            if done and self._got is not None and not self._got.done():
                self._got.set_result(query)
        except (TimeoutError, OSError, IndexError):
            pass
        finally:
            writer.close()

    async def wait(self) -> AuthorizationCodeResult:
        from mcp.client.auth import AuthorizationCodeResult

        assert self._got is not None
        query = await asyncio.wait_for(self._got, LOGIN_TIMEOUT)
        if "code" not in query:
            raise RuntimeError(
                f"the authorization server refused: {query.get('error_description') or query.get('error')}"
            )
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))


async def sign_in(
    config: ServerConfig, tokens_file: str | Path, show: Callable[[str], Awaitable[None]]
) -> list[str]:
    """Sign Navi in to `config`'s server: `show(url)` gives the person the address to open; the
    tokens are stored. Returns the server's tool names (the proof the token works)."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    assert config.url is not None
    registered = FileTokens(tokens_file, config.name).redirect_uri()
    port = urlsplit(registered).port or 0 if registered else 0
    async with LoopbackCallback(port) as callback:
        auth = provider(
            config,
            tokens_file,
            redirect_uri=callback.uri,
            redirect_handler=show,
            callback_handler=callback.wait,
        )
        async with (
            httpx2.AsyncClient(auth=auth, headers=config.headers, follow_redirects=True, timeout=30) as http,
            Client(streamable_http_client(config.url, http_client=http), cache=None) as client,
        ):
            listed = await client.list_tools()
    return [tool.name for tool in listed.tools]
