"""The `mcp` SDK of the 2025 era (1.27.2, protocol 2025-11-25), for tests of Navi against an MCP
server that does not speak 2026-07-28.

Navi's own environment has the 2026 SDK (`mcp` 2.x); an old server cannot be installed beside it.
Its wheels (and `httpx-sse`, the one dependency the 2.x environment lacks) come from PyPI, pinned
by sha256 like the test models' weights (`llama_files.py`), and are unpacked once into the cache;
a server script then runs with that folder first on `PYTHONPATH`.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from navi.testing.llama_files import Wheel, _download, _locked, cache_dir

WHEELS = (
    Wheel("mcp==1.27.2", "d6ff5160c6ca65d93013626efb3fc249de683c30b2d8570755ceddd490344de5", ""),
    Wheel("httpx-sse==0.4.3", "0ac1c9fe3c0afad2e0ebb25a934a59f4c7823b60792691f779fad2c5568830fc", ""),
)
VERSION = "1.27.2"
PROTOCOL = "2025-11-25"  # the newest revision it speaks


def old_sdk_path() -> Path:
    """A folder holding the 1.27.2 `mcp` package (for `PYTHONPATH`), fetched and unpacked once."""
    target = cache_dir() / f"mcp-sdk-{VERSION}"
    done = target / ".complete"
    with _locked(cache_dir() / f"mcp-sdk-{VERSION}.lock"):
        if not done.exists():
            wheels = _download(WHEELS, cache_dir() / "wheels")
            for path in wheels.values():
                with zipfile.ZipFile(path) as archive:
                    archive.extractall(target)
            done.write_text(VERSION)
    return target
