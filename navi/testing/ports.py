"""Ports for the servers tests and benchmarks start, safe when several test processes run at once.

Asking the kernel for port 0 and handing the number to a server started a moment later races with
every other process on the machine: between the two, another process's own port-0 bind or outgoing
connection can be given the same number (Linux hands both out from `ip_local_port_range`, 32768 and
up). And a port a test keeps *closed* ("nothing listens there") can be taken by another test
process's server meanwhile. Under pytest-xdist that is a flaky test in every few runs.

So a test process takes its ports from a block of its own below the kernel's range: worker `gwN`
gets `BASE + N * BLOCK` and the next BLOCK numbers, which no port-0 bind and no outgoing connection
ever receives, and which no other worker uses. Each port is checked free (bound and released) before
it is handed out, and the next call moves on, so a process does not reuse a port it just gave out
until it has gone round its block. A process that is not a test worker (a benchmark, `make llama`)
gets the kernel's choice as before.
"""

from __future__ import annotations

import itertools
import os
import socket
import threading

BASE = 20_000
BLOCK = 600  # per worker: 20 workers fit below 32,768
_WORKER_ENV = "PYTEST_XDIST_WORKER"

_lock = threading.Lock()
_counter: itertools.count[int] | None = None
_counter_for: tuple[int, int] | None = None


def _worker_index() -> int | None:
    """The xdist worker's number (`gw3` → 3), 0 for a test run without xdist, None outside pytest."""
    name = os.environ.get(_WORKER_ENV)
    if name is None:
        return 0 if os.environ.get("PYTEST_VERSION") else None
    digits = name.removeprefix("gw")
    return int(digits) % 20 if digits.isdigit() else 0


def _bindable(host: str, port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
        return True


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on now, for a server to bind next (or to stay closed for a test)."""
    index = _worker_index()
    if index is None:
        with socket.socket() as sock:
            sock.bind((host, 0))
            return int(sock.getsockname()[1])
    global _counter, _counter_for
    start = BASE + index * BLOCK
    with _lock:
        # A child process (a forked worker, `navi serve` started by a test) starts elsewhere in the
        # block than its parent, so the two do not hand out the same numbers one after the other.
        if _counter_for != (os.getpid(), index):
            _counter, _counter_for = itertools.count(os.getpid() * 7), (os.getpid(), index)
        assert _counter is not None
        for _ in range(BLOCK):
            port = start + next(_counter) % BLOCK
            if _bindable(host, port):
                return port
    raise OSError(f"no free port in {start}-{start + BLOCK - 1} for this test process")
