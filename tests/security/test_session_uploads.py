"""Each session's uploads are its own (issue 14b, item 6): the file tools, and the programs
`code_exec` and `terminal` start, reach the current session's upload folder and no other —
not another conversation's, not another user's — by name, `..`, a symlink, a listing or a search.

The tools are the real ones on real files; the children run under real bubblewrap; the last test
is two users of a live Navi, one of whose models goes after the other's upload.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from navi import runctx
from navi.sandbox import Sandbox
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from navi.tools.base import ToolResult
from navi.tools.builtin.code_exec import CodeExecTool
from navi.tools.builtin.filesystem import UPLOADS_NOTE, FilesystemTool
from navi.tools.builtin.image import ImageViewTool
from navi.tools.builtin.terminal import TerminalTool
from navi.tools.paths import PathPolicy
from tests.helpers.sandbox import make_sandbox
from tests.server_helpers import live_navi, use_script
from tests.test_users import add_user

THEIRS = "theirs-upload-4b1d-not-for-this-session"
REFUSED = "in the uploads of another session"


def png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 30, 30)).save(out, "PNG")
    return out.getvalue()


@dataclass
class Uploads:
    root: Path  # SESSION_FILES_DIR
    mine: Path
    theirs: Path
    work: Path  # a folder of the user's beside it, inside the allowed folders

    def snapshot(self) -> dict[Path, bytes]:
        return {p: p.read_bytes() for p in self.root.rglob("*") if p.is_file() and not p.is_symlink()}


@pytest.fixture
def uploads(tmp_path: Path) -> Uploads:
    root = tmp_path / "session_files"
    mine, theirs = root / "mine", root / "theirs"
    for folder in (mine, theirs):
        folder.mkdir(parents=True)
    (mine / "notes.txt").write_text("my own upload")
    (theirs / "diary.txt").write_text(THEIRS)
    (theirs / "photo.png").write_bytes(png())
    (root / "stray.txt").write_text(THEIRS)  # at the top: nobody's folder
    work = tmp_path / "work"
    work.mkdir()
    os.symlink(theirs / "diary.txt", mine / "shortcut.txt")  # a link in my own folder to theirs
    os.symlink(theirs, work / "their-folder")
    return Uploads(root, mine, theirs, work)


def policy(up: Uploads) -> PathPolicy:
    """As `register_builtins` makes it: the whole file system, SESSION_FILES_DIR as uploads."""
    return PathPolicy(["*"], base=up.work, uploads=str(up.root))


def in_session(session: str | None, **ctx: Any) -> Any:
    """The run a tool is called in (`session` None: a call outside any run)."""
    if session is None:
        return _no_run()
    return runctx.using(runctx.RunContext(session_id=session, **ctx))


class _no_run:
    def __enter__(self) -> None:
        assert runctx.current() is None

    def __exit__(self, *exc: object) -> None:
        return None


async def fs_call(up: Uploads, session: str | None = "mine", **params: Any) -> ToolResult:
    with in_session(session):
        return await FilesystemTool(policy(up)).execute(params)


def refused(result: ToolResult) -> bool:
    return not result.success and REFUSED in (result.error or "")


# --- the file tools -------------------------------------------------------------------------------

ROUTES = [
    "{theirs}/diary.txt",
    "{mine}/../theirs/diary.txt",
    "{mine}/shortcut.txt",  # a symlink in the session's own folder
    "their-folder/diary.txt",  # a symlinked folder elsewhere (relative to the working folder)
    "{root}/stray.txt",
]


# Deleting a symlink acts on the link, not on what it names: removing one's own link is allowed.
CASES = [
    (raw, action)
    for raw in ROUTES
    for action in ("read", "write", "append", "info", "delete", "list", "find")
    if not (action == "delete" and "shortcut" in raw)
]


@pytest.mark.parametrize(("raw", "action"), CASES)
async def test_another_sessions_upload_is_refused_every_way(up_action: Any, raw: str, action: str) -> None:
    result = await up_action(raw, action)
    assert refused(result), result
    assert THEIRS not in result.output


@pytest.fixture
def up_action(uploads: Uploads) -> Any:
    async def run(raw: str, action: str) -> ToolResult:
        path = raw.format(theirs=uploads.theirs, mine=uploads.mine, root=uploads.root)
        before = uploads.snapshot()
        params: dict[str, Any] = {"action": action, "path": path}
        params |= {"content": "overwritten"} if action in ("write", "append") else {}
        params |= {"pattern": "*"} if action == "find" else {}
        result = await fs_call(uploads, **params)
        assert uploads.snapshot() == before  # nothing read into the result, nothing changed
        assert (uploads.mine / "shortcut.txt").is_symlink()
        return result

    return run


async def test_copying_or_moving_across_sessions_is_refused(uploads: Uploads) -> None:
    before = uploads.snapshot()
    steal = await fs_call(
        uploads, action="copy", path=str(uploads.theirs / "diary.txt"), destination=str(uploads.mine)
    )
    plant = await fs_call(
        uploads, action="move", path=str(uploads.mine / "notes.txt"), destination=str(uploads.theirs)
    )
    into = await fs_call(
        uploads, action="copy", path=str(uploads.mine / "notes.txt"), destination=str(uploads.root / "new")
    )
    assert refused(steal) and refused(plant) and refused(into)
    assert uploads.snapshot() == before
    for action in ("copy", "move", "delete"):  # SESSION_FILES_DIR, or a folder above it, as a whole
        for folder in (uploads.root, uploads.root.parent):
            whole = await fs_call(
                uploads, action=action, path=str(folder), destination=str(uploads.work / "x"), recursive=True
            )
            assert not whole.success and "uploads of other sessions" in (whole.error or ""), whole
    assert uploads.snapshot() == before


async def test_listings_and_searches_leave_other_sessions_out(uploads: Uploads) -> None:
    top = await fs_call(uploads, action="list", path=str(uploads.root))
    assert top.success and top.output.splitlines()[1:] == ["dir  mine/", UPLOADS_NOTE]
    below = await fs_call(uploads, action="list", path=str(uploads.root.parent), recursive=True)
    assert "session_files/mine/notes.txt" in below.output and UPLOADS_NOTE in below.output
    found = await fs_call(uploads, action="find", path=str(uploads.root.parent), pattern="*")
    for listing in (top, below, found):
        # (Symlinks show what they name: the links of the fixture name their folder, nothing in it.)
        names = [line.split(" -> ")[0] for line in listing.output.splitlines()]
        assert not any("theirs" in name or "stray" in name for name in names), listing.output
    assert "session_files/mine/notes.txt" in found.output


async def test_the_sessions_own_uploads_work_as_before(uploads: Uploads) -> None:
    mine = uploads.mine
    assert (await fs_call(uploads, action="read", path=str(mine / "notes.txt"))).output.splitlines()[1] == (
        "my own upload"
    )
    assert (await fs_call(uploads, action="write", path=str(mine / "out.txt"), content="made")).success
    moved = await fs_call(uploads, action="move", path=str(mine / "out.txt"), destination=str(uploads.work))
    assert moved.success and (uploads.work / "out.txt").read_text() == "made"
    listing = await fs_call(uploads, action="list", path=str(mine))
    assert "notes.txt" in listing.output and UPLOADS_NOTE not in listing.output
    # A subagent works for its parent's session: the same folder.
    with runctx.using(runctx.RunContext(session_id="subagent_1", root_session_id="mine", is_subagent=True)):
        tool = FilesystemTool(policy(uploads))
        read = await tool.execute({"action": "read", "path": str(mine / "notes.txt")})
    assert read.success and "my own upload" in read.output


async def test_without_a_session_no_upload_folder_is_open(uploads: Uploads) -> None:
    for session in (None, "", "..", "mine/../theirs"):
        result = await fs_call(uploads, session, action="read", path=str(uploads.mine / "notes.txt"))
        assert refused(result), (session, result)


async def test_image_view_refuses_another_sessions_picture(uploads: Uploads) -> None:
    with in_session("mine"):
        theirs = await ImageViewTool(policy(uploads)).execute({"source": str(uploads.theirs / "photo.png")})
        (uploads.mine / "mine.png").write_bytes(png())
        mine = await ImageViewTool(policy(uploads)).execute({"source": str(uploads.mine / "mine.png")})
    assert refused(theirs) and "base64" not in theirs.metadata
    assert mine.success and mine.metadata["base64"]


async def test_terminal_refuses_a_program_or_folder_in_another_session(uploads: Uploads) -> None:
    program = uploads.theirs / "run.sh"
    program.write_text("#!/bin/sh\necho ran\n")
    program.chmod(0o700)
    tool = TerminalTool(["*"], policy(uploads), sandbox=make_sandbox(session_files_dir=str(uploads.root)))
    with in_session("mine"):
        as_program = await tool.execute({"command": str(program)})
        as_cwd = await tool.execute({"command": "ls", "cwd": str(uploads.theirs)})
    assert refused(as_program) and refused(as_cwd)
    assert "ran" not in as_program.output and "diary" not in as_cwd.output


# --- the sandbox ----------------------------------------------------------------------------------

READ = """
import json, os
out = {}
for p in %r:
    try:
        out[p] = open(p).read()
    except OSError as exc:
        out[p] = type(exc).__name__
