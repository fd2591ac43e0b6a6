"""No SSRF: web_view, http_request and image_view do not reach this machine, private networks or
cloud metadata, by any spelling of the address, through redirects or through DNS answers that change.

Real servers on 127.0.0.1 (and 127.0.0.2, a second loopback address) answer when reached, so every
refusal below would be a successful fetch without the guard; `requests` shows nothing arrived.
Names are resolved through a resolver handed to the guard as a plain function, as the composition
root hands it the system one.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from navi.compose.parts import builtin_settings, fetch_guard
from navi.config import SettingsError, load_settings
from navi.net.fetch import open_url, web_client
from navi.net.guard import FetchRefused, NetGuard, Resolver
from navi.tools.base import ToolResult
from navi.tools.builtin.http import HttpRequestTool
from navi.tools.builtin.image import ImageViewTool
from navi.tools.builtin.web import WebViewTool
from navi.tools.paths import PathPolicy
from tests.helpers.local_http import ALLOW_LOCAL, LocalHttpServer
from tests.helpers.tls import certificates

ADVICE = "Navi's fetching tools do not reach this machine or private networks unless the host is listed in "
ADVICE += "NAVI_FETCH_ALLOWED_HOSTS"

Fetch = Callable[[str], Awaitable[ToolResult]]


@pytest.fixture(scope="module")
def server() -> Iterator[LocalHttpServer]:
    with LocalHttpServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def other() -> Iterator[LocalHttpServer]:
    """A server on 127.0.0.2: loopback too, but not the allowlisted 127.0.0.1."""
    with LocalHttpServer("127.0.0.2") as srv:
        yield srv


@pytest.fixture(autouse=True)
def fresh_logs(server: LocalHttpServer, other: LocalHttpServer) -> None:
    server.requests.clear()
    other.requests.clear()


def tools(guard: NetGuard) -> dict[str, Fetch]:
    """Each fetching tool as a function of a URL, all with `guard`."""
    http, web = HttpRequestTool(guard=guard), WebViewTool(guard=guard)
    image = ImageViewTool(PathPolicy([]), guard=guard)
    return {
        "http_request": lambda url: http.execute({"method": "GET", "url": url}),
        "web_view": lambda url: web.execute({"url": url}),
        "image_view": lambda url: image.execute({"source": url}),
    }


TOOLS = ["http_request", "web_view", "image_view"]


def resolver(answers: dict[str, list[list[str]]], calls: list[str] | None = None) -> Resolver:
    """A resolver giving each name its answers in turn (the last one again once they run out)."""

    async def resolve(host: str, port: int) -> list[str]:
        if calls is not None:
            calls.append(host)
        queue = answers[host]
        return queue.pop(0) if len(queue) > 1 else queue[0]

    return resolve


def refused(result: ToolResult) -> str:
    assert not result.success, result.output[:200]
    assert result.error is not None and result.error.startswith(("refused: ", "http")), result.error
    return result.error


# --- this machine, in every spelling -----------------------------------------------------------------
SPELLINGS = [
    ("127.0.0.1", "127.0.0.1 is a loopback address"),
    ("localhost", "localhost is a loopback name"),
    ("LOCALHOST.", "localhost is a loopback name"),
    ("2130706433", "2130706433 (127.0.0.1) is a loopback address"),  # decimal
    ("0x7f.1", "0x7f.1 (127.0.0.1) is a loopback address"),  # hex, short form
    ("017700000001", "017700000001 (127.0.0.1) is a loopback address"),  # octal
    ("127.1", "127.1 (127.0.0.1) is a loopback address"),
    ("evil.example@127.0.0.1", "127.0.0.1 is a loopback address"),  # userinfo is not the host
    ("[::1]", "::1 is a loopback address"),
    ("[::ffff:127.0.0.1]", "is a loopback address in IPv6 form"),
    ("0.0.0.0", "0.0.0.0 is an unspecified address"),  # connecting to it reaches this machine
]


@pytest.mark.parametrize("name", TOOLS)
@pytest.mark.parametrize(("host", "reason"), SPELLINGS)
async def test_this_machine_is_refused_by_default(
    server: LocalHttpServer, name: str, host: str, reason: str
) -> None:
    result = await tools(NetGuard())[name](f"http://{host}:{server.port}/image.png")
    error = refused(result)
    assert error == f"refused: {reason}; {ADVICE}" or (reason in error and error.endswith(ADVICE))
    assert server.requests == []


NETWORKS = [
    ("10.1.2.3", "a private-network address"),
    ("172.16.0.1", "a private-network address"),
    ("192.168.1.1", "a private-network address"),
    ("169.254.169.254", "a cloud metadata address"),
    ("169.254.10.1", "a link-local address"),
    ("100.100.100.200", "a cloud metadata address"),
    ("100.64.0.1", "a carrier-grade NAT (shared) address"),
    ("[fd00:ec2::254]", "a cloud metadata address"),
    ("[fd12:3456::1]", "a unique-local (private) IPv6 address"),
    ("[fe80::1]", "a link-local address"),
    ("224.0.0.1", "a multicast address"),
    ("255.255.255.255", "a broadcast address"),
    ("[::]", "an unspecified address"),
    ("[::ffff:169.254.169.254]", "a cloud metadata address in IPv6 form"),
    ("[::ffff:10.0.0.1]", "a private-network address in IPv6 form"),
    ("[64:ff9b::c0a8:101]", "a private-network address in IPv6 form"),  # NAT64 of 192.168.1.1
]


@pytest.mark.parametrize(("host", "kind"), NETWORKS)
async def test_private_link_local_and_metadata_are_refused(host: str, kind: str) -> None:
    for name, fetch in tools(ALLOW_LOCAL).items():  # allowing 127.0.0.1 allows nothing else
        error = refused(await fetch(f"http://{host}/latest/meta-data/"))
        assert f"is {kind}; " in error, (name, error)
        assert error.endswith(ADVICE)


# --- the allowlist -----------------------------------------------------------------------------------
@pytest.mark.parametrize("entry", ["127.0.0.1", "127.0.0.0/8", "localhost", "LocalHost."])
async def test_listed_hosts_are_reached(server: LocalHttpServer, entry: str) -> None:
    host = "localhost" if "ocal" in entry else "127.0.0.1"
    for name, fetch in tools(NetGuard.allowing(entry)).items():
        result = await fetch(f"http://{host}:{server.port}/image.png")
        assert result.success, (name, result.error)
    assert server.requests == ["/image.png"] * 3


async def test_an_entry_with_a_port_allows_that_port_only(server: LocalHttpServer) -> None:
    fetch = tools(NetGuard.allowing(f"127.0.0.1:{server.port + 1}"))["http_request"]
    refused(await fetch(server("/plain")))
    fetch = tools(NetGuard.allowing(f"127.0.0.1:{server.port}"))["http_request"]
    assert (await fetch(server("/plain"))).success


async def test_allowing_one_address_does_not_allow_its_neighbour(other: LocalHttpServer) -> None:
    for fetch in tools(ALLOW_LOCAL).values():
        assert refused(await fetch(other("/image.png"))).startswith(
            "refused: 127.0.0.2 is a loopback address"
        )
    assert other.requests == []


# --- Navi's own listener ---------------------------------------------------------------------------
@pytest.mark.parametrize("own_host", ["127.0.0.1", "0.0.0.0", "::", "localhost"])
async def test_navis_own_port_is_refused_even_when_its_range_is_allowed(
    server: LocalHttpServer, own_host: str
) -> None:
    guard = NetGuard.allowing("127.0.0.0/8", "localhost", own=(own_host, server.port))
    for fetch in tools(guard).values():
        error = refused(await fetch(server("/image.png")))
        assert error == (
            f"refused: 127.0.0.1 port {server.port} is Navi's own server (NAVI_HOST:NAVI_PORT); Navi's "
            "fetching tools do not call Navi itself unless that exact host:port is listed in "
            "NAVI_FETCH_ALLOWED_HOSTS"
        )
    assert server.requests == []
    # Listed with its exact port, it is reached.
    guard = NetGuard.allowing(f"127.0.0.1:{server.port}", own=(own_host, server.port))
    assert (await tools(guard)["http_request"](server("/plain"))).success


async def test_the_composition_root_builds_the_guard_from_settings(server: LocalHttpServer) -> None:
    settings = load_settings(navi_fetch_allowed_hosts="127.0.0.1", navi_port=server.port)
    assert builtin_settings(settings).fetch_guard == fetch_guard(settings)
    fetch = tools(fetch_guard(settings))["http_request"]
    assert "is Navi's own server" in refused(await fetch(server("/plain")))
    elsewhere = tools(fetch_guard(load_settings(navi_fetch_allowed_hosts="127.0.0.1")))["http_request"]
    assert (await elsewhere(server("/plain"))).success  # Navi on its default port 8000: not this one
    default = tools(fetch_guard(load_settings()))["http_request"]
    assert refused(await default(server("/plain"))).startswith("refused: 127.0.0.1 is a loopback address")


def test_bad_allowlist_entries_name_the_setting() -> None:
    for bad in ("http://nas.lan", "10.0.0.0/33", "nas.lan:http", "*", "user@nas.lan", "[::1]:99999"):
        with pytest.raises(SettingsError) as err:
            load_settings(navi_fetch_allowed_hosts=f"nas.lan, {bad}")
        assert "NAVI_FETCH_ALLOWED_HOSTS" in str(err.value), bad
    ok = load_settings(navi_fetch_allowed_hosts="nas.lan:8123, 192.168.1.0/24,[fd00::1]:80, ::1 ,")
    assert ok.fetch_allowed_hosts_list == ["nas.lan:8123", "192.168.1.0/24", "[fd00::1]:80", "::1"]


# --- redirects -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", TOOLS)
async def test_a_redirect_to_a_refused_address_is_refused(
    server: LocalHttpServer, other: LocalHttpServer, name: str
) -> None:
    target = other("/image.png")
    start = server(f"/redirect-to?url={target}")
    error = refused(await tools(ALLOW_LOCAL)[name](start))
    assert error == (
        f"{start} redirected to {target}, which was refused: 127.0.0.2 is a loopback address; {ADVICE}"
    )
    assert server.requests == ["/redirect-to"]
    assert other.requests == []


async def test_every_hop_is_checked(server: LocalHttpServer) -> None:
    """Two allowed hops, then metadata; and a POST that a 307 would carry to a private address."""
    metadata = "http://169.254.169.254/latest/meta-data/iam/"
    second = server(f"/redirect-to?url={metadata}")
    first = server("/redirect-to?url=" + quote(second, safe=""))
    result = await tools(ALLOW_LOCAL)["web_view"](first)
    assert "which was refused: 169.254.169.254 is a cloud metadata address" in refused(result)
    post = await HttpRequestTool(guard=ALLOW_LOCAL).execute(
        {
            "method": "POST",
            "url": server("/redirect-to?status=307&url=http://10.0.0.8/admin"),
            "json": {"x": 1},
        }
    )
    assert "redirected to http://10.0.0.8/admin, which was refused: 10.0.0.8 is a private" in refused(post)


async def test_redirects_between_allowed_hosts_still_work(server: LocalHttpServer) -> None:
    guard = NetGuard.allowing("127.0.0.1", "127.0.0.2")
    result = await tools(guard)["http_request"](server("/redirect/2"))
    assert result.success and "(redirected 3× from" in result.output


# --- names and what they resolve to ----------------------------------------------------------------
async def test_the_connection_goes_to_the_vetted_address(server: LocalHttpServer) -> None:
    """`example.test` resolves (once) to the allowed 127.0.0.1; later answers would say 10.0.0.1.

    The request reaches the local server, by that address, with the name in the Host header: the
    connection used the vetted answer and never asked again (the system resolver knows no `.test`).
    """
    calls: list[str] = []
    rebinding = resolver({"example.test": [["127.0.0.1"], ["10.0.0.1"]]}, calls)
    guard = NetGuard.allowing("127.0.0.1", resolver=rebinding)
    result = await HttpRequestTool(guard=guard).execute(
        {"method": "GET", "url": f"http://example.test:{server.port}/echo"}
    )
    assert result.success, result.error
    assert f'"host": "example.test:{server.port}"' in result.output
    assert calls == ["example.test"]
    assert server.requests == ["/echo"]
    # The next fetch asks again, gets the private answer, and is refused before connecting.
    again = await HttpRequestTool(guard=guard).execute(
        {"method": "GET", "url": f"http://example.test:{server.port}/echo"}
    )
    assert refused(again) == f"refused: example.test (10.0.0.1) is a private-network address; {ADVICE}"
    assert server.requests == ["/echo"]


async def test_one_private_answer_among_public_ones_is_refused(server: LocalHttpServer) -> None:
    mixed = resolver({"mixed.test": [["93.184.215.14", "127.0.0.1"]]})
    for fetch in tools(NetGuard(resolver=mixed)).values():
        error = refused(await fetch(f"http://mixed.test:{server.port}/image.png"))
        assert error == f"refused: mixed.test (127.0.0.1) is a loopback address; {ADVICE}"
    assert server.requests == []


async def test_a_name_that_does_not_resolve_is_a_plain_failure() -> None:
    result = await tools(NetGuard())["http_request"]("http://no-such-host.invalid/")
    assert result.error == "could not resolve host 'no-such-host.invalid': check the spelling of the URL"


async def test_an_unreachable_address_falls_through_to_the_next_vetted_one(server: LocalHttpServer) -> None:
    """A name with two allowed answers, the first with nothing listening: the second is used."""
    two = resolver({"two.test": [["127.0.0.3", "127.0.0.1"]]})
    guard = NetGuard.allowing("127.0.0.0/8", resolver=two)
    result = await tools(guard)["http_request"](f"http://two.test:{server.port}/plain")
    assert result.success, result.error


# --- TLS: the certificate is checked against the name, not the pinned address ----------------------
async def test_https_keeps_the_name_for_sni_and_certificate_checks(tmp_path: Path) -> None:
    server_ctx, client_ctx = certificates(tmp_path)
    seen: list[str] = []

    def sni(sock: ssl.SSLObject, name: str | None, ctx: ssl.SSLContext) -> None:
        seen.append(f"sni={name}")

    server_ctx.sni_callback = sni  # type: ignore[assignment]

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        host = next(line for line in head.decode().split("\r\n") if line.lower().startswith("host:"))
        seen.append(host.lower())
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
        await writer.drain()
        writer.close()

    tls = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=server_ctx)
    port = tls.sockets[0].getsockname()[1]
    guard = NetGuard.allowing("127.0.0.1", resolver=resolver({"example.test": [["127.0.0.1"]]}))
    try:
        async with (
            web_client(guard, 5, verify=client_ctx) as client,
            open_url(client, "GET", f"https://example.test:{port}/") as response,
        ):
            assert response.status_code == 200 and await response.aread() == b"ok"
        assert seen == ["sni=example.test", f"host: example.test:{port}"]
        # By address, the same certificate does not match: verification really is against the name.
        with pytest.raises(httpx.ConnectError, match=r"CERTIFICATE_VERIFY_FAILED|IP address mismatch"):
            async with (
                web_client(guard, 5, verify=client_ctx) as client,
                open_url(client, "GET", f"https://127.0.0.1:{port}/"),
            ):
                pass
    finally:
        tls.close()
        await tls.wait_closed()


async def test_open_url_raises_refusals_for_callers() -> None:
    async with web_client(NetGuard(), 5) as client:
        with pytest.raises(FetchRefused, match=r"169\.254\.169\.254 is a cloud metadata address"):
            async with open_url(client, "GET", "http://169.254.169.254/"):
                pass
