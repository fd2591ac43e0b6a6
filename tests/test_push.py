"""Web Push without a vendor: the test is the push service (an HTTP endpoint on 127.0.0.1) and
checks each request as a real one would — the VAPID JWT's signature and claims, the `aes128gcm`
body decrypted with the subscription's own keys into the JSON Navi meant. Gone subscriptions
(404, 410) are removed, a failing service is tried again with back-off, an endpoint the network
guard refuses is never contacted, and the REST routes keep each user's browsers their own."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from navi.cli.main import _register, app
from navi.net.guard import NetGuard
from navi.push import InMemoryPushStore, PushMessage
from navi.push.models import Action, checked
from navi.push.sender import PushConfig, PushSender
from navi.push.vapid import VapidKeyError, vapid_keys
from navi.testing.fake_server import FakeModelServer
from tests.helpers.push_service import BrowserKeys, PushService
from tests.server_helpers import LiveNavi, live_navi

_register()
MOMENT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def service() -> Iterator[PushService]:
    pushes = PushService()
    yield pushes
    pushes.close()


def sender(
    tmp_path: Path, store: InMemoryPushStore, guard: NetGuard | None = None, **config: object
) -> tuple[PushSender, list[float]]:
    keys = vapid_keys(tmp_path / "vapid.pem")
    assert keys is not None
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    made = PushSender(
        store,
        keys,
        guard or NetGuard.allowing("127.0.0.1"),
        PushConfig(subject="mailto:owner@example.org", **config),  # type: ignore[arg-type]
        sleep=sleep,
    )
    return made, waits


async def subscribe(store: InMemoryPushStore, owner: str, browser: BrowserKeys, endpoint: str) -> None:
    info = browser.subscription(endpoint)
    await store.save(checked(owner, endpoint, info["keys"]["p256dh"], info["keys"]["auth"], MOMENT))


async def test_each_browser_gets_the_message_signed_and_encrypted_for_it(
    tmp_path: Path, service: PushService
) -> None:
    store = InMemoryPushStore()
    push, _ = sender(tmp_path, store)
    phone, laptop, other = BrowserKeys(), BrowserKeys(), BrowserKeys()
    await subscribe(store, "owner", phone, service.endpoint("phone"))
    await subscribe(store, "owner", laptop, service.endpoint("laptop"))
    await subscribe(store, "ann", other, service.endpoint("ann"))
    message = PushMessage(
        kind="approval",
        title="Navi waits for you",
        body="terminal: rm -rf build",
        session_id="s-1",
        approval_id="call-9",
        actions=(Action("allow", "Allow"), Action("deny", "Deny")),
        urgency="high",
    )
    outcomes = await push.deliver("owner", message)
    assert sorted(outcomes.values()) == ["sent", "sent"]
    got = {r.name: r for r in service.wait(2)}
    assert set(got) == {"phone", "laptop"}  # Ann's browser hears nothing of the owner's
    for name, browser in (("phone", phone), ("laptop", laptop)):
        payload = browser.open(got[name], service.endpoint(name), push.public_key)
        assert payload["title"] == "Navi waits for you" and payload["body"] == "terminal: rm -rf build"
        assert payload["kind"] == "approval" and payload["approval_id"] == "call-9"
        assert payload["url"] == "/#/s/s-1" and payload["session_id"] == "s-1"
        assert payload["actions"] == [
            {"action": "allow", "title": "Allow"},
            {"action": "deny", "title": "Deny"},
        ]
        assert got[name].headers["urgency"] == "high"
    # One browser's keys cannot read the other's copy.
    with pytest.raises(Exception):  # noqa: B017 - http_ece raises its own or cryptography's error
        phone.open(got["laptop"], service.endpoint("laptop"), push.public_key)
    await push.aclose()


async def test_gone_subscriptions_are_removed_and_failures_retried(
    tmp_path: Path, service: PushService
) -> None:
    store = InMemoryPushStore()
    push, waits = sender(tmp_path, store, attempts=4, backoff=1.5)
    service.statuses = {"gone": [410], "lost": [404], "flaky": [503, 500, 201], "down": [502], "bad": [400]}
    browsers = {name: BrowserKeys() for name in service.statuses}
    for name, browser in browsers.items():
        await subscribe(store, "owner", browser, service.endpoint(name))
    outcomes = await push.deliver("owner", PushMessage(kind="answer", title="Done", body="It is done."))
    by_name = {s.endpoint.rsplit("/", 1)[1]: outcomes[s.id] for s in [*await store.list("owner")]} | {}
    assert sorted(outcomes.values()) == ["failed", "failed", "gone", "gone", "sent"]
    left = sorted(s.endpoint.rsplit("/", 1)[1] for s in await store.list("owner"))
    assert left == ["bad", "down", "flaky"]  # 404 and 410 removed; a failing service keeps it
    assert by_name == {"bad": "failed", "down": "failed", "flaky": "sent"}
    counts = {name: len([r for r in service.received if r.name == name]) for name in service.statuses}
    assert counts == {"gone": 1, "lost": 1, "flaky": 3, "down": 4, "bad": 1}  # 400 is not retried
    # The flaky one's second wait doubled; 503 said Retry-After: 0, which is honoured.
    assert sorted(waits) == sorted([0.0, 3.0, 1.5, 3.0, 6.0])
    # Each retry is a new encryption and signature, readable as the first.
    for request in [r for r in service.received if r.name == "flaky"]:
        assert (
            browsers["flaky"].open(request, service.endpoint("flaky"), push.public_key)["body"]
            == "It is done."
        )
    await push.aclose()


async def test_send_returns_at_once_and_a_refused_address_is_never_contacted(
    tmp_path: Path, service: PushService
) -> None:
    store = InMemoryPushStore()
    push, _ = sender(tmp_path, store, guard=NetGuard())  # loopback not allowed
    await subscribe(store, "owner", BrowserKeys(), service.endpoint("private"))
    push.send("owner", PushMessage(kind="answer", title="x", body="y"))
    assert push._tasks  # delivered in the background
    await push.settle()
    assert service.received == []
    assert len(await store.list("owner")) == 1  # refused, not gone
    assert await push.deliver("owner", PushMessage(kind="answer", title="x", body="y")) == {
        s.id: "refused" for s in await store.list("owner")
    }
    await push.aclose()


def test_the_vapid_key_is_made_once_and_kept_private(tmp_path: Path) -> None:
    path = tmp_path / "keys" / "vapid.pem"
    first = vapid_keys(path)
    assert first is not None and stat.S_IMODE(path.stat().st_mode) == 0o600
    again = vapid_keys(path)
    assert again is not None and again.public_key == first.public_key
    assert len(first.public_key) == 87  # 65 bytes, base64url without padding
    assert vapid_keys(tmp_path / "none.pem", create=False) is None
    path.chmod(0o644)
    assert vapid_keys(path) is not None and stat.S_IMODE(path.stat().st_mode) == 0o600
    path.write_text("not a key\n")
    with pytest.raises(VapidKeyError):
        vapid_keys(path)


@pytest.fixture
def navi(tmp_path: Path, fake_server: FakeModelServer) -> Iterator[LiveNavi]:
    with live_navi(tmp_path, fake_server) as server:
        yield server


def test_subscriptions_over_rest_are_each_users_own(navi: LiveNavi, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["users", "add", "bob"], env={"DB_PATH": navi.settings.db_path, "LOG_LEVEL": "WARNING"}
    )
    bob_token = result.stdout.strip()
    browser = BrowserKeys()
    mine = browser.subscription("https://push.example.net/send/abc")
    with (
        navi.client() as http,
        navi.client(anonymous=True, headers={"Authorization": f"Bearer {bob_token}"}) as bob,
        navi.client(anonymous=True) as stranger,
    ):
        assert stranger.get("/push/key").status_code == 401
        assert stranger.post("/push/subscriptions", json=mine).status_code == 401
        key = http.get("/push/key").json()["public_key"]
        assert key == navi.runtime.push.public_key and len(key) == 87
        made = http.post("/push/subscriptions", json=mine, headers={"User-Agent": "Phone/1"})
        assert made.status_code == 201, made.text
        assert made.json()["endpoint"] == mine["endpoint"] and made.json()["user_agent"] == "Phone/1"
        assert [s["endpoint"] for s in http.get("/push/subscriptions").json()] == [mine["endpoint"]]
        assert bob.get("/push/subscriptions").json() == []
        gone = bob.request("DELETE", "/push/subscriptions", json={"endpoint": mine["endpoint"]})
        assert gone.status_code == 404 and gone.json()["code"] == "not_found"
        assert len(http.get("/push/subscriptions").json()) == 1  # Bob removed nothing
        # What no browser makes is refused, saying what is wrong.
        for bad, words in (
            ({**mine, "endpoint": "ftp://push.example.net/x"}, "http(s) URL"),
            ({**mine, "endpoint": "https://user:pw@push.example.net/x"}, "user name"),
            ({**mine, "keys": {**mine["keys"], "p256dh": "AAAA"}}, "P-256"),
            ({**mine, "keys": {**mine["keys"], "auth": "%%%"}}, "base64url"),
            ({**mine, "keys": {**mine["keys"], "p256dh": "BA" + "A" * 85}}, "not a point"),
        ):
            resp = http.post("/push/subscriptions", json=bad)
            assert resp.status_code == 422 and resp.json()["code"] == "bad_subscription", resp.text
            assert words in resp.json()["detail"]
        assert http.post("/push/subscriptions", json={"endpoint": "https://x.example/1"}).status_code == 422
        assert http.request("DELETE", "/push/subscriptions", json={"endpoint": mine["endpoint"]}).json() == {
            "ok": True
        }
        assert http.get("/push/subscriptions").json() == []
    # The key pair was made on the first start, beside the database, and survives a restart.
    pem = Path(navi.settings.vapid_file)
    assert pem.parent == Path(navi.settings.db_path).parent and stat.S_IMODE(pem.stat().st_mode) == 0o600
