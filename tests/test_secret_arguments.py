"""A tool's secret arguments (`Tool.secret_arguments`) through the real agent loop, without a browser.

The vault tool says `pin` is secret once it is armed. Armed before the turn, its PIN is replaced by
the marker in the stored call, the frames and the model's next request, and the tool still gets the
real value. A call after another of its tool in the same reply (as a browser click can turn the
next field into a password field) is hidden for the worst case. A tool that does not foresee that
gets no call whose PIN is already stored in plain text: it is not run, so the value never reaches
the secret field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from navi.agent.events import ToolEvent
from navi.profiles.base import AgentProfile
from navi.testing.script import Reply, ScriptedCall
from navi.tools.base import SECRET_MARKER, Tool, ToolResult
from tests.agent_helpers import collect, scripted_runtime

VAULTED = AgentProfile(
    id="vaulted", name="Vaulted", description="", system_prompt="Vault.", enabled_tools=["vault"]
)


class Vault(Tool):
    name = "vault"
    description = "Arm the vault, or enter a PIN."
    parameters = {
        "type": "object",
        "properties": {"action": {"type": "string", "enum": ["arm", "enter"]}, "pin": {"type": "string"}},
        "required": ["action"],
    }

    def __init__(self) -> None:
        self.armed = False
        self.entered: list[str] = []

    async def secret_arguments(self, params: dict[str, Any], *, after: bool = False) -> frozenset[str]:
        return frozenset({"pin"}) if self.armed or (after and params["action"] == "enter") else frozenset()

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        if params["action"] == "arm":
            self.armed = True
            return ToolResult.ok("armed")
        self.entered.append(str(params.get("pin")))
        return ToolResult.ok("opened")


async def test_a_secret_argument_is_stored_as_the_marker_and_reaches_only_the_tool(tmp_path: Path) -> None:
    rt, _backend, script = await scripted_runtime(tmp_path, planning_enabled=False)
    vault = Vault()
    vault.armed = True
    rt.tools.register(vault, builtin=True)
    script.turn(Reply(tool_calls=[ScriptedCall("vault", {"action": "enter", "pin": "8472"})]))
    script.turn("Opened.")
    rt.profiles.register(VAULTED)
    session = await rt.sessions.create("vaulted")
    events = await collect(rt.agent.run_stream(session.id, "open the vault"))
    assert vault.entered == ["8472"]
    stored = await rt.sessions.get(session.id)
    assert stored is not None
    calls = [c for m in stored.messages for c in m.tool_calls]
    assert [c.arguments for c in calls] == [{"action": "enter", "pin": SECRET_MARKER}]
    assert "8472" not in json.dumps([e.model_dump(mode="json") for e in events])
    assert "8472" not in json.dumps([m.model_dump(mode="json") for m in script.requests[-1].messages])
    await rt.aclose()


class CarelessVault(Vault):
    """A vault that does not foresee what an earlier call of the same reply does."""

    async def secret_arguments(self, params: dict[str, Any], *, after: bool = False) -> frozenset[str]:
        return await super().secret_arguments(params)


async def arm_then_enter(tmp_path: Path, vault: Vault, answer: str) -> tuple[Any, Any, list[Any]]:
    """One turn in which the model arms `vault` and enters the PIN in the same reply, then says
    `answer`: the runtime, the session and the turn's events."""
    rt, _backend, script = await scripted_runtime(tmp_path, planning_enabled=False)
    rt.tools.register(vault, builtin=True)
    arm, enter = (
        ScriptedCall("vault", {"action": "arm"}),
        ScriptedCall("vault", {"action": "enter", "pin": "8472"}),
    )
    script.turn(Reply(tool_calls=[arm, enter]))
    script.turn(answer)
    rt.profiles.register(VAULTED)
    session = await rt.sessions.create("vaulted")
    return rt, session, await collect(rt.agent.run_stream(session.id, "open the vault"))


async def test_a_call_after_another_of_its_tool_in_one_reply_is_hidden_for_the_worst_case(
    tmp_path: Path,
) -> None:
    vault = Vault()
    rt, session, events = await arm_then_enter(tmp_path, vault, "Opened.")
    assert vault.entered == ["8472"]
    stored = await rt.sessions.get(session.id)
    assert stored is not None
    calls = [c.arguments for m in stored.messages for c in m.tool_calls]
    assert calls == [{"action": "arm"}, {"action": "enter", "pin": SECRET_MARKER}]
    assert "8472" not in json.dumps([e.model_dump(mode="json") for e in events])
    await rt.aclose()


async def test_a_call_made_secret_by_an_earlier_call_of_its_batch_is_not_run(tmp_path: Path) -> None:
    vault = CarelessVault()
    rt, _session, events = await arm_then_enter(tmp_path, vault, "It did not open.")
    done = [e for e in events if isinstance(e, ToolEvent)]
    assert [d.success for d in done] == [True, False]
    assert done[1].result.startswith("Error: not run: pin would go into a secret field")
    assert vault.entered == []  # the PIN the stored reply shows went nowhere
    await rt.aclose()
