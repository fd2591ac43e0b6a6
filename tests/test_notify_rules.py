"""When Navi notifies, against a live Navi with the test as the push service: a visible page holds
pushes back; a hidden page or none at all gets the turn's answer pushed (decrypted here with the
subscription's own keys); an approval pushes at once with Allow/Deny, and answering it as the
service worker does (the browser's own sign-in) lets the turn go on; the user's per-kind settings
and quiet hours hold pushes back; no subscription falls back to nowhere (no channel here)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from navi.push import InMemoryPushStore, PushMessage
from navi.push.notifier import Notifier
from navi.push.prefs import InMemoryNotifySettings, NotifySettings, QuietHours
from navi.push.presence import FRESH_SECONDS, InMemoryPresence
from navi.sessions.memory_store import InMemorySessionStore
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.helpers.push_service import BrowserKeys, PushService
from tests.server_helpers import LiveNavi, frames_until, live_navi, use_script


@pytest.fixture
def service() -> Iterator[PushService]:
    pushes = PushService()
    yield pushes
    pushes.close()


@pytest.fixture
def navi(tmp_path: Path, fake_server: FakeModelServer) -> Iterator[LiveNavi]:
    with live_navi(
        tmp_path,
        fake_server,
        navi_fetch_allowed_hosts="127.0.0.1",
        navi_approval_mode="smart",
        planning_enabled=False,
    ) as server:
        yield server


def outcomes(navi: LiveNavi) -> list[tuple[str, str]]:
    return [(s.message.kind, s.outcome) for s in navi.app.state.services.notifier.sent]


async def wait_outcomes(navi: LiveNavi, count: int) -> list[tuple[str, str]]:
    for _ in range(300):
        if len(outcomes(navi)) >= count:
            return outcomes(navi)
        await asyncio.sleep(0.05)
    raise AssertionError(f"{outcomes(navi)}: fewer than {count} decisions")


async def turn(ws: Any, text: str) -> list[dict[str, Any]]:
    await ws.send(json.dumps({"type": "message", "content": text}))
    return await frames_until(ws, "stream_end", "error")


async def test_visible_hidden_closed_and_an_approval(
    navi: LiveNavi, service: PushService, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    browser = BrowserKeys()
    endpoint = service.endpoint("phone")
    with navi.client() as http:
        assert http.post("/push/subscriptions", json=browser.subscription(endpoint)).status_code == 201
        key = http.get("/push/key").json()["public_key"]
    sid = navi.new_session()
    script = use_script(fake_server)
    script.turn(Reply(text="Seen on the page."))
    script.turn(Reply(text="The tide turns at four."))
    async with navi.socket(sid) as ws:
        await ws.send(json.dumps({"type": "visibility", "visible": True}))
        await turn(ws, "one")
        assert await wait_outcomes(navi, 1) == [("answer", "visible")]
        await ws.send(json.dumps({"type": "visibility", "visible": False}))
        end = (await turn(ws, "two"))[-1]
        assert (await wait_outcomes(navi, 2))[1] == ("answer", "pushed")
        [pushed] = await asyncio.to_thread(service.wait, 1)
        payload = browser.open(pushed, endpoint, key)
        assert payload["kind"] == "answer" and payload["body"] == "The tide turns at four."
        # It opens the conversation at the answer (the page reveals `?m=`).
        assert payload["url"] == f"/#/s/{sid}?m={end['message_id']}" and payload["session_id"] == sid
        assert payload["message_id"] == end["message_id"]
        # A bad visibility frame is refused, saying what to send; the socket stays.
        await ws.send(json.dumps({"type": "visibility", "visible": "maybe"}))
        [refused] = await frames_until(ws, "error")
        assert refused["code"] == "bad_frame"

    # No page at all (the socket closed): an approval pushes at once, with actions that work.
    target = tmp_path / "made-while-away"
    script.turn(
        Reply(tool_calls=[ScriptedCall("terminal", {"command": f"touch {target}"})]), Reply(text="Made it.")
    )
    async with httpx.AsyncClient(base_url=navi.url, headers=navi.auth, timeout=60) as http:
        answer = asyncio.create_task(http.post(f"/sessions/{sid}/messages", json={"content": "make it"}))
        approval = (await asyncio.to_thread(service.wait, 2))[1]
        payload = browser.open(approval, endpoint, key)
        assert payload["kind"] == "approval" and payload["actions"] == [
            {"action": "allow", "title": "Allow"},
            {"action": "deny", "title": "Deny"},
        ]
        assert "terminal" in payload["body"] and approval.headers["urgency"] == "high"
        # What the service worker does on Allow: the approval answered with the browser's sign-in.
        path = f"/sessions/{payload['session_id']}/approvals/{payload['approval_id']}"
        allowed = await http.post(path, json={"decision": "allow"})
        assert allowed.status_code == 200, allowed.text
        done = await answer
        assert done.status_code == 200 and "Made it." in done.text
    assert target.exists()
    await wait_outcomes(navi, 4)
    assert outcomes(navi)[2:] == [("approval", "pushed"), ("answer", "pushed")]
    assert browser.open((await asyncio.to_thread(service.wait, 3))[2], endpoint, key)["body"] == "Made it."

    # Answers turned off in the settings: the next one is not pushed.
    with navi.client() as http:
        bad = http.put("/push/settings", json={"answers": False, "quiet": {"start": "25:00", "end": "07:00"}})
        assert bad.status_code == 422
        assert http.put("/push/settings", json={"answers": False}).json()["answers"] is False
        assert http.get("/push/settings").json()["approvals"] is True
    script.turn(Reply(text="Quietly."))
    async with navi.socket(sid) as ws:
        await turn(ws, "three")
    assert (await wait_outcomes(navi, 5))[4] == ("answer", "off")
    # A program waiting on the OpenAI-compatible API is nobody to notify, whatever the settings.
    with navi.client() as http:
        assert http.put("/push/settings", json={}).json()["answers"] is True
    script.turn(Reply(text="For the program."))
    body = {"model": "secretary", "messages": [{"role": "user", "content": "hi"}]}
    async with httpx.AsyncClient(base_url=navi.url, headers=navi.auth, timeout=60) as http:
        assert "For the program." in (await http.post("/v1/chat/completions", json=body)).text
    await asyncio.sleep(0.5)
    assert len(outcomes(navi)) == 5
    assert len(service.received) == 3


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_the_rule_in_order() -> None:
    sessions = InMemorySessionStore("/tmp/unused")
    presence_clock = Clock()
    presence = InMemoryPresence(presence_clock)
    prefs = InMemoryNotifySettings()
    channel: list[tuple[str, str, str]] = []
    moment = datetime(2026, 7, 1, 21, 30, tzinfo=UTC)  # 23:30 in Berlin (summer time)

    async def fallback(owner: str, title: str, text: str, session_id: str | None) -> bool:
        channel.append((owner, title, text))
        return owner == "has-mail"

    from zoneinfo import ZoneInfo

    notifier = Notifier(
        sessions,
        presence=presence,
        settings=prefs,
        fallback=fallback,
        zone=ZoneInfo("Europe/Berlin"),
        clock=lambda: moment,
    )
    message = PushMessage(kind="job", title="Job done", body="The report is ready.", session_id="s1")
    assert await notifier.notify("has-mail", message) == "channel"
    assert channel == [("has-mail", "Job done", "The report is ready.\n\n(Navi: /#/s/s1)")]
    assert await notifier.notify("nobody", message) == "nowhere"
    await presence.seen("page-1", "has-mail", True)
    assert await notifier.notify("has-mail", message) == "visible"
    presence_clock.now += FRESH_SECONDS + 1  # the page went silent (its worker died)
    assert await notifier.notify("has-mail", message) == "channel"
    await presence.seen("page-1", "has-mail", False)
    await prefs.put("has-mail", NotifySettings(quiet=QuietHours(start="23:00", end="07:00")))
    assert await notifier.notify("has-mail", message) == "quiet"
    await prefs.put("has-mail", NotifySettings(quiet=QuietHours(start="07:00", end="23:00")))
    assert await notifier.notify("has-mail", message) == "channel"
    await prefs.put("has-mail", NotifySettings(jobs=False))
    assert await notifier.notify("has-mail", message) == "off"
    # An answer or a reminder is pushed, never mailed: a channel only for approvals, jobs and notes.
    assert await notifier.notify("has-mail", PushMessage(kind="answer", title="t", body="b")) == "nowhere"
    assert await notifier.notify("has-mail", PushMessage(kind="reminder", title="t", body="b")) == "nowhere"
    assert await notifier.notify("has-mail", PushMessage(kind="approval", title="t", body="b")) == "channel"
    assert len(channel) == 5
    assert InMemoryPushStore  # the push path is covered in tests/test_push.py


async def test_the_notify_tool_goes_the_same_way_and_is_limited(
    navi: LiveNavi, service: PushService, fake_server: FakeModelServer
) -> None:
    browser = BrowserKeys()
    endpoint = service.endpoint("laptop")
    with navi.client() as http:
        assert http.post("/push/subscriptions", json=browser.subscription(endpoint)).status_code == 201
        key = http.get("/push/key").json()["public_key"]
    sid = navi.new_session()
    use_script(fake_server).turn(
        Reply(tool_calls=[ScriptedCall("notify", {"title": "Kettle", "body": "The water boiled."})]),
        Reply(text="Told you."),
    )
    async with httpx.AsyncClient(base_url=navi.url, headers=navi.auth, timeout=60) as http:
        done = await http.post(f"/sessions/{sid}/messages", json={"content": "tell me when it boils"})
        assert done.status_code == 200 and "Told you." in done.text
        history = (await http.get(f"/sessions/{sid}")).json()["messages"]
    got = await asyncio.to_thread(service.wait, 2)
    first = browser.open(got[0], endpoint, key)
    assert (first["kind"], first["title"], first["body"]) == ("notify", "Kettle", "The water boiled.")
    assert first["url"] == f"/#/s/{sid}"
    assert browser.open(got[1], endpoint, key)["kind"] == "answer"
    # The conversation shows it too: the call and what became of it.
    results = [m for m in history if m["role"] == "tool"]
    assert results and "sent to the user's subscribed browsers" in results[0]["content"]


async def test_the_notify_tool_refuses_past_its_rate() -> None:
    from navi import runctx
    from navi.tools.builtin.notify import PER_HOUR, NotifyTool

    clock = Clock()
    tool = NotifyTool(clock=clock)
    decided: list[PushMessage] = []

    class Counting(Notifier):
        async def notify(self, owner: str, message: PushMessage) -> Any:
            decided.append(message)
            return "nowhere"

    tool.notifier = Counting(InMemorySessionStore("/tmp/unused"))
    with runctx.using(runctx.RunContext(session_id="s1", owner="ann")):
        for _ in range(PER_HOUR):
            result = await tool.execute({"title": "t", "body": "b"})
            assert result.success and "not sent" in result.output
        refused = await tool.execute({"title": "t", "body": "b"})
        assert not refused.success and "rate limit" in (refused.error or "")
        clock.now += 3601
        assert (await tool.execute({"title": "t", "body": "b"})).success
    with runctx.using(runctx.RunContext(session_id="s2", owner="bob")):
        assert (await tool.execute({"title": "t", "body": "b"})).success  # each user has their own
    assert len(decided) == PER_HOUR + 2 and decided[0].session_id == "s1"


async def test_a_schedules_run_is_a_reminder(
    navi: LiveNavi, service: PushService, fake_server: FakeModelServer
) -> None:
    browser = BrowserKeys()
    endpoint = service.endpoint("watch")
    use_script(fake_server).turn(Reply(text="Water the plants now."))
    with navi.client() as http:
        assert http.post("/push/subscriptions", json=browser.subscription(endpoint)).status_code == 201
        key = http.get("/push/key").json()["public_key"]
        made = http.post(
            "/schedules", json={"prompt": "Remind me", "every_seconds": 3600, "title": "Plants"}
        ).json()
        assert http.post(f"/schedules/{made['id']}/run").status_code == 202
    [pushed] = await asyncio.to_thread(service.wait, 1)
    payload = browser.open(pushed, endpoint, key)
    assert (payload["kind"], payload["title"], payload["body"]) == (
        "reminder",
        "Plants",
        "Water the plants now.",
    )
    assert outcomes(navi) == [("reminder", "pushed")]


async def test_a_job_needing_approval_waits_and_notifies(
    navi: LiveNavi, service: PushService, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    browser = BrowserKeys()
    endpoint = service.endpoint("tablet")
    target = tmp_path / "made-by-the-job"
    use_script(fake_server).turn(
        Reply(tool_calls=[ScriptedCall("terminal", {"command": f"touch {target}"})]), Reply(text="File made.")
    )
    origin = navi.new_session()
    with navi.client() as http:
        assert http.post("/push/subscriptions", json=browser.subscription(endpoint)).status_code == 201
        key = http.get("/push/key").json()["public_key"]
        job = http.post(
            "/jobs", json={"prompt": "Make the file", "session_id": origin, "title": "File"}
        ).json()
    [asked] = await asyncio.to_thread(service.wait, 1)
    payload = browser.open(asked, endpoint, key)
    assert payload["kind"] == "approval" and payload["session_id"] == job["session_id"]
    assert [a["action"] for a in payload["actions"]] == ["allow", "deny"]
    assert not target.exists()  # it waits for the answer
    async with httpx.AsyncClient(base_url=navi.url, headers=navi.auth, timeout=30) as http:
        path = f"/sessions/{payload['session_id']}/approvals/{payload['approval_id']}"
        assert (await http.post(path, json={"decision": "allow"})).status_code == 200
    ended = await asyncio.to_thread(service.wait, 2)
    done = browser.open(ended[1], endpoint, key)
    assert (done["kind"], done["title"], done["body"]) == ("job", "File", "File made.")
    assert done["session_id"] == origin  # the click opens the conversation the result was posted to
    assert target.exists()


def test_an_mcp_servers_question_notifies_like_an_approval_without_buttons() -> None:
    """An MCP server's question (elicitation) while the user is away: an "approval"-kind message
    that says who asks what, opens the conversation, and has no buttons (it is answered there)."""
    from navi.protocol import ElicitationRequired
    from navi.push.notifier import Ended, run_message

    asked = ElicitationRequired(
        elicitation_id="e-1",
        server="shop",
        tool="shop__book",
        message="A table on friday: for how many people?",
        mode="form",
        requested_schema={"type": "object", "properties": {"guests": {"type": "integer"}}},
    )
    assert isinstance(asked, Ended)  # among the events a run's notifier acts on
    message = run_message("s-1", "Dinner", "answer", asked)
    assert (message.kind, message.title) == ("approval", "Navi waits for your answer · Dinner")
    assert message.body == "The MCP server “shop” asks: A table on friday: for how many people?"
    assert message.actions == () and message.approval_id is None and message.url == "/#/s/s-1"
    assert message.tag == "navi-question-e-1" and message.urgency == "high"
