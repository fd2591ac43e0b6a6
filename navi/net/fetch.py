"""How the fetching tools (`web_view`, `http_request`, `image_view`) reach the network: guarded.

Every connection goes through `GuardedTransport`, which asks the `NetGuard` to vet the URL's host
and port and then connects to the address the guard vetted, never resolving the name again: the
request's URL is rewritten to that IP while the Host header keeps the name and TLS is told the name
(`sni_hostname`), so virtual hosts and certificate checks work as before and a DNS answer that
changes between check and connect (rebinding) cannot reach a refused address.

Redirects are followed here, one hop at a time (`open_url`), so every hop is vetted the same way and
a refusal says which redirect led there. Proxy environment variables are not used: a proxy would
resolve and connect on its own, out of the guard's sight.
"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterator
from typing import Any

import httpx

from navi.net.guard import FetchRefused, NetGuard
from navi.net.tls import ca_context

MAX_REDIRECTS = 10


class GuardedTransport(httpx.AsyncBaseTransport):
    """An httpx transport that connects only to addresses its guard has vetted, by IP."""

    def __init__(self, guard: NetGuard, *, verify: ssl.SSLContext | bool = True) -> None:
        self.guard = guard
        self.verify = verify
        self._pools: dict[str, httpx.AsyncHTTPTransport] = {}  # one per host name: no shared TLS

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if url.scheme not in ("http", "https"):
            raise httpx.UnsupportedProtocol(
                f"Request URL has an unsupported protocol '{url.scheme}://'.", request=request
            )
        host = url.raw_host.decode("ascii")  # an international name in its IDNA (xn--) form
        port = url.port or (443 if url.scheme == "https" else 80)
        try:
            addresses = await self.guard.vet(host, port)
        except OSError as exc:  # the name does not resolve
            raise httpx.ConnectError(str(exc), request=request) from exc
        pool = self._pools.get(host)
        if pool is None:
            verify = ca_context() if self.verify is True else self.verify  # the store loaded once
            pool = self._pools[host] = httpx.AsyncHTTPTransport(verify=verify, trust_env=False)
        extensions = dict(request.extensions)
        if url.scheme == "https":
            extensions["sni_hostname"] = host  # the certificate is checked against the name
        failure: httpx.ConnectError | None = None
        for address in addresses:  # the next vetted address when one cannot be reached
            pinned = httpx.Request(
                request.method,
                url.copy_with(host=address),
                headers=request.headers,  # Host: the name, as the client set it
                stream=request.stream,
                extensions=extensions,
            )
            try:
                return await pool.handle_async_request(pinned)
            except httpx.ConnectError as exc:
                failure = exc
        assert failure is not None
        raise failure

    async def aclose(self) -> None:
        pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            await pool.aclose()


def web_client(
    guard: NetGuard,
    timeout: float,
    headers: dict[str, str] | None = None,
    *,
    verify: ssl.SSLContext | bool = True,
) -> httpx.AsyncClient:
    """The client every fetching tool uses: guarded connections, one timeout for each step."""
    return httpx.AsyncClient(
        transport=GuardedTransport(guard, verify=verify),
        timeout=timeout,
        headers=headers,
        trust_env=False,
    )


@contextlib.asynccontextmanager
async def open_url(
    client: httpx.AsyncClient, method: str, url: str, *, follow: bool = True, **kwargs: Any
) -> AsyncIterator[httpx.Response]:
    """A streamed response for `url`, redirects followed hop by hop (at most `MAX_REDIRECTS`).

    The response's `history` lists the redirects, as httpx's own following would. Raises
    `FetchRefused` (naming the redirect that led there), `httpx.HTTPError`, or `TimeoutError`.
    """
    request = client.build_request(method, url, **kwargs)
    history: list[httpx.Response] = []
    while True:
        try:
            response = await client.send(request, stream=True, follow_redirects=False)
        except FetchRefused as exc:
            if history:
                raise FetchRefused(f"{url} redirected to {request.url}, which was {exc}") from None
            raise
        if not follow or response.next_request is None:
            break
        await response.aclose()
        history.append(response)
        if len(history) > MAX_REDIRECTS:
            raise httpx.TooManyRedirects("Exceeded maximum allowed redirects.", request=request)
        request = response.next_request
    response.history = history
    try:
        yield response
    finally:
        await response.aclose()
