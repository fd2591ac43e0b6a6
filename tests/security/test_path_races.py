"""Path checks without races: a folder swapped for a symlink after the check leads nowhere.

The filesystem tool and image_view check a path (real path inside `FS_ALLOWED_PATHS`, not a
secret), then open it. A folder inside the allowed root swapped for a symlink to a folder outside
between the check and the open must not send a read, a write, a listing, a copy, a move or a
delete outside. Two ways: a thread swapping the folder and the symlink in a tight loop while the
tools work in it, and each action with the swap made exactly between check and open (through
`PathPolicy.after_check`, the seam the policy calls as the check passes).
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from navi.tools.base import ToolResult
from navi.tools.builtin.filesystem import FilesystemTool
from navi.tools.builtin.image import ImageViewTool
from navi.tools.paths import PathPolicy

INSIDE = "inside: the shopping list\n"
OUTSIDE = "OUTSIDE: the private diary\n"
ONLY_OUTSIDE = "diary-outside-only.txt"
ROUNDS = 800
_LIBC = ctypes.CDLL(None, use_errno=True)
_AT_FDCWD, _RENAME_EXCHANGE = -100, 2


def exchange(a: Path, b: Path) -> None:
    """Swap two names atomically (renameat2 RENAME_EXCHANGE): neither is ever missing."""
    if _LIBC.renameat2(_AT_FDCWD, bytes(a), _AT_FDCWD, bytes(b), _RENAME_EXCHANGE) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), str(a))


@dataclass
class Tree:
    root: Path  # the allowed folder
    outside: Path  # a folder the tools must never reach
    sub: Path  # root/sub: a real folder, or (swapped) a symlink to `outside`
    parked: Path  # where the real folder waits while `sub` is the symlink

    def swap(self) -> None:
        """`sub` becomes the symlink to `outside` (the real folder is parked)."""
        os.rename(self.sub, self.parked)
        os.symlink(self.outside, self.sub)

    def restore(self) -> None:
        os.unlink(self.sub)
        os.rename(self.parked, self.sub)

    def outside_files(self) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in sorted(self.outside.iterdir())}


@pytest.fixture
def tree(tmp_path: Path) -> Iterator[Tree]:
    root, outside = tmp_path / "allowed", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (root / "sub" / "note.txt").write_text(INSIDE)
    (outside / "note.txt").write_text(OUTSIDE)
    (outside / ONLY_OUTSIDE).write_text(OUTSIDE)
    (root / "file.txt").write_text(INSIDE)
    Image.new("RGB", (8, 8), "green").save(root / "sub" / "pic.png")
    Image.new("RGB", (9, 9), "red").save(outside / "pic.png")
    yield Tree(root, outside, root / "sub", root / ".parked")


def tools(tree: Tree) -> tuple[PathPolicy, FilesystemTool, ImageViewTool]:
    policy = PathPolicy([str(tree.root)])
    return policy, FilesystemTool(policy), ImageViewTool(policy)


# --- a swapper racing the tools --------------------------------------------------------------------


def swapper(tree: Tree, stop: threading.Event) -> None:
    """Flip `sub` between the real folder and the symlink outside, as fast as it can."""
    while not stop.is_set():
        exchange(tree.sub, tree.parked)


async def test_a_racing_swap_never_reaches_outside(tree: Tree) -> None:
    _policy, fs, image = tools(tree)
    os.symlink(tree.outside, tree.parked)
    stop = threading.Event()
    thread = threading.Thread(target=swapper, args=(tree, stop), daemon=True)
    thread.start()
    inside_reads = 0
    try:
        for n in range(ROUNDS):
            read = await fs.execute({"action": "read", "path": str(tree.sub / "note.txt")})
            assert "OUTSIDE" not in (read.output or ""), f"round {n}: read the file outside"
            inside_reads += read.success
            listed = await fs.execute({"action": "list", "path": str(tree.sub), "recursive": n % 2 == 0})
            assert ONLY_OUTSIDE not in (listed.output or ""), f"round {n}: listed the folder outside"
            await fs.execute({"action": "write", "path": str(tree.sub / f"w{n}.txt"), "content": "x"})
            await fs.execute({"action": "append", "path": str(tree.sub / "log.txt"), "content": "y"})
            copy = {
                "action": "copy",
                "path": str(tree.sub / "note.txt"),
                "destination": str(tree.root / "c.txt"),
            }
            copied = await fs.execute(copy)
            if copied.success:
                assert (tree.root / "c.txt").read_text() == INSIDE, f"round {n}: copied the file outside"
            if n % 8 == 0:
                shown = await image.execute({"source": str(tree.sub / "pic.png")})
                assert not shown.success or shown.metadata["width"] == 8, f"round {n}: the image outside"
    finally:
        stop.set()
        thread.join(timeout=10)
    written = set(tree.outside_files()) - {"note.txt", "pic.png", ONLY_OUTSIDE}
    assert written == set(), f"writes landed outside: {sorted(written)[:5]}"
    assert tree.outside_files()["note.txt"] == OUTSIDE.encode()
    assert inside_reads > 0, "the race let no read through: the test exercised nothing"


# --- the swap made exactly between the check and the open ---------------------------------------


class SwapOnCheck:
    """`PathPolicy.after_check`: swap `sub` for the symlink when the path `when` is checked."""

    def __init__(self, tree: Tree, when: Path) -> None:
        self.tree, self.when, self.swapped = tree, when, False

    def __call__(self, real: Path) -> None:
        if real == self.when and not self.swapped:
            self.tree.swap()
            self.swapped = True


async def run_swapped(
    tree: Tree, policy: PathPolicy, when: Path, call: Callable[[], Awaitable[ToolResult]]
) -> ToolResult:
    swap = SwapOnCheck(tree, when)
    policy.after_check = swap
    try:
        result = await call()
    finally:
        policy.after_check = None
        if swap.swapped:
            tree.restore()
    assert swap.swapped, "the checked path was never the one the test swaps at"
    return result


ACTIONS: dict[str, tuple[dict[str, Any], str]] = {
    "read": ({"action": "read", "path": "sub/note.txt"}, "sub/note.txt"),
    "info": ({"action": "info", "path": "sub/note.txt"}, "sub/note.txt"),
    "list": ({"action": "list", "path": "sub"}, "sub"),
    "list recursive": ({"action": "list", "path": "sub", "recursive": True}, "sub"),
    "find": ({"action": "find", "path": "sub", "pattern": "*.txt"}, "sub"),
    "write": ({"action": "write", "path": "sub/new.txt", "content": "planted"}, "sub/new.txt"),
    "append": ({"action": "append", "path": "sub/note.txt", "content": "planted"}, "sub/note.txt"),
    "mkdir": ({"action": "mkdir", "path": "sub/made"}, "sub/made"),
    "delete": ({"action": "delete", "path": "sub/note.txt"}, "sub/note.txt"),
    "move": ({"action": "move", "path": "sub/note.txt", "destination": "moved.txt"}, "sub/note.txt"),
    "copy from": ({"action": "copy", "path": "sub/note.txt", "destination": "copied.txt"}, "sub/note.txt"),
    "copy into": ({"action": "copy", "path": "file.txt", "destination": "sub/copied.txt"}, "sub/copied.txt"),
}


@pytest.mark.parametrize("name", list(ACTIONS))
async def test_a_swap_between_check_and_open_is_refused(tree: Tree, name: str) -> None:
    policy, fs, _image = tools(tree)
    params, swapped_at = ACTIONS[name]
    params = {k: str(tree.root / v) if k in ("path", "destination") else v for k, v in params.items()}
    before = tree.outside_files()
    result = await run_swapped(tree, policy, tree.root / swapped_at, lambda: fs.execute(params))
    assert not result.success, f"{name} went through the symlink: {result.output}"
    assert "changed while it was being opened" in (result.error or "")
    assert "OUTSIDE" not in (result.output or "")
    assert tree.outside_files() == before, f"{name} changed the folder outside"
    for left in ("moved.txt", "copied.txt"):
        assert not (tree.root / left).exists(), f"{name} brought the outside file in"
    assert (tree.sub / "note.txt").read_text() == INSIDE  # and the real folder is untouched


async def test_image_view_is_not_redirected_either(tree: Tree) -> None:
    policy, _fs, image = tools(tree)
    target = tree.sub / "pic.png"
    result = await run_swapped(tree, policy, target, lambda: image.execute({"source": str(target)}))
    assert not result.success and "changed while it was being opened" in (result.error or "")


async def test_without_a_swap_everything_works_through_the_same_path(tree: Tree) -> None:
    """The seam changes nothing by itself: the same calls succeed when the tree stays put."""
    policy, fs, image = tools(tree)
    seen: list[Path] = []
    policy.after_check = seen.append
    for name, (params, _at) in ACTIONS.items():
        params = {k: str(tree.root / v) if k in ("path", "destination") else v for k, v in params.items()}
        result = await fs.execute(params)
        assert result.success, (name, result.error)
        (tree.sub / "note.txt").write_text(INSIDE)  # what delete and move took away
        for made in ("moved.txt", "copied.txt"):
            (tree.root / made).unlink(missing_ok=True)
    assert (await image.execute({"source": str(tree.sub / "pic.png")})).success
    assert (tree.sub / "new.txt").read_text() == "planted" and (tree.sub / "made").is_dir()
    assert (tree.sub / "copied.txt").read_text() == INSIDE
    assert len(seen) >= len(ACTIONS)