try:
    out["listing"] = sorted(os.listdir(%r))
except OSError as exc:
    out["listing"] = type(exc).__name__
print(json.dumps(out))
"""


def sandboxes(up: Uploads) -> dict[str, Sandbox]:
    root = str(up.root)
    return {
        "whole-fs": make_sandbox(session_files_dir=root),
        "allowed-above": make_sandbox(allowed_paths=[up.root.parent], session_files_dir=root),
        "allowed-beside": make_sandbox(allowed_paths=[up.work], session_files_dir=root),
    }


@pytest.fixture(params=["whole-fs", "allowed-above", "allowed-beside"])
def confined(request: pytest.FixtureRequest, uploads: Uploads) -> Iterator[tuple[Uploads, Sandbox]]:
    yield uploads, sandboxes(uploads)[request.param]


async def code(sandbox: Sandbox, up: Uploads, session: str | None) -> dict[str, str]:
    paths = [str(up.mine / "notes.txt"), str(up.theirs / "diary.txt"), str(up.root / "stray.txt")]
    with in_session(session):
        tool = CodeExecTool(sandbox=sandbox, memory_mb=256)
        result = await tool.execute({"code": READ % (paths, str(up.root))})
    assert result.success, (result.error, result.output)
    assert THEIRS not in result.output
    return dict(json.loads(result.output.splitlines()[0]))


async def test_a_program_sees_only_its_sessions_uploads(confined: tuple[Uploads, Sandbox]) -> None:
    up, sandbox = confined
    seen = await code(sandbox, up, "mine")
    assert seen[str(up.mine / "notes.txt")] == "my own upload"
    assert seen[str(up.theirs / "diary.txt")] == "FileNotFoundError"
    assert seen[str(up.root / "stray.txt")] == "FileNotFoundError"
    assert seen["listing"] == ["mine"]
    assert (up.theirs / "diary.txt").read_text() == THEIRS  # hiding changes nothing on disk


async def test_a_program_run_outside_a_session_sees_no_uploads(confined: tuple[Uploads, Sandbox]) -> None:
    up, sandbox = confined
    seen = await code(sandbox, up, None)
    assert seen[str(up.mine / "notes.txt")] == "FileNotFoundError"
    assert seen[str(up.theirs / "diary.txt")] == "FileNotFoundError"
    assert seen["listing"] in ([], "FileNotFoundError")


async def test_terminal_cat_of_another_sessions_upload_fails(uploads: Uploads) -> None:
    sandbox = make_sandbox(session_files_dir=str(uploads.root))
    tool = TerminalTool(["*"], PathPolicy(["*"], uploads=str(uploads.root)), sandbox=sandbox)
    with in_session("mine"):
        theirs = await tool.execute({"command": f"cat {uploads.theirs / 'diary.txt'}"})
        mine = await tool.execute({"command": f"cat {uploads.mine / 'notes.txt'}"})
        write = await tool.execute({"command": f"cp {uploads.mine / 'notes.txt'} {uploads.theirs / 'x'}"})
    assert not theirs.success and "No such file" in theirs.output + (theirs.error or "")
    assert THEIRS not in theirs.output
    assert mine.success and mine.output.splitlines()[0] == "my own upload"
    assert not write.success and not (uploads.theirs / "x").exists()


async def test_an_upload_made_while_a_program_runs_stays_out_of_its_sight(uploads: Uploads) -> None:
    """The folder is covered, not its entries at the start: a session made later is hidden too."""
    later = uploads.root / "later"
    program = f"""
