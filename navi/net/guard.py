"""Which network addresses the fetching tools may connect to (`NAVI_FETCH_ALLOWED_HOSTS`).

A prompt-injected model drives `web_view`, `http_request` and `image_view`, so without a guard it
could make Navi call its own API, a router's admin page or a cloud metadata service. `NetGuard.vet`
turns a URL's host and port into the addresses the caller may connect to, or raises `FetchRefused`.

The rules:
- The host is read the way the C resolver would: decimal, octal and hex IPv4 forms (`2130706433`,
  `0x7f.1`, `017700000001`), a trailing dot, upper case, IPv6 literals and IPv4-mapped IPv6 all
  become the address they mean. Names are resolved (off the event loop, through `resolver`), and
  EVERY resolved address must pass: one private answer among public ones is a refusal.
- Refused: loopback, private, link-local, unique-local, carrier-grade NAT, multicast, unspecified,
  reserved and documentation ranges, cloud metadata addresses, and the same addresses hidden
  inside IPv6 (IPv4-mapped, NAT64, 6to4, Teredo). Names under `localhost` are loopback by definition.
- The allowlist lifts that: an entry is a host name, an IP or a CIDR range, optionally with a port
  (`nas.lan`, `192.168.1.0/24`, `10.0.0.5:8123`, `[fd00::1]:80`). A name entry matches the URL's
  host name (then all its addresses are accepted); an IP or range matches each resolved address.
- Navi's own listener (`NAVI_HOST:NAVI_PORT`; with a wildcard bind, every address of this machine on
  that port) is refused even when an allowlisted range includes it, unless an entry names that
  exact port: Navi's tools never call Navi's API by accident.

The caller must connect to the addresses `vet` returns, not resolve the name again (see
`navi/net/fetch.py`), so a DNS answer that changes between check and connect (rebinding)
cannot slip through.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
import urllib.parse
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field

SETTING = "NAVI_FETCH_ALLOWED_HOSTS"
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], Awaitable[list[str]]]


class FetchRefused(Exception):
    """The guard will not connect there; the message says why and which setting changes it."""


async def system_resolver(host: str, port: int) -> list[str]:
    """The addresses `host` resolves to, through the system resolver in a worker thread."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


# --- what an address is ---------------------------------------------------------------------------
METADATA = {
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, DigitalOcean, OpenStack, Oracle
        "169.254.170.2",  # AWS ECS task credentials
        "169.254.169.123",  # AWS time sync
        "100.100.100.200",  # Alibaba Cloud
        "192.0.0.192",  # Oracle Cloud
        "168.63.129.16",  # Azure wire server (a public address, so listed by name)
        "fd00:ec2::254",  # AWS over IPv6
        "fd00:ec2::23",  # AWS DNS over IPv6
    )
}


def _nets(kind: str, *cidrs: str) -> list[tuple[IPNetwork, str]]:
    return [(ipaddress.ip_network(c), kind) for c in cidrs]


