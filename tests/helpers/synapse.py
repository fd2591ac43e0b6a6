"""A real Matrix homeserver for the Matrix channel's tests: Synapse from PyPI, installed once into its
own venv by `scripts/synapse` (not one of Navi's dependencies), started from a configuration in a
temporary folder — SQLite, a free port, client API only (no federation), rate limits raised so the
tests are not throttled — and users registered with its shared secret.

`MatrixUser` is the second client that plays the person: plain HTTP against the client-server API,
so what the tests assert is exactly what travelled (the event's `content`, the typing notices in the
user's /sync).
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import secrets
import subprocess
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from navi.net.tls import ca_context
from navi.testing.ports import free_port
from navi.testing.threaded import ThreadedServer

ROOT = Path(__file__).resolve().parents[2]
SERVER_NAME = "navi.test"
_names = itertools.count(1)

_LIMIT = "{{per_second: 1000, burst_count: 1000}}"
CONFIG = f"""\
server_name: "{SERVER_NAME}"
pid_file: "{{base}}/homeserver.pid"
listeners:
  - port: {{port}}
    bind_addresses: ["127.0.0.1"]
    type: http
    tls: false
    x_forwarded: false
    resources:
      - names: [client]
        compress: false
database:
  name: sqlite3
  args:
    database: "{{base}}/homeserver.db"
media_store_path: "{{base}}/media"
signing_key_path: "{{base}}/signing.key"
registration_shared_secret: "{{secret}}"
macaroon_secret_key: "{{macaroon}}"
form_secret: "{{form}}"
report_stats: false
enable_registration: false
federation_domain_whitelist: []
trusted_key_servers: []
suppress_key_server_warning: true
encryption_enabled_by_default_for_room_type: "off"
presence:
  enabled: false
rc_message: {_LIMIT}
rc_registration: {_LIMIT}
rc_login:
  address: {_LIMIT}
  account: {_LIMIT}
  failed_attempts: {_LIMIT}
rc_joins:
  local: {_LIMIT}
  remote: {_LIMIT}
rc_joins_per_room: {_LIMIT}
rc_invites:
  per_room: {_LIMIT}
  per_user: {_LIMIT}
  per_issuer: {_LIMIT}
rc_3pid_validation: {_LIMIT}
rc_admin_redaction: {_LIMIT}
rc_room_creation: {_LIMIT}
rc_presence:
  per_user: {_LIMIT}
rc_delayed_event_mgmt: {_LIMIT}
"""


def synapse_python() -> str:
    """The python of Synapse's venv (installed on first use by scripts/synapse)."""
    done = subprocess.run(
        [str(ROOT / "scripts" / "synapse")], capture_output=True, text=True, timeout=900, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"scripts/synapse failed:\n{done.stderr[-3000:]}")
    return done.stdout.strip().splitlines()[-1]


@dataclass
class Synapse:
    url: str
    secret: str
    base: Path

    def register(self, name: str | None = None, password: str = "secret-pass-1") -> Account:
        """A new user, registered with the shared secret (POST /_synapse/admin/v1/register)."""
        localpart = name or f"user{next(_names)}"
        endpoint = f"{self.url}/_synapse/admin/v1/register"
        nonce = httpx.get(endpoint, timeout=30).raise_for_status().json()["nonce"]
        mac = hmac.new(self.secret.encode(), digestmod=hashlib.sha1)
        for part in (nonce, localpart, password, "notadmin"):
            mac.update(part.encode() + (b"\x00" if part != "notadmin" else b""))
        body = {
            "nonce": nonce,
            "username": localpart,
            "password": password,
            "admin": False,
            "mac": mac.hexdigest(),
        }
        made = httpx.post(endpoint, json=body, timeout=30).raise_for_status().json()
        return Account(user_id=made["user_id"], password=password, token=made["access_token"], url=self.url)

    def log(self) -> str:
        path = self.base / "synapse.out"
        return path.read_text(errors="replace")[-5000:] if path.exists() else ""


