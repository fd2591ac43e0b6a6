"""Whom the Matrix channel trusts, against the test Synapse (tests/helpers/synapse.py): an invite
is taken from the one who sent it, whatever the room's stripped state says, and a schedule's answer
goes only to a room that nobody but listed people can read. Navi is the real runtime and services
(tests/helpers/matrix_world.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from navi.llm.messages import utcnow
from navi.schedules.service import NewSchedule
from tests.helpers.matrix_world import World, joined, navi_messages, start_world
from tests.helpers.synapse import MatrixUser, Synapse, SyncProxy

pytestmark = pytest.mark.slow


def said(capsys: pytest.CaptureFixture[str]) -> str:
    """What was logged since the last look: on stdout while logging is not configured in this process,
    on stderr once a test before this one configured it (navi/logging.py)."""
    captured = capsys.readouterr()
    return captured.out + captured.err


@pytest.fixture
async def world(tmp_path: Path, synapse: Synapse) -> AsyncIterator[World]:
    made = await start_world(tmp_path, synapse)
    try:
        yield made
    finally:
        await made.stop()


async def settled(user: MatrixUser, room: str, who: str, within: float = 30) -> str:
    """`who`'s membership in the room once it is no longer `invite` (Navi took up the invite)."""
    deadline = asyncio.get_running_loop().time() + within
    while (state := (await user.members(room)).get(who)) == "invite":
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"{who} is still invited to {room}")
        await asyncio.sleep(0.2)
    return str(state)


async def test_an_invite_is_from_its_sender_whatever_the_stripped_state_says(
    tmp_path: Path, synapse: Synapse, capsys: pytest.CaptureFixture[str]
) -> None:
    """Eve (not listed) invites Navi, and the invite's stripped state — the inviting server's word
    over federation — holds a member event for Navi "sent" by Ana, ahead of the invite event
    Navi's homeserver adds (`SyncProxy` puts it there, as a server of Eve's would). Navi declines:
    the inviter is the invite event's sender, Eve."""
    navi, ana = synapse.register(), synapse.register().client()

    def forge(answer: dict[str, Any]) -> None:
        for invited in answer.get("rooms", {}).get("invite", {}).values():
            forged = [
                {"type": "m.room.member", "state_key": navi.user_id, "sender": ana.user_id,
                 "content": {"membership": "invite"}},
                {"type": "m.room.member", "state_key": ana.user_id, "sender": ana.user_id,
                 "content": {"membership": "join", "displayname": "Ana"}},
            ]  # fmt: skip
            invited["invite_state"]["events"][:0] = forged

    with SyncProxy(synapse.url, forge) as proxy:
        world = await start_world(tmp_path, synapse, navi=navi, ana=ana, homeserver=proxy.url)
        eve = synapse.register().client()
        try:
            eves_room = await eve.create_room([navi.user_id, ana.user_id])  # Ana invited too
            assert await settled(eve, eves_room, navi.user_id) == "leave"  # declined
            logged = said(capsys)
            assert "channel.stranger" in logged and eve.user_id in logged
            assert "channel.matrix.joined" not in logged
            assert proxy.rewritten > 0
            await world.room_with_navi()  # Ana's own invite, through the same proxy, is taken up
        finally:
            await eve.close()
            await world.stop()