_KINDS: list[tuple[IPNetwork, str]] = [
    *_nets("an unspecified address", "0.0.0.0/8", "::/128"),
    *_nets("a loopback address", "127.0.0.0/8", "::1/128"),
    *_nets("a private-network address", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"),
    *_nets("a carrier-grade NAT (shared) address", "100.64.0.0/10"),
    *_nets("a link-local address", "169.254.0.0/16", "fe80::/10"),
    *_nets("a unique-local (private) IPv6 address", "fc00::/7"),
    *_nets("a site-local IPv6 address", "fec0::/10"),
    *_nets("a multicast address", "224.0.0.0/4", "ff00::/8"),
    *_nets("a broadcast address", "255.255.255.255/32"),
    *_nets(
        "a reserved address",
        "192.0.0.0/24",
        "192.0.2.0/24",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "240.0.0.0/4",
        "::/96",  # IPv4-compatible (deprecated)
        "100::/64",
        "2001:db8::/32",
        "64:ff9b:1::/48",
    ),
]
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_SIXTO4 = ipaddress.ip_network("2002::/16")
_TEREDO = ipaddress.ip_network("2001::/32")


def classify(ip: IPAddress) -> str | None:
    """What kind of non-public address `ip` is ("a loopback address", …), or None when public."""
    if ip in METADATA:
        return "a cloud metadata address"
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            kind = classify(embedded)
            return f"{kind} in IPv6 form" if kind else None
    for net, kind in _KINDS:
        if ip.version == net.version and ip in net:
            return kind
    if ip.is_multicast:
        return "a multicast address"
    if not ip.is_global:  # whatever else the standard library knows is not routable
        return "a reserved address"
    return None


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries and will reach (mapped, NAT64, 6to4, Teredo)."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip in _SIXTO4:
        return ip.sixtofour
    if ip in _TEREDO and ip.teredo is not None:
        return ip.teredo[1]
    return None


def _plain(ip: IPAddress) -> IPAddress:
    """The IPv4 address behind an IPv4-mapped IPv6 address, else `ip` (for comparisons)."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


# --- reading a host the way the resolver does --------------------------------------------------------
_NUMERIC_PART = re.compile(r"^(0x[0-9a-f]*|[0-9]+)$")


def _inet_aton(host: str) -> ipaddress.IPv4Address | None:
    """`host` read as the C library's inet_aton reads it (1 to 4 decimal, octal or hex parts)."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or not all(_NUMERIC_PART.match(p) for p in parts):
        return None
    values = []
    for part in parts:
        if part.startswith("0x"):
            values.append(int(part[2:] or "0", 16))
        elif len(part) > 1 and part.startswith("0"):
            if not set(part) <= set("01234567"):
                return None
            values.append(int(part, 8))
        else:
            values.append(int(part))
    *head, last = values
    if any(v > 255 for v in head) or last >= 256 ** (4 - len(head)):
        return None
    number = last
    for i, v in enumerate(head):
        number += v << (8 * (3 - i))
    return ipaddress.IPv4Address(number)


def normalize_host(host: str) -> str:
    """A host as compared and resolved: unquoted, lower case, no brackets, no trailing dots."""
    host = urllib.parse.unquote(host).strip().lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host.rstrip(".") if ":" not in host else host


def literal_ip(host: str) -> IPAddress | None:
    """The address a normalized host is written as, in any notation, or None for a name."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return _inet_aton(host)


# --- the allowlist -------------------------------------------------------------------------------
_NAME = re.compile(r"^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$")


@dataclass(frozen=True)
class AllowEntry:
    """One allowlist entry: a host name or an address range, for every port or one."""

    text: str
    name: str | None = None
    network: IPNetwork | None = None
    port: int | None = None

    def matches(self, name: str, ip: IPAddress, port: int) -> bool:
        if self.port is not None and self.port != port:
            return False
        if self.name is not None:
            return self.name == name
        assert self.network is not None
        plain = _plain(ip)
        return plain.version == self.network.version and plain in self.network


def parse_entry(raw: str) -> AllowEntry:
    """One `NAVI_FETCH_ALLOWED_HOSTS` entry; raises ValueError saying what is wrong with it."""
    text = raw.strip()
    hint = "give a host name, an IP address or a CIDR range, optionally with :port (e.g. nas.lan:8123)"
    if not text or "://" in text or "@" in text:
        raise ValueError(f"{raw!r} is not a host: {hint}")
    if "/" in text:
        try:
            network = ipaddress.ip_network(text.strip("[]"), strict=False)
        except ValueError as exc:
            raise ValueError(f"{raw!r} is not a valid CIDR range ({exc})") from None
        return AllowEntry(text, network=network)
    host, port = text, None
    bracketed = re.match(r"^\[([^\]]+)\](?::(\d+))?$", text)
    if bracketed:
        host, port_text = bracketed.group(1), bracketed.group(2)
        port = int(port_text) if port_text else None
    elif text.count(":") == 1:
        host, _, port_text = text.partition(":")
        if not port_text.isdigit():
            raise ValueError(f"{raw!r}: the port must be a number")
        port = int(port_text)
    if port is not None and not 1 <= port <= 65535:
        raise ValueError(f"{raw!r}: the port must be from 1 to 65535")
    host = normalize_host(host)
    ip = literal_ip(host)
    if ip is not None:
        return AllowEntry(text, network=ipaddress.ip_network(_plain(ip)), port=port)
    if not _NAME.match(host):
        raise ValueError(f"{raw!r} is not a host: {hint}")
    return AllowEntry(text, name=host, port=port)


def parse_allowlist(entries: Iterable[str]) -> tuple[AllowEntry, ...]:
    return tuple(parse_entry(e) for e in entries if e.strip())


# --- the guard -------------------------------------------------------------------------------------
_WIDE = "Navi's fetching tools do not reach this machine or private networks"


@dataclass(frozen=True)
class NetGuard:
    """The fetching tools' network policy, as a plain value built by the composition root.

    `own` is Navi's listener (NAVI_HOST, NAVI_PORT); `resolver` turns a name into addresses (the
    system resolver unless a test gives another).
    """

    allowed: tuple[AllowEntry, ...] = ()
    own: tuple[str, int] | None = None
    resolver: Resolver = field(default=system_resolver, compare=False)

    @classmethod
    def allowing(
        cls, *entries: str, own: tuple[str, int] | None = None, resolver: Resolver | None = None
    ) -> NetGuard:
        """A guard from allowlist entries as written in the setting (raises ValueError)."""
        return cls(parse_allowlist(entries), own, resolver or system_resolver)

    async def vet(self, host: str, port: int) -> list[str]:
        """The addresses to connect to for `host:port`, every one checked; raises `FetchRefused`.

        Resolver errors (`socket.gaierror`) propagate: an unknown name is not a refusal.
        """
        name = normalize_host(host)
        literal = literal_ip(name)
        if literal is not None:
            addresses: list[IPAddress] = [literal]
        else:
            if name == "localhost" or name.endswith(".localhost"):
                loopback = ipaddress.IPv4Address("127.0.0.1")
                self._check(name, loopback, port, shown=name, kind="a loopback name")
            answers = await self.resolver(name, port)
            if not answers:
                raise socket.gaierror(socket.EAI_NONAME, f"{name} has no addresses")
            addresses = [ipaddress.ip_address(a) for a in answers]
        for ip in addresses:
            # An odd spelling of an address is shown with the address it means; a name with its answer.
            plain = name == str(ip) or (literal is not None and ":" in name)
            shown = name if plain else f"{name} ({ip})"
            await self._check_own(name, ip, port, shown)
            self._check(name, ip, port, shown=shown)
        return [str(_plain(ip)) for ip in addresses]

    def _allowed(self, name: str, ip: IPAddress, port: int, *, exact_port: bool = False) -> bool:
        return any(e.matches(name, ip, port) and (e.port is not None or not exact_port) for e in self.allowed)

    def _check(self, name: str, ip: IPAddress, port: int, *, shown: str, kind: str | None = None) -> None:
        kind = kind or classify(ip)
        if kind is not None and not self._allowed(name, ip, port):
            raise FetchRefused(f"refused: {shown} is {kind}; {_WIDE} unless the host is listed in {SETTING}")

    async def _check_own(self, name: str, ip: IPAddress, port: int, shown: str) -> None:
        if self.own is None or port != self.own[1] or not await self._is_own(ip):
            return
        if not self._allowed(name, ip, port, exact_port=True):
            raise FetchRefused(
                f"refused: {shown} port {port} is Navi's own server (NAVI_HOST:NAVI_PORT); Navi's "
                f"fetching tools do not call Navi itself unless that exact host:port is listed in {SETTING}"
            )

    async def _is_own(self, ip: IPAddress) -> bool:
        """Whether `ip` (on Navi's port) reaches Navi's listener."""
        assert self.own is not None
        plain = _plain(ip)
        if plain.is_unspecified:  # connecting to 0.0.0.0 or :: reaches this machine
            return True
        own_host = normalize_host(self.own[0])
        own_ip = literal_ip(own_host)
        if own_ip is not None and own_ip.is_unspecified:  # bound to every address of this machine
            return _is_local_address(plain)
        try:
            own = (
                [own_ip]
                if own_ip is not None
                else [ipaddress.ip_address(a) for a in await self.resolver(own_host, 0)]
            )
        except (OSError, ValueError):
            return False
        return any(plain == _plain(o) for o in own)


def _is_local_address(ip: IPAddress) -> bool:
    """Whether `ip` belongs to this machine: only then can a socket be bound to it."""
    if ip.is_loopback:
        return True
    family = socket.AF_INET if ip.version == 4 else socket.AF_INET6
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.bind((str(ip), 0))
    except OSError:
        return False
    return True
