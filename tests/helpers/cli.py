"""`navi` as a person runs it: a fresh `python -m navi` process in a folder of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_navi(folder: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `navi ARGS` in `folder`, with its database and tools folder there (and `env` on top)."""
    environ = {
        **os.environ,
        "DB_PATH": str(folder / "navi.db"),
        "TOOLS_DIR": str(folder / "tools"),
        **(env or {}),
    }
    return subprocess.run(
        [sys.executable, "-m", "navi", *args],
        cwd=folder,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