@dataclass
class Account:
    user_id: str
    password: str
    token: str
    url: str

    def client(self) -> MatrixUser:
        return MatrixUser(self)


@dataclass
class MatrixUser:
    """The person's Matrix client: plain client-server API calls with the account's token."""

    account: Account
    since: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)  # timeline events, with room_id
    ephemeral: list[dict[str, Any]] = field(default_factory=list)  # typing etc., with room_id
    invites: list[str] = field(default_factory=list)
    _http: httpx.AsyncClient | None = None

    @property
    def user_id(self) -> str:
        return self.account.user_id

    @property
    def http(self) -> httpx.AsyncClient:
        if self._http is None:
            self._http = httpx.AsyncClient(
                base_url=self.account.url + "/_matrix/client/v3",
                headers={"Authorization": f"Bearer {self.account.token}"},
                timeout=60,
            )
        return self._http

    async def close(self) -> None:
        if self._http is not None:
            await self._http.aclose()

    async def create_room(self, invite: Sequence[str] = (), *, direct: bool = False) -> str:
        body: dict[str, Any] = {"invite": list(invite), "preset": "private_chat", "is_direct": direct}
        made = await self.http.post("/createRoom", json=body)
        return str(made.raise_for_status().json()["room_id"])

    async def join(self, room_id: str) -> None:
        (await self.http.post(f"/join/{quote(room_id)}", json={})).raise_for_status()

    async def send(self, room_id: str, body: str, **content: Any) -> str:
        """A text message; its event id. `content` adds to the event (m.relates_to for a thread)."""
        event = {"msgtype": "m.text", "body": body, **content}
        txn = secrets.token_hex(8)
        sent = await self.http.put(f"/rooms/{quote(room_id)}/send/m.room.message/{txn}", json=event)
        return str(sent.raise_for_status().json()["event_id"])

    async def upload(self, name: str, data: bytes, kind: str) -> str:
        """A file in the homeserver's media repository: its mxc:// URI."""
        done = await self.http.post(
            self.account.url + "/_matrix/media/v3/upload",
            params={"filename": name},
            content=data,
            headers={"Content-Type": kind},
        )
        return str(done.raise_for_status().json()["content_uri"])

    async def download(self, mxc: str) -> bytes:
        server, _, media = mxc.removeprefix("mxc://").partition("/")
        got = await self.http.get(f"{self.account.url}/_matrix/client/v1/media/download/{server}/{media}")
        return got.raise_for_status().content

    async def sync(self, timeout_ms: int = 0) -> None:
        params: dict[str, Any] = {"timeout": timeout_ms}
        if self.since is not None:
            params["since"] = self.since
        got = (await self.http.get("/sync", params=params)).raise_for_status().json()
        self.since = got["next_batch"]
        rooms = got.get("rooms", {})
        for room_id, room in rooms.get("join", {}).items():
            for event in room.get("timeline", {}).get("events", []):
                self.events.append({**event, "room_id": room_id})
            for event in room.get("ephemeral", {}).get("events", []):
                self.ephemeral.append({**event, "room_id": room_id})
        self.invites.extend(rooms.get("invite", {}))

    async def messages(
        self, room_id: str, count: int, *, sender: str | None = None, within: float = 30
    ) -> list[dict[str, Any]]:
        """The first `count` m.room.message events in the room (from `sender` when given), waiting
        for them by long-polling /sync."""
        deadline = time.monotonic() + within
        while True:
            found = [
                e
                for e in self.events
                if e["room_id"] == room_id
                and e.get("type") == "m.room.message"
                and (sender is None or e.get("sender") == sender)
            ]
            if len(found) >= count:
                return found[:count]
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{len(found)} of {count} messages in {room_id}: {found}")
            await self.sync(timeout_ms=int(min(left, 5) * 1000))

    async def members(self, room_id: str) -> dict[str, str]:
        """user id → membership (join, invite, leave) in the room."""
        got = await self.http.get(f"/rooms/{quote(room_id)}/members")
        return {e["state_key"]: e["content"]["membership"] for e in got.raise_for_status().json()["chunk"]}