async def test_a_schedule_is_not_delivered_where_a_stranger_is_invited_or_anyone_may_read(
    world: World,
) -> None:
    eve = world.synapse.register().client()
    ana = world.ana
    try:
        invited = await world.room_with_navi()
        await ana.http.post(f"/rooms/{quote(invited)}/invite", json={"user_id": eve.user_id})
        assert (await ana.members(invited))[eve.user_id] == "invite"  # invited, not joined
        public = await world.room_with_navi()
        rule = await ana.http.put(
            f"/rooms/{quote(public)}/state/m.room.join_rules/", json={"join_rule": "public"}
        )
        rule.raise_for_status()
        readable = await world.room_with_navi()
        seen = await ana.http.put(
            f"/rooms/{quote(readable)}/state/m.room.history_visibility/",
            json={"history_visibility": "world_readable"},
        )
        seen.raise_for_status()
        world.script.turn(*["Your day: all quiet."] * 3)  # the three run side by side
        due = utcnow() + timedelta(days=365)  # any future moment: the test runs it by hand
        made = {
            room: await world.rt.schedules.create(
                "ana", NewSchedule(
                    prompt="Summarise my day", at=due.isoformat(), title="Daily",
                    deliver={"channel": "matrix", "to": room},
                ),
            )
            for room in (invited, public, readable)
        }  # fmt: skip
        runner = world.services.schedule_runner
        assert runner is not None
        await runner.tick(due + timedelta(seconds=5))
        await runner.drain()
        await asyncio.sleep(0.5)
        await ana.sync()
        not_private = "is not private: the room's"
        expected = {
            invited: f"{invited} reaches {eve.user_id}, who is not on the matrix allowlist for ana",
            public: f"{public} {not_private} join rule is 'public': people join it without an invite",
            readable: f"{readable} {not_private} history is world_readable: anyone can read it "
            "without joining",
        }
        outcome = {}
        for room, schedule in made.items():
            [run] = await world.rt.schedules.store.runs(schedule.id)
            outcome[room] = (len(navi_messages(world, room)), run.status, run.error)
        # Nothing sent to any of them; each run answered (ok) and says why it was not delivered.
        assert outcome == {r: (0, "ok", f"Not delivered to matrix:{r}: {why}") for r, why in expected.items()}
        await joined(ana, invited, eve.user_id, state="invite")  # still only invited
    finally:
        await eve.close()


async def test_a_schedule_delivers_its_answer_to_a_room_of_listed_people_only(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:

    eve = world.synapse.register().client()
    try:
        room = await world.room_with_navi()
        shared = await world.room_with_navi()
        await world.ana.http.post(f"/rooms/{shared}/invite", json={"user_id": eve.user_id})
        await eve.join(shared)
        world.script.turn("Your day: all quiet.", "Your day: all quiet.")  # the two run side by side
        due = utcnow() + timedelta(days=365)  # any future moment: the test runs it by hand
        at = due.isoformat()
        daily = await world.rt.schedules.create(
            "ana",
            NewSchedule(
                prompt="Summarise my day",
                at=at,
                title="Daily summary",
                deliver={"channel": "matrix", "to": room},
            ),
        )
        await world.rt.schedules.create(
            "ana",
            NewSchedule(
                prompt="Tell the room",
                at=at,
                title="For everyone",
                deliver={"channel": "matrix", "to": shared},
            ),
        )
        runner = world.services.schedule_runner
        assert runner is not None
        await runner.tick(due + timedelta(seconds=5))  # the runner's clock: just after it is due
        await runner.drain()
        [sent] = await world.ana.messages(room, 1, sender=world.navi.user_id)
        assert sent["content"]["body"] == "Your day: all quiet."
        assert "m.relates_to" not in sent["content"]
        await asyncio.sleep(0.5)
        await world.ana.sync()
        assert navi_messages(world, shared) == []  # Eve is in that room and not listed
        logged = capsys.readouterr()
        assert "schedule.not_delivered" in logged.out + logged.err
        assert eve.user_id in logged.out + logged.err
        [run] = await world.rt.schedules.store.runs(daily.id)
        assert run.status == "ok" and run.session_id is not None

        # Ana's reply to the delivered message goes on in the run's session.
        world.script.turn("Glad to hear.")
        await world.ana.send(
            room, "Thanks!", **{"m.relates_to": {"m.in_reply_to": {"event_id": sent["event_id"]}}}
        )
        reply = (await world.ana.messages(room, 2, sender=world.navi.user_id))[1]
        assert reply["content"]["body"] == "Glad to hear."
        stored = await world.rt.sessions.get(run.session_id, owner="ana")
        assert stored is not None
        assert [m.content for m in stored.messages][-2:] == ["Thanks!", "Glad to hear."]
    finally:
        await eve.close()
