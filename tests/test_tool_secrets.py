"""Navi's own secrets are off limits to its tools, whatever FS_ALLOWED_PATHS says.

The runtime is built by the composition root from settings, as `navi serve` builds it, so the list
of secrets (`compose.parts.secret_paths`: the database and its journals, the token file, `.env`, the
SSH hosts file) reaches the tools the real way. Each secret is tried by name, through a symlink, a
`..` path and a hard link, and through the folder that holds it.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from navi.compose.runtime import Runtime
from navi.tools.base import Tool, ToolResult
from tests.agent_helpers import scripted_runtime
from tests.helpers.local_http import png_bytes
from tests.helpers.locks import held_on

SECRET = "is one of Navi's own secret files (its database, access token, .env or SSH hosts file)"
MARK = "[Navi's own secret: off limits]"


@dataclass
class Home:
    rt: Runtime
    root: Path
    work: Path
    secrets: dict[str, Path]

    def tool(self, name: str) -> Tool:
        tool = self.rt.tools.get(name)
        assert tool is not None
        return tool

    async def fs(self, **params: object) -> ToolResult:
        return await self.tool("filesystem").execute(params)


@pytest.fixture(params=["*", "restricted"])
async def home(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Home]:
    """Navi set up in tmp_path (the working directory): data/, conf/, .env, and a work folder."""
    data, conf, work = tmp_path / "data", tmp_path / "conf", tmp_path / "work"
    for folder in (data, conf, work):
        folder.mkdir()
    hosts = conf / "ssh_hosts.json"
    hosts.write_text(
        json.dumps({"hosts": {"nas": {"host": "10.0.0.5", "username": "me", "password": "pw-1"}}})
    )
    (tmp_path / ".env").write_text("OPENAI_API_KEY=sk-env-secret\n")
    (data / "navi_token").write_text("token-secret\n")
    allowed = "*" if request.param == "*" else str(tmp_path)  # restricted, but to a folder holding them
    rt, _, _ = await scripted_runtime(
        tmp_path,
        sql=True,
        db_path=str(data / "navi.db"),
        ssh_hosts_file=str(hosts),
        fs_allowed_paths=allowed,
        terminal_allowed_commands="ls",
    )
    secrets = {
        "database": data / "navi.db",
        "token": data / "navi_token",
        "env": tmp_path / ".env",
        "ssh hosts": hosts,
    }
    try:
        yield Home(rt, tmp_path, work, secrets)
    finally:
        await rt.aclose()


def refused(result: ToolResult) -> str:
    assert not result.success, result.output[:300]
    assert SECRET in (result.error or ""), result.error
    return result.error or ""


NAMES = ["database", "token", "env", "ssh hosts"]


@pytest.mark.parametrize("name", NAMES)
async def test_secrets_cannot_be_read_changed_or_moved(home: Home, name: str) -> None:
    secret = home.secrets[name]
    before = secret.read_bytes()
    path = str(secret)
    for params in (
        {"action": "read", "path": path},
        {"action": "info", "path": path},
        {"action": "write", "path": path, "content": "overwritten"},
        {"action": "append", "path": path, "content": "more"},
        {"action": "copy", "path": path, "destination": str(home.work / "copy")},
        {"action": "move", "path": path, "destination": str(home.work / "moved")},
        {"action": "delete", "path": path},
        {"action": "copy", "path": str(home.root / "README"), "destination": path},  # onto it
        {"action": "move", "path": str(home.root / "README"), "destination": path},
    ):
        (home.root / "README").write_text("harmless")
        refused(await home.fs(**params))
    assert secret.read_bytes() == before
    assert list(home.work.iterdir()) == []
    refused(await home.tool("image_view").execute({"source": path}))


@pytest.mark.parametrize("name", NAMES)
async def test_other_paths_to_a_secret_are_refused(home: Home, name: str) -> None:
    secret = home.secrets[name]
    os.symlink(secret, home.work / "link")
    os.link(secret, home.work / "hard")
    dotted = home.work / ".." / secret.relative_to(home.root)
    for path in (home.work / "link", home.work / "hard", dotted, secret.relative_to(home.root)):
        refused(await home.fs(action="read", path=str(path)))
        refused(await home.fs(action="write", path=str(path), content="x"))
        refused(await home.tool("image_view").execute({"source": str(path)}))
    # The link itself may go: deleting it acts on the link, not on the secret.
    assert (await home.fs(action="delete", path=str(home.work / "link"))).success
    assert secret.exists()


async def test_journals_are_secrets_before_they_exist(home: Home) -> None:
    for suffix in ("-wal", "-shm", "-journal"):
        journal = home.secrets["database"].with_name("navi.db" + suffix)
        journal.unlink(missing_ok=True)
        refused(await home.fs(action="write", path=str(journal), content="x"))
        assert not journal.exists()


async def test_folders_holding_secrets_cannot_be_taken_whole(home: Home) -> None:
    for folder in ("conf", "data"):
        for params in (
            {"action": "copy", "destination": str(home.work / folder)},
            {"action": "move", "destination": str(home.work / folder)},
            {"action": "delete", "recursive": True},
        ):
            result = await home.fs(path=str(home.root / folder), **params)
            assert not result.success
            assert "holds Navi's own secret files" in (result.error or "")
    assert home.secrets["ssh hosts"].exists() and home.secrets["database"].exists()
    assert list(home.work.iterdir()) == []
    # Other files in those folders stay usable.
    (home.root / "conf" / "notes.txt").write_text("plain notes")
    assert "plain notes" in (await home.fs(action="read", path="conf/notes.txt")).output


async def test_listings_mark_secrets(home: Home) -> None:
    """Names are shown (they are no secret, and hiding them would puzzle), marked as off limits."""
    listing = await home.fs(action="list", path=str(home.root))
    assert next(x for x in listing.output.splitlines() if ".env" in x).endswith(MARK)
    recursive = await home.fs(action="list", path=str(home.root), recursive=True)
    lines = recursive.output.splitlines()[1:]
    for name in ("ssh_hosts.json", "navi.db", "navi_token"):
        line = next(x for x in lines if x.split()[1].rsplit("/", 1)[-1] == name)
        assert line.endswith(MARK), line
    found = await home.fs(action="find", path=str(home.root), pattern="*.json")
    assert f"conf/ssh_hosts.json  {MARK}" in found.output.splitlines()


async def test_everything_else_still_works(home: Home) -> None:
    (home.work / "photo.png").write_bytes(png_bytes())
    assert (await home.fs(action="write", path=str(home.work / "a.txt"), content="hi")).success
    assert "hi" in (await home.fs(action="read", path=str(home.work / "a.txt"))).output
    assert (await home.tool("image_view").execute({"source": str(home.work / "photo.png")})).success


async def test_terminal_cannot_start_in_a_secret(home: Home) -> None:
    result = await home.tool("terminal").execute({"command": "ls", "cwd": str(home.secrets["ssh hosts"])})
    refused(result)


async def test_copying_a_folder_never_opens_the_live_database(home: Home) -> None:
    """A hard link to the database inside a folder being copied is refused before it is opened:
    closing any descriptor of the file would drop the locks this process's SQLite holds on it (and
    the next `navi` command would delete the -wal under the running server)."""
    database = home.secrets["database"]
    assert held_on(os.getpid(), database), "the runtime's SQLite holds a lock on its database"
    inner = home.work / "inner"
    inner.mkdir()
    (inner / "notes.txt").write_text("plain notes")
    os.link(database, inner / "linked")
    result = await home.fs(action="copy", path=str(inner), destination=str(home.work / "copied"))
    assert not result.success and "one of Navi's own secret files" in (result.error or "")
    assert held_on(os.getpid(), database), "the database was opened and closed"
    assert (inner / "linked").exists()


async def test_a_hard_link_made_after_the_check_is_refused_without_opening_it(home: Home) -> None:
    """The worst moment: the path passed the check as a plain file, and a hard link to the database
    took its name before the open. It is refused, and this process's SQLite keeps its lock (an open
    and close of the file would have dropped it)."""
    database = home.secrets["database"]
    target = home.work / "notes.txt"
    policy = home.tool("filesystem").policy  # type: ignore[attr-defined]
    assert home.tool("image_view").policy is policy  # type: ignore[attr-defined]

    def swap(real: Path) -> None:
        if real == target:
            target.unlink()
            os.link(database, target)

    for tool, params in (
        ("filesystem", {"action": "read", "path": str(target)}),
        ("filesystem", {"action": "append", "path": str(target), "content": "x"}),
        ("image_view", {"source": str(target)}),
    ):
        target.unlink(missing_ok=True)
        target.write_text("plain notes")
        policy.after_check = swap
        try:
            result = await home.tool(tool).execute(params)
        finally:
            policy.after_check = None
        refused(result)
        assert held_on(os.getpid(), database), f"{tool} {params}: the database was opened and closed"
