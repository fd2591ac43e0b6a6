"""A Web Push service on 127.0.0.1, as a test's subscription endpoint, checking what Navi sends the
way a real push service does, and a browser's side of a subscription (its keys) to read it.

`PushService` accepts POSTs at `/push/<name>` and answers with the status the test set for that
name (201 by default; a list of statuses is used one per request, the last one repeated). Every
request is kept with its headers and body. `BrowserKeys` is a subscription's key pair and auth
secret; `BrowserKeys.open()` checks a kept request — the VAPID `Authorization` header's JWT
(ES256 signature over its header and claims with the key it names, `aud` the endpoint's origin,
`exp` in the future and within 24 hours, `sub` a mailto: or https: contact) and the `aes128gcm`
body decrypted with the subscription's private key and auth secret — and returns the JSON inside.
The verifier is written here, with `cryptography` and `http_ece`, not taken from pywebpush.
"""

from __future__ import annotations

import base64
import json
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from navi.testing.threaded import ThreadedServer


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Received:
    name: str
    headers: dict[str, str]
    body: bytes


@dataclass
class PushService:
    statuses: dict[str, list[int]] = field(default_factory=dict)
    received: list[Received] = field(default_factory=list)
    arrived: threading.Condition = field(default_factory=threading.Condition)

    def __post_init__(self) -> None:
        async def push(request: Request) -> Response:
            name = request.path_params["name"]
            kept = Received(name, {k.lower(): v for k, v in request.headers.items()}, await request.body())
            with self.arrived:
                self.received.append(kept)
                self.arrived.notify_all()
            queue = self.statuses.get(name) or [201]
            status = queue.pop(0) if len(queue) > 1 else queue[0]
            return Response(status_code=status, headers={"Retry-After": "0"} if status == 503 else None)

        app = Starlette(routes=[Route("/push/{name}", push, methods=["POST"])])
        self.server = ThreadedServer(app, name="push-service")
        self.server.start()

    @property
    def origin(self) -> str:
        return self.server.url

    def endpoint(self, name: str) -> str:
        return f"{self.server.url}/push/{name}"

    def wait(self, count: int, within: float = 30.0, name: str | None = None) -> list[Received]:
        """The first `count` requests (to `name`, when given), waiting for them to arrive."""
        deadline = time.monotonic() + within
        with self.arrived:
            while True:
                got = [r for r in self.received if name is None or r.name == name]
                if len(got) >= count:
                    return got
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{len(got)} of {count} pushes arrived within {within} s")
                self.arrived.wait(left)

    def close(self) -> None:
        self.server.stop()


class BrowserKeys:
    """One browser's subscription keys (what `pushManager.subscribe` makes)."""

    def __init__(self) -> None:
        self.private = ec.generate_private_key(ec.SECP256R1())
        self.auth = os.urandom(16)
        self.public = self.private.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )

    def subscription(self, endpoint: str) -> dict[str, Any]:
        return {
            "endpoint": endpoint,
            "expirationTime": None,
            "keys": {"p256dh": b64url(self.public), "auth": b64url(self.auth)},
        }

    def open(
        self, request: Received, endpoint: str, server_key: str, now: float | None = None
    ) -> dict[str, Any]:
        """The JSON a real push service would hand the browser, after checking the request."""
        claims = check_vapid(request.headers.get("authorization", ""), endpoint, server_key, now)
        assert claims["sub"].startswith(("mailto:", "https:")), claims
        assert request.headers.get("content-encoding") == "aes128gcm"
        assert int(request.headers["ttl"]) >= 0
        import http_ece

        plain = http_ece.decrypt(
            request.body, private_key=self.private, auth_secret=self.auth, version="aes128gcm"
        )
        result: dict[str, Any] = json.loads(plain)
        return result


def check_vapid(header: str, endpoint: str, server_key: str, now: float | None = None) -> dict[str, Any]:
    """RFC 8292: `vapid t=<JWT>, k=<public key>`; the JWT signed with ES256 by that key; returns
    the claims after checking `aud` and `exp`."""
    scheme, _, params = header.partition(" ")
    assert scheme.lower() == "vapid", header
    values = dict(part.strip().split("=", 1) for part in params.split(","))
    assert values["k"] == server_key, "the request names another key than Navi's public key"
    head_b64, claims_b64, sig_b64 = values["t"].split(".")
    head = json.loads(unb64url(head_b64))
    assert head == {"typ": "JWT", "alg": "ES256"}, head
    signature = unb64url(sig_b64)
    assert len(signature) == 64, "ES256 signatures are r || s, 32 bytes each"
    der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
    key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(server_key))
    try:
        key.verify(der, f"{head_b64}.{claims_b64}".encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise AssertionError("the VAPID signature does not verify") from None
    claims: dict[str, Any] = json.loads(unb64url(claims_b64))
    parts = urlsplit(endpoint)
    assert claims["aud"] == f"{parts.scheme}://{parts.netloc}", claims
    moment = time.time() if now is None else now
    assert moment < claims["exp"] <= moment + 24 * 3600, claims
    return claims
