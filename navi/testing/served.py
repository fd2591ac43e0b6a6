"""Waiting for a `navi serve` started as a process: benches and tests start real servers and must
not talk to them before they answer."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable

import httpx

from navi.net.tls import ca_context


class NotUp(RuntimeError):
    """The server did not answer `GET /health` in time, or its process ended first."""


def wait_until_up(
    url: str,
    *,
    within: float,
    proc: subprocess.Popen[bytes] | subprocess.Popen[str] | None = None,
    output: Callable[[], str] = lambda: "",
    poll: float = 0.1,
) -> None:
    """Return once `url`/health answers 200; raise `NotUp` with `output()` (the server's log) when
    `within` seconds pass or `proc` ends first."""
    deadline = time.monotonic() + within
    # One client for the whole wait: each new one loads the certificate store (~40 ms of CPU, ten
    # times a second beside the server it waits for).
    with httpx.Client(timeout=1, verify=ca_context()) as http:
        while True:
            try:
                if http.get(f"{url}/health").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or (proc is not None and proc.poll() is not None):
                raise NotUp(f"navi serve did not come up at {url}:\n{output()}")
            time.sleep(poll)
