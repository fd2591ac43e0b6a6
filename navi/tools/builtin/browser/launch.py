"""Starting the installed Chromium (Debian's `chromium`) under Playwright, confined; nothing downloaded.

Playwright is imported here, inside `launch`, on the first `browser` call: importing Navi or starting
the server does no browser work. Playwright's own browser builds are never used: `executable_path`
points at the system's Chromium (through a small wrapper script, below).

Confinement, in the order `BrowserSettings.sandbox` tries them:
- `bwrap` (when bubblewrap works here): Chromium runs in its own namespaces with NO network at all
  (`--unshare-all`); every request it makes is fulfilled by Navi through the network guard (see
  `routing.py`), so it cannot reach an address the guard refuses, by a redirect, a subresource, a
  WebSocket or a DNS trick. The file system is the system's, read-only, with the home folder,
  Navi's secrets and the session files hidden (an empty file or folder over each); only the
  temporary folder, where Playwright keeps the browser's profile and downloads, is writable.
- `chromium`: Chromium's own sandbox (user namespaces and seccomp), for an unprivileged Navi; the
  routing still answers every request, and WebSockets are closed.
- `off`: neither (tests that must run as root without bubblewrap; never chosen on its own).

The memory cap: each renderer's JavaScript heap is limited (`--max-old-space-size`), renderers are
few (`--renderer-process-limit`), and every Chromium process gets an RLIMIT_DATA backstop. The
backstop cannot be tight: a renderer reserves about 5 GB of writable address space as it starts
(measured with Chromium 14x on Debian: 4 GB fails, 6 GB starts), so it is `memory_mb` on top of that.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

SandboxKind = Literal["auto", "bwrap", "chromium", "off"]
CHROMIUM = "/usr/bin/chromium"
RESERVED_MB = 6_000  # writable address space a renderer reserves at start (see the module's note)
ARGS = [
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-features=Translate,MediaRouter,OptimizationHints,DnsOverHttps",
    "--mute-audio",
]


class BrowserUnavailable(RuntimeError):
    """Chromium cannot be started (not installed, Playwright missing, no sandbox possible)."""


@dataclass(frozen=True, kw_only=True)
class BrowserSettings:
    """The browser tool's configuration, as plain values (the composition root fills it)."""

    executable: str = CHROMIUM
    sandbox: SandboxKind = "auto"
    bwrap: str | None = None  # the working bubblewrap (navi/sandbox's probe), or None
    memory_mb: int = 1024  # each renderer's JavaScript heap, and the backstop above RESERVED_MB
    max_pages: int = 4  # open tabs per session
    max_sessions: int = 8  # contexts open at once in this process; the least recently used idle one goes
    idle_seconds: float = 600.0  # a session's browser context unused this long is closed
    timeout_seconds: float = 30.0  # one navigation or action
    max_response_bytes: int = 20_000_000  # one response the routing fetches for the page
    max_download_bytes: int = 200 * 1024 * 1024
    files_dir: str = "session_files"  # where downloads land: the session's folder in it
    profiles_dir: str = "browser_profiles"  # named sign-ins: <user>/<name>.json (profiles.py)
    hidden: tuple[str, ...] = field(default=())  # paths Chromium must not see (Navi's secrets, data)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def _bwrap_argv(settings: BrowserSettings, tmp: str) -> list[str]:
    assert settings.bwrap is not None
    argv = [settings.bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/", "/"]
    argv += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/dev/shm", "--tmpfs", "/run"]
    argv += ["--bind", tmp, tmp]  # before the hidden paths: a secret under it stays hidden
    for hidden in (str(Path.home()), *settings.hidden):  # the home folder: SSH keys, other apps' data
        path = Path(hidden).resolve()
        if path.is_dir() and not Path(tmp).resolve().is_relative_to(path):
            argv += ["--tmpfs", str(path)]
        elif path.is_file():
            argv += ["--ro-bind", "/dev/null", str(path)]
    return argv


def working_bwrap(settings: BrowserSettings) -> BrowserSettings:
    """`settings` with the working bubblewrap filled in: the one the composition root found, else
    probed now (SANDBOX_MODE=off leaves code tools unconfined, not the browser)."""
    if settings.bwrap or settings.sandbox not in ("auto", "bwrap"):
        return settings
    from navi.sandbox import probe

    return replace(settings, bwrap=probe().bwrap)


def sandbox_kind(settings: BrowserSettings) -> SandboxKind:
    """Which confinement `auto` resolves to here; raises `BrowserUnavailable` when none fits."""
    kind = settings.sandbox
    if kind == "auto":
        if settings.bwrap:
            return "bwrap"
        if os.geteuid() != 0:
            return "chromium"
        raise BrowserUnavailable(
            "Chromium cannot be sandboxed: bubblewrap does not work here and Chromium's own sandbox "
            "refuses to run as root. Install bubblewrap, run Navi as an ordinary user, or set "
            "NAVI_BROWSER_SANDBOX=off to run it unconfined."
        )
    if kind == "bwrap" and not settings.bwrap:
        raise BrowserUnavailable("NAVI_BROWSER_SANDBOX=bwrap, but bubblewrap does not work here")
    return kind


def write_wrapper(settings: BrowserSettings, folder: str) -> tuple[str, SandboxKind]:
    """A script in `folder` that starts Chromium confined; Playwright runs it as the browser."""
    if not os.access(settings.executable, os.X_OK):
        raise BrowserUnavailable(
            f"Chromium is not installed at {settings.executable} (Debian: apt install chromium)"
        )
    kind = sandbox_kind(settings)
    prefix: list[str] = []
    tmp = tempfile.gettempdir()
    if kind == "bwrap":
        prefix = [*_bwrap_argv(settings, tmp), "--"]
    prlimit = shutil.which("prlimit")
    if prlimit:
        data = (RESERVED_MB + settings.memory_mb) * 1024 * 1024
        prefix += [prlimit, f"--data={data}", "--"]
    script = Path(folder) / "chromium"
    line = " ".join(_quote(a) for a in [*prefix, settings.executable])
    script.write_text(f'#!/bin/sh\nexec {line} "$@"\n')
    script.chmod(stat.S_IRWXU)
    return str(script), kind


def launch_options(settings: BrowserSettings, wrapper: str, kind: SandboxKind) -> dict[str, Any]:
    args = [
        *ARGS,
        f"--js-flags=--max-old-space-size={settings.memory_mb}",
        "--renderer-process-limit=2",
    ]
    return {
        "executable_path": wrapper,
        "headless": True,
        "chromium_sandbox": kind == "chromium",
        "args": args,
        "handle_sigint": False,
        "handle_sigterm": False,
        "handle_sighup": False,
        "timeout": settings.timeout_seconds * 1000,
    }


async def launch(settings: BrowserSettings, folder: str) -> tuple[Any, Any, SandboxKind]:
    """(Playwright, its Browser, the confinement used): Chromium started through the wrapper."""
    try:
        from playwright.async_api import async_playwright
    except ImportError as exc:
        raise BrowserUnavailable(
            "the browser tool needs Playwright: pip install 'navi[browser]' (Chromium itself comes "
            "from the system: apt install chromium)"
        ) from exc
    settings = await asyncio.to_thread(working_bwrap, settings)
    wrapper, kind = write_wrapper(settings, folder)
    pw = await async_playwright().start()
    try:
        browser = await pw.chromium.launch(**launch_options(settings, wrapper, kind))
    except Exception as exc:
        await pw.stop()
        raise BrowserUnavailable(f"Chromium did not start: {str(exc).splitlines()[0]}") from exc
    return pw, browser, kind
