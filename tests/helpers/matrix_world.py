"""Navi on Matrix for the tests: the real runtime and services (SQLite, a scripted model) with the
channel worker logged in to the test Synapse (tests/helpers/synapse.py), and Ana, the person on its
allowlist, as a second client."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from navi.compose import Runtime
from navi.compose.services import Services, build_services
from navi.testing.agent_script import AgentScript
from navi.testing.scripted import ScriptedBackend
from tests.agent_helpers import scripted_runtime
from tests.helpers.synapse import Account, MatrixUser, Synapse


@dataclass
class World:
    synapse: Synapse
    navi: Account
    ana: MatrixUser
    rt: Runtime
    services: Services
    backend: ScriptedBackend
    script: AgentScript
    stopped: bool = False

    def turns(self) -> list[Any]:
        return [r for r in self.backend.requests if "You are the planning step" not in r.last_user_text]

    async def room_with_navi(self, user: MatrixUser | None = None) -> str:
        """A room `user` (Ana) made and invited Navi to, once Navi has joined it."""
        user = user or self.ana
        room = await user.create_room([self.navi.user_id], direct=True)
        await joined(user, room, self.navi.user_id)
        return room

    async def stop(self) -> None:
        if self.stopped:
            return
        self.stopped = True
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


async def start_world(
    tmp_path: Path,
    synapse: Synapse,
    *,
    navi: Account | None = None,
    ana: MatrixUser | None = None,
    homeserver: str | None = None,
    **settings: Any,
) -> World:
    """Navi (the real runtime and services, a scripted model) logged in to `synapse` — through
    `homeserver` when given (a proxy in front of it) — with Ana on its Matrix allowlist."""
    navi = navi or synapse.register()
    ana = ana or synapse.register().client()
    rt, backend, script = await scripted_runtime(
        tmp_path,
        sql=True,
        planning_enabled=False,
        navi_matrix_homeserver=homeserver or synapse.url,
        navi_matrix_user=navi.user_id,
        navi_matrix_password=navi.password,
        **settings,
    )
    services = build_services(rt, schedules=True, background=False, channels=True, owns_runtime=True)
    await rt.channels.allow("matrix", ana.user_id, "ana")
    await services.start()
    return World(synapse, navi, ana, rt, services, backend, script)
