"""filesystem: everyday use, paging, binary files, and every way out of the allowlist we know."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from navi.tools.builtin.filesystem import FilesystemTool
from navi.tools.paths import PathDenied, PathPolicy


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    allowed = tmp_path / "allowed"
    (allowed / "sub").mkdir(parents=True)
    (tmp_path / "allowed-evil").mkdir()
    (tmp_path / "allowed-evil" / "loot.txt").write_text("sibling secret")
    (tmp_path / "secret.txt").write_text("top secret")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "file.txt").write_text("outside data")
    (allowed / "notes.txt").write_text("line one\nline two\n")
    os.symlink(tmp_path / "secret.txt", allowed / "link_to_secret")
    os.symlink(outside, allowed / "dirlink")
    return {"root": tmp_path, "allowed": allowed, "outside": outside}


@pytest.fixture
def fs(tree: dict[str, Path]) -> FilesystemTool:
    return FilesystemTool(PathPolicy([str(tree["allowed"])], base=tree["root"]))


async def call(fs: FilesystemTool, **params: object):
    return await fs.execute(params)


ESCAPES = [
    "allowed-evil/loot.txt",  # sibling whose name starts with the allowed folder's name
    "allowed/../secret.txt",
    "allowed/sub/../../secret.txt",
    "{root}/secret.txt",  # absolute path outside
    "/etc/passwd",
    "allowed/link_to_secret",  # symlink as the last component
    "allowed/dirlink/file.txt",  # symlink as a middle component
    "~/.bashrc",
]


@pytest.mark.parametrize("raw", ESCAPES)
@pytest.mark.parametrize("action", ["read", "write", "info", "append"])
async def test_escapes_are_refused(fs: FilesystemTool, tree: dict[str, Path], raw: str, action: str) -> None:
    path = raw.format(root=tree["root"])
    before = {p: p.read_bytes() for p in tree["root"].rglob("*") if p.is_file() and not p.is_symlink()}
    result = await call(fs, action=action, path=path, content="pwned")
    assert not result.success
    assert "outside the allowed paths" in (result.error or "")
    after = {p: p.read_bytes() for p in tree["root"].rglob("*") if p.is_file() and not p.is_symlink()}
    assert after == before  # nothing was written anywhere
    assert "secret" not in result.output and "outside data" not in result.output


async def test_move_and_copy_check_both_ends(fs: FilesystemTool, tree: dict[str, Path]) -> None:
    out = await call(fs, action="copy", path="allowed/notes.txt", destination=str(tree["outside"] / "x.txt"))
    assert not out.success and not (tree["outside"] / "x.txt").exists()
    into = await call(
        fs, action="move", path=str(tree["outside"] / "file.txt"), destination="allowed/stolen.txt"
    )
    assert not into.success and (tree["outside"] / "file.txt").exists()
    listed = await call(fs, action="list", path="allowed/dirlink")
    assert not listed.success


async def test_nul_bytes_and_empty_paths(fs: FilesystemTool) -> None:
    assert "NUL" in ((await call(fs, action="read", path="allowed/notes.txt\x00.png")).error or "")
    with pytest.raises(PathDenied):
        PathPolicy(["/tmp"]).resolve("")


async def test_deleting_a_symlink_removes_the_link_only(fs: FilesystemTool, tree: dict[str, Path]) -> None:
    result = await call(fs, action="delete", path="allowed/link_to_secret")
    assert result.success
    assert not (tree["allowed"] / "link_to_secret").exists()
    assert (tree["root"] / "secret.txt").read_text() == "top secret"


async def test_write_read_append_and_list(fs: FilesystemTool, tree: dict[str, Path]) -> None:
    wrote = await call(fs, action="write", path="allowed/new/dir/report.md", content="# Report\nAll good.\n")
    assert wrote.success and (tree["allowed"] / "new/dir/report.md").read_text() == "# Report\nAll good.\n"
    assert (await call(fs, action="append", path="allowed/new/dir/report.md", content="More.\n")).success
    read = await call(fs, action="read", path="allowed/new/dir/report.md")
    assert read.output.splitlines()[1:] == ["# Report", "All good.", "More.", "[end of file]"]
    listed = await call(fs, action="list", path="allowed", recursive=True)
    assert "dir  new/dir/" in listed.output and "file new/dir/report.md" in listed.output
    assert "link link_to_secret ->" in listed.output  # shown, but not followed
    assert "file.txt" not in listed.output
    found = await call(fs, action="find", path="allowed", pattern="*.md")
    assert found.output.splitlines()[1:] == ["new/dir/report.md"]
    info = await call(fs, action="info", path="allowed/notes.txt")
    assert "file, 18 B" in info.output


async def test_large_files_are_read_in_pages(fs: FilesystemTool, tree: dict[str, Path]) -> None:
    big = tree["allowed"] / "big.log"
    big.write_text("".join(f"entry {i}\n" for i in range(1, 10_001)))
    first = await call(fs, action="read", path="allowed/big.log")
    lines = first.output.splitlines()
    assert lines[0].startswith("[allowed/big.log: lines 1–400")
    assert lines[1] == "entry 1" and lines[400] == "entry 400"
    assert lines[-1] == "[more: continue with offset 401]"
    page = await call(fs, action="read", path="allowed/big.log", offset=9990, limit=50)
    assert page.output.splitlines()[1:] == [f"entry {i}" for i in range(9990, 10_001)] + ["[end of file]"]
    past = await call(fs, action="read", path="allowed/big.log", offset=20_000)
    assert not past.success and "fewer than 20000 lines" in (past.error or "")


async def test_binary_files_are_described_not_dumped(fs: FilesystemTool, tree: dict[str, Path]) -> None:
    (tree["allowed"] / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40)
    result = await call(fs, action="read", path="allowed/photo.png")
    assert result.success
    assert "binary file (image/png" in result.output and "image_view" in result.output
    assert "\x00" not in result.output and len(result.output) < 200


async def test_delete_and_folders(fs: FilesystemTool, tree: dict[str, Path]) -> None:
    assert (await call(fs, action="mkdir", path="allowed/a/b")).success
    (tree["allowed"] / "a/b/f.txt").write_text("x")
    refused = await call(fs, action="delete", path="allowed/a")
    assert not refused.success and "recursive=true" in (refused.error or "")
    assert (await call(fs, action="delete", path="allowed/a", recursive=True)).success
    assert not (tree["allowed"] / "a").exists()
    missing = await call(fs, action="read", path="allowed/nope.txt")
    assert missing.error == "allowed/nope.txt does not exist"


async def test_unrestricted_policy_reaches_anywhere(tree: dict[str, Path]) -> None:
    tool = FilesystemTool(PathPolicy(["*"], base=tree["root"]))
    result = await tool.execute({"action": "read", "path": "secret.txt"})
    assert result.success and "top secret" in result.output
