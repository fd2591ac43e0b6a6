"""`navi sessions …` and `navi memory …` act on one user's sessions and memory: the owner's by
default, another's with `--user NAME`; an unknown name is one line and exit 2. Run as the real
command against a real SQLite database."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from navi.cli.main import _register, app
from navi.compose import build_runtime
from navi.config import load_settings
from navi.llm.messages import Message
from navi.sessions.models import Session, new_session_id

_register()
runner = CliRunner()


class World:
    """A database with sessions and facts of the owner, alice (made by `navi users add`) and
    carol (a name a proxy forwarded for: she owns a session but is in no users table)."""

    def __init__(self, folder: Path) -> None:
        self.env = {
            "DB_PATH": str(folder / "n.db"),
            "SESSION_FILES_DIR": str(folder / "files"),
            "TOOLS_DIR": str(folder / "tools"),
            "LOG_LEVEL": "WARNING",
        }
        self.folder = folder
        assert self.navi("users", "add", "alice").exit_code == 0
        self.sessions, self.facts = asyncio.run(self._seed())

    async def _seed(self) -> tuple[dict[str, str], dict[str, int]]:
        settings = load_settings(**{k.lower(): v for k, v in self.env.items()})
        rt = await build_runtime(settings)
        sessions, facts = {}, {}
        try:
            for owner in ("local", "alice", "carol"):
                session = Session(id=new_session_id(), profile_id="secretary", name=f"{owner}'s", owner=owner)
                session.messages = [Message(role="user", content=f"hi from {owner}")]
                await rt.sessions.insert(session)
                sessions[owner] = session.id
            for owner, value in (("local", "Oslo"), ("alice", "Lima")):
                fact, _ = await rt.memory.upsert_fact("personal", "home_city", value, owner=owner)
                facts[owner] = fact.id
        finally:
            await rt.aclose()
        return sessions, facts

    def navi(self, *args: str) -> Any:
        return runner.invoke(app, list(args), env=self.env)

    def listed(self, *user: str) -> list[str]:
        result = self.navi("sessions", "list", "--json", *user)
        assert result.exit_code == 0, result.output
        return [s["id"] for s in json.loads(result.stdout)]


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def test_sessions_list_export_rename_delete_are_one_users(world: World) -> None:
    local, alice, carol = (world.sessions[o] for o in ("local", "alice", "carol"))
    assert world.listed() == [local]  # as before: the owner's
    assert world.listed("--user", "local") == [local]
    assert world.listed("--user", "alice") == [alice]
    assert world.listed("--user", "carol") == [carol]

    # Another user's session is "no session" for the owner, and untouched.
    assert world.navi("sessions", "export", alice).exit_code == 1
    for args in (("rename", alice, "taken"), ("delete", alice)):
        refused = world.navi("sessions", *args)
        assert refused.exit_code == 1 and f"no session '{alice}'" in refused.stderr, args
    exported = world.navi("sessions", "export", alice, "--user", "alice")
    assert (
        exported.exit_code == 0 and json.loads(exported.stdout)["messages"][0]["content"] == "hi from alice"
    )
    assert world.navi("sessions", "rename", alice, "Mine", "--user", "alice").exit_code == 0
    named = json.loads(world.navi("sessions", "list", "--json", "--user", "alice").stdout)
    assert [s["name"] for s in named] == ["Mine"]
    assert world.navi("sessions", "delete", carol, "--user", "alice").exit_code == 1  # carol's, not alice's
    assert world.navi("sessions", "delete", carol, "--user", "carol").exit_code == 0
    assert world.listed("--user", "alice") == [alice] and world.listed() == [local]


def test_sessions_import_goes_to_the_named_user(world: World) -> None:
    archive = world.folder / "a.json"
    archive.write_text(world.navi("sessions", "export", world.sessions["local"]).stdout)
    imported = world.navi("sessions", "import", str(archive), "--user", "alice")
    assert imported.exit_code == 0, imported.output
    new = imported.stdout.split()[1]
    assert set(world.listed("--user", "alice")) == {world.sessions["alice"], new}
    assert world.listed() == [world.sessions["local"]]
    unknown = world.navi("sessions", "import", str(archive), "--user", "nobody")
    assert (
        unknown.exit_code == 2
        and unknown.stderr.strip() == "navi: no user 'nobody' — `navi users list` shows them"
    )
    assert len(world.listed("--user", "alice")) == 2 and world.listed() == [world.sessions["local"]]


def test_memory_list_search_forget_are_one_users(world: World) -> None:
    def listing(*user: str) -> str:
        result = world.navi("memory", "list", *user)
        assert result.exit_code == 0, result.output
        return str(result.stdout)

    assert "Oslo" in listing() and "Lima" not in listing()
    assert "Lima" in listing("--user", "alice") and "Oslo" not in listing("--user", "alice")
    found = world.navi("memory", "search", "home city", "--user", "alice")
    assert "Lima" in found.stdout and "Oslo" not in found.stdout
    # The owner cannot forget alice's fact by its number; alice's --user can.
    alices = str(world.facts["alice"])
    assert world.navi("memory", "forget", alices, "--id").exit_code == 1
    assert "Lima" in listing("--user", "alice")
    assert world.navi("memory", "forget", "home_city", "--user", "alice").stdout.strip() == "Forgot 1 fact."
    assert "Nothing remembered." in listing("--user", "alice") and "Oslo" in listing()


@pytest.mark.parametrize(
    "command",
    [
        ("sessions", "list"),
        ("sessions", "export", "s"),
        ("sessions", "rename", "s", "x"),
        ("sessions", "delete", "s"),
        ("memory", "list"),
        ("memory", "search", "city"),
        ("memory", "forget", "home_city"),
    ],
)
def test_an_unknown_user_is_one_line_and_exit_2(world: World, command: tuple[str, ...]) -> None:
    for name, says in (("nobody", "no user 'nobody'"), ("Not A Name", "'Not A Name' is not a user name")):
        result = world.navi(*command, "--user", name)
        assert result.exit_code == 2, (command, result.output)
        assert result.stderr.strip().splitlines() == [f"navi: {says} — `navi users list` shows them"]
    assert "Oslo" in world.navi("memory", "list").stdout  # nothing was touched