import os, time
for _ in range(200):
    if os.path.exists({str(uploads.mine / "go")!r}):
        break
    time.sleep(0.05)
print(sorted(os.listdir({str(uploads.root)!r})), os.path.exists({str(later / "new.txt")!r}))
"""
    sandbox = make_sandbox(session_files_dir=str(uploads.root))
    with in_session("mine"):
        task = asyncio.create_task(CodeExecTool(sandbox=sandbox, memory_mb=256).execute({"code": program}))
        await asyncio.sleep(1.0)
        later.mkdir()
        (later / "new.txt").write_text(THEIRS)
        (uploads.mine / "go").write_text("")
        result = await task
    assert result.success and result.output.splitlines()[0] == "['mine'] False", result.output


# --- two users of a live Navi ---------------------------------------------------------------------


def test_one_users_model_cannot_reach_another_users_upload(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    """Alice uploads a file; Bob's model, told its path, goes after it with every tool that takes
    a path and with the programs it can run. Bob's own upload stays readable to the same tools."""
    with live_navi(tmp_path, fake_server, sandbox_mode="required") as navi:
        db = Path(navi.settings.db_path)
        alice, bob = add_user(db, "alice"), add_user(db, "bob")

        def upload(token: str, name: str, data: bytes) -> tuple[str, str]:
            with navi.client(anonymous=True, headers={"Authorization": f"Bearer {token}"}) as http:
                sid = http.post("/sessions").json()["session_id"]
                resp = http.post(f"/sessions/{sid}/files", files={"file": (name, data, "text/plain")})
                assert resp.status_code == 201, resp.text
                return sid, str(resp.json()["path"])

        _, hers = upload(alice, "diary.txt", THEIRS.encode())
        _, her_photo = upload(alice, "photo.png", png())
        bobs_session, his = upload(bob, "notes.txt", b"bob's own notes")
        calls = [
            ScriptedCall("filesystem", {"action": "read", "path": hers}),
            ScriptedCall("filesystem", {"action": "write", "path": hers, "content": "overwritten"}),
            ScriptedCall("filesystem", {"action": "list", "path": str(Path(hers).parent)}),
            ScriptedCall("image_view", {"source": her_photo}),
            ScriptedCall("code_exec", {"code": f"print(open({hers!r}).read())"}),
            ScriptedCall("terminal", {"command": f"cat {hers}"}),
            ScriptedCall("terminal", {"command": f"cat {his}"}),
            ScriptedCall("code_exec", {"code": f"print(open({his!r}).read())"}),
        ]
        script = use_script(fake_server)
        script.turn(Reply(tool_calls=calls))
        script.turn("Done.")
        with navi.client(anonymous=True, headers={"Authorization": f"Bearer {bob}"}) as http:
            answer = http.post(f"/sessions/{bobs_session}/messages", json={"content": "read them"})
        assert answer.status_code == 200, answer.text
    results = [m.content or "" for m in script.of_kind("turn")[-1].messages if m.role == "tool"]
    assert len(results) == len(calls)
    for result in results[:4]:
        assert REFUSED in result, result
    assert "FileNotFoundError" in results[4] and "No such file" in results[5]
    assert "bob's own notes" in results[6] and "bob's own notes" in results[7]
    assert not any(THEIRS in r for r in results)
    assert Path(hers).read_text() == THEIRS