class SyncProxy:
    """A reverse proxy in front of Synapse for one client: every request passed on as it came, and
    each /sync answer handed to `rewrite` (which changes it in place) before the client reads it.

    For what only another homeserver could send: over federation, the stripped state of an invite
    (`invite_room_state`) is whatever the inviting server put there, and the client's homeserver
    passes it on, before the invite event it adds itself. One Synapse cannot make that up for its
    own users, so a test puts it in the /sync answer here."""

    def __init__(
        self,
        upstream: str,
        rewrite: Callable[[dict[str, Any]], None] = lambda answer: None,
        *,
        lose_answer: Callable[[str, str], Awaitable[bool]] | None = None,
    ) -> None:
        """`lose_answer(path, access_token)`, awaited after a message was sent (PUT …/send/…): when
        it says so, the client is told its login is unknown instead of the send's answer."""
        self.upstream = upstream
        self.rewrite = rewrite
        self.lose_answer = lose_answer
        self.rewritten = 0  # /sync answers handed to `rewrite`
        app = Starlette(routes=[Route("/{path:path}", self._pass, methods=_METHODS)])
        self._server = ThreadedServer(app, name="synapse-proxy")

    @property
    def url(self) -> str:
        return self._server.url

    def __enter__(self) -> SyncProxy:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    async def _pass(self, request: Request) -> Response:
        url = self.upstream + request.url.path + (f"?{request.url.query}" if request.url.query else "")
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_HEADERS}
        async with httpx.AsyncClient(timeout=120) as client:
            got = await client.request(request.method, url, headers=headers, content=await request.body())
        body = got.content
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        sent = request.method == "PUT" and "/send/" in request.url.path and got.status_code == 200
        if sent and self.lose_answer is not None and await self.lose_answer(request.url.path, token):
            lost = {"errcode": "M_UNKNOWN_TOKEN", "error": "Invalid access token passed."}
            return Response(json.dumps(lost).encode(), status_code=401, media_type="application/json")
        if request.url.path.endswith("/sync") and got.status_code == 200:
            answer = got.json()
            self.rewrite(answer)
            self.rewritten += 1
            body = json.dumps(answer).encode()
        kind = got.headers.get("content-type")
        return Response(body, status_code=got.status_code, media_type=kind)


_METHODS = ["GET", "POST", "PUT", "DELETE", "OPTIONS"]
_HOP_HEADERS = {"host", "content-length", "accept-encoding", "connection", "transfer-encoding"}


def _wait_ready(url: str, process: subprocess.Popen[bytes], base: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    http = httpx.Client(timeout=2, verify=ca_context())  # one certificate store for the whole wait
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"synapse exited ({process.returncode}):\n"
                + (base / "synapse.out").read_text(errors="replace")[-5000:]
            )
        try:
            if http.get(f"{url}/_matrix/client/versions").status_code == 200:
                http.close()
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    raise TimeoutError(f"synapse did not answer within {timeout} s")


def start_synapse(base: Path) -> Iterator[Synapse]:
    """Synapse running from a configuration in `base`, stopped when the iterator is closed."""
    python = synapse_python()
    port = free_port()
    secret = secrets.token_hex(16)
    base.mkdir(parents=True, exist_ok=True)
    config = base / "homeserver.yaml"
    config.write_text(
        CONFIG.format(
            base=base,
            port=port,
            secret=secret,
            macaroon=secrets.token_hex(16),
            form=secrets.token_hex(16),
        )
    )
    subprocess.run(
        [python, "-m", "synapse.app.homeserver", "-c", str(config), "--generate-keys"],
        check=True,
        capture_output=True,
        timeout=120,
        cwd=base,
    )
    url = f"http://127.0.0.1:{port}"
    with open(base / "synapse.out", "wb") as out:
        process = subprocess.Popen(
            [python, "-m", "synapse.app.homeserver", "-c", str(config)],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=base,
        )
    try:
        _wait_ready(url, process, base)
        yield Synapse(url=url, secret=secret, base=base)
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
