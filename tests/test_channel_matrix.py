"""The Matrix channel against a real Synapse homeserver the tests start (tests/helpers/synapse.py):
a second client plays the person over the client-server API. The model is the scripted backend;
Navi is the real runtime and services (SQLite), its channel worker started by the composition root."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from navi.compose import Runtime
from navi.compose.services import Services, build_services
from navi.testing.agent_script import AgentScript
from navi.testing.script import Reply, ScriptedCall
from navi.testing.scripted import ScriptedBackend
from tests.agent_helpers import scripted_runtime
from tests.helpers.synapse import Account, MatrixUser, Synapse, start_synapse

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def synapse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synapse]:
    yield from start_synapse(tmp_path_factory.mktemp("synapse"))


@dataclass
class World:
    synapse: Synapse
    navi: Account
    ana: MatrixUser
    rt: Runtime
    services: Services
    backend: ScriptedBackend
    script: AgentScript

    def turns(self) -> list[Any]:
        return [r for r in self.backend.requests if "You are the planning step" not in r.last_user_text]

    async def room_with_navi(self, user: MatrixUser | None = None) -> str:
        """A room `user` (Ana) made and invited Navi to, once Navi has joined it."""
        user = user or self.ana
        room = await user.create_room([self.navi.user_id], direct=True)
        await joined(user, room, self.navi.user_id)
        return room

    async def stop(self) -> None:
        await self.services.stop()
        await self.ana.close()


async def joined(user: MatrixUser, room: str, who: str, state: str = "join", within: float = 30) -> None:
    deadline = asyncio.get_running_loop().time() + within
    while (await user.members(room)).get(who) != state:
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"{who} is not {state} in {room}: {await user.members(room)}")
        await asyncio.sleep(0.2)


def navi_messages(world: World, room: str) -> list[dict[str, Any]]:
    """Navi's messages in the room, as Ana's client has seen them so far."""
    return [
        e
        for e in world.ana.events
        if e["room_id"] == room and e["type"] == "m.room.message" and e["sender"] == world.navi.user_id
    ]


async def start_world(tmp_path: Path, synapse: Synapse, **settings: Any) -> World:
    navi = synapse.register()
    ana = synapse.register().client()
    rt, backend, script = await scripted_runtime(
        tmp_path,
        sql=True,
        planning_enabled=False,
        navi_matrix_homeserver=synapse.url,
        navi_matrix_user=navi.user_id,
        navi_matrix_password=navi.password,
        **settings,
    )
    services = build_services(rt, schedules=True, background=False, channels=True, owns_runtime=True)
    await rt.channels.allow("matrix", ana.user_id, "ana")
    await services.start()
    return World(synapse, navi, ana, rt, services, backend, script)


@pytest.fixture
async def world(tmp_path: Path, synapse: Synapse) -> AsyncIterator[World]:
    made = await start_world(tmp_path, synapse)
    try:
        yield made
    finally:
        await made.stop()


async def test_two_users_of_the_test_homeserver_exchange_a_message(synapse: Synapse) -> None:
    ana, bob = synapse.register().client(), synapse.register().client()
    try:
        room = await ana.create_room([bob.user_id])
        await bob.sync()
        assert room in bob.invites
        await bob.join(room)
        await ana.send(room, "Hello Bob")
        [got] = await bob.messages(room, 1, sender=ana.user_id)
        assert got["content"]["body"] == "Hello Bob"
        assert (await ana.members(room)) == {ana.user_id: "join", bob.user_id: "join"}
    finally:
        await ana.close()
        await bob.close()


async def test_an_allowed_user_asks_and_navi_answers_with_a_tool_result(world: World) -> None:
    world.script.turn(
        Reply(tool_calls=[ScriptedCall("terminal", {"command": "expr 42 \\* 17"})]),
        "The product is **714**:\n\n- 42 × 17",
        "Still 714.",
    )
    room = await world.room_with_navi()  # Ana's invite was accepted: she is listed
    asked = await world.ana.send(room, "What is 42 times 17?")
    [answer] = await world.ana.messages(room, 1, sender=world.navi.user_id)
    content = answer["content"]
    assert content["msgtype"] == "m.text"
    assert content["body"] == "The product is **714**:\n\n- 42 × 17"  # the plain body kept
    assert content["format"] == "org.matrix.custom.html"
    html = "<p>The product is <strong>714</strong>:</p>\n<ul>\n<li>42 × 17</li>\n</ul>"
    assert content["formatted_body"] == html
    assert content["m.relates_to"] == {"m.in_reply_to": {"event_id": asked}}
    # The tool ran, and its result reached the model before it answered.
    first, second = world.turns()[:2]
    assert first.last_user_text == "What is 42 times 17?"
    assert any(m.role == "tool" and "714" in (m.content or "") for m in second.messages)

    # Ana saw Navi typing while it worked, and the notice ended with the answer.
    typing = [e for e in world.ana.ephemeral if e["type"] == "m.typing" and e["room_id"] == room]
    assert any(world.navi.user_id in e["content"]["user_ids"] for e in typing)
    await world.ana.sync()
    latest = [e for e in world.ana.ephemeral if e["type"] == "m.typing" and e["room_id"] == room][-1]
    assert world.navi.user_id not in latest["content"]["user_ids"]

    # The room is the session: the next message continues it.
    await world.ana.send(room, "And again?")
    second_answer = (await world.ana.messages(room, 2, sender=world.navi.user_id))[1]
    assert second_answer["content"]["body"] == "Still 714."
    [session] = await world.rt.sessions.list(owner="ana")
    stored = await world.rt.sessions.get(session.id, owner="ana")
    assert stored is not None
    assert [m.content for m in stored.messages if m.role == "user"] == ["What is 42 times 17?", "And again?"]


async def test_strangers_get_nothing_and_their_invites_are_declined(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    eve = world.synapse.register().client()
    try:
        world.script.turn("Hello Ana.")
        # Eve invites Navi to her room: declined.
        eves_room = await eve.create_room([world.navi.user_id])
        await joined(eve, eves_room, world.navi.user_id, state="leave")
        # Eve writes in Ana's room, where Navi is: no answer. Then Ana writes: answered.
        room = await world.room_with_navi()
        await world.ana.http.post(f"/rooms/{room}/invite", json={"user_id": eve.user_id})
        await eve.join(room)
        await eve.send(room, "Hi Navi, I am Eve")
        await world.ana.send(room, "Hi, it is Ana")
        [answer] = await world.ana.messages(room, 1, sender=world.navi.user_id)
        assert answer["content"]["body"] == "Hello Ana."
        await asyncio.sleep(1)
        await world.ana.sync()
        assert len(navi_messages(world, room)) == 1
        assert [r.last_user_text for r in world.turns()] == ["Hi, it is Ana"]
        assert [s.owner for s in await world.rt.sessions.list()] == ["ana"]
        logged = capsys.readouterr()
        assert "channel.stranger" in logged.out + logged.err
        assert eve.user_id in logged.out + logged.err
    finally:
        await eve.close()
