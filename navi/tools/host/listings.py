"""What a tool host said about a tools folder, kept by the folder's content, so a Navi built again
in the same process over the same files starts no host until a user tool is called.

A tool host is a Python process under the sandbox (about a quarter of a CPU-second to start and
import the starter tools). Listing a folder needs one; calling a tool needs one. A process that
builds Navi more than once over unchanged files (`reload_tools` with nothing edited, a test run's
many in-process servers) lists from here and starts its host on the first call instead — which
imports the files afresh, as any load does.

The key is every file under the folder (relative name and SHA-256), the interpreter and the sandbox: any
edit, a new file or a file written by a tool (a starter tool keeps its notes beside it) makes a new
key. Only loads where every file imported are kept (a timeout says more about the machine's load
than about the file). The replies are re-checked on each use like a fresh host's.
"""

from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from pathlib import Path
from typing import Any

MAX_FILES = 200  # a folder with more (a tool's data, a virtualenv) is not worth hashing each time
MAX_BYTES = 8 * 1024 * 1024

Replies = dict[str, dict[str, Any]]  # by file name: the same files in another folder list alike


def folder_key(tools_dir: str | os.PathLike[str], under: str) -> str | None:
    """A digest of the folder's files and `under` (the interpreter and sandbox that import them);
    None when it cannot be read whole or is too big to be worth it (the folder is then listed by a
    host each time, as without this)."""
    root = Path(tools_dir)
    digest = hashlib.sha256(under.encode())
    files = total = 0
    try:
        for path in sorted(root.rglob("*")):
            if path.is_symlink() or not path.is_file():
                digest.update(b"\0d" + str(path.relative_to(root)).encode())
                continue
            files += 1
            data = path.read_bytes()
            total += len(data)
            if files > MAX_FILES or total > MAX_BYTES:
                return None
            name = str(path.relative_to(root)).encode()
            digest.update(b"\0f" + name + b"\0" + hashlib.sha256(data).digest())
    except OSError:
        return None
    return digest.hexdigest()


class Listings:
    """The last few folders' replies, by `folder_key` (one per process: `PROCESS_LISTINGS`)."""

    def __init__(self, size: int = 32) -> None:
        self.size = size
        self._found: OrderedDict[str, Replies] = OrderedDict()

    def get(self, key: str | None) -> Replies | None:
        if key is None or key not in self._found:
            return None
        self._found.move_to_end(key)
        return self._found[key]

    def put(self, key: str | None, replies: Replies) -> None:
        if key is None:
            return
        self._found[key] = replies
        self._found.move_to_end(key)
        while len(self._found) > self.size:
            self._found.popitem(last=False)


PROCESS_LISTINGS = Listings()
