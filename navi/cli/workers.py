"""`navi serve --workers N`: one listening socket, N processes serving it.

The parent binds the socket, then forks N children; each builds its own app (runtime, run manager,
background loops) and runs uvicorn on the inherited socket, and the kernel hands each new
connection to one of them. What a turn needs from other workers goes through PostgreSQL
(`navi/runs/pg.py`), so this needs `DATABASE_URL`. The parent only supervises: a child that dies
(killed, crashed) is started again, its turns recovered by the others (`worker_lost`); SIGTERM or
SIGINT stops every child gracefully and then the parent. A child that cannot start (its one-line
problem printed) stops them all.

Children are forked rather than spawned: uvicorn's own `--workers` pickles its configuration into
fresh interpreters, and Navi's connection guard is made per process in the child instead.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

STARTUP_FAILED = 3  # a child's exit code when its app could not start (the problem printed)
RESTART_PAUSE = 1.0  # seconds before a child that died is started again


def listening_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _child(serve_one: Callable[[socket.socket], int], sock: socket.socket) -> None:
    code = 1
    try:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        code = serve_one(sock)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def supervise(count: int, sock: socket.socket, serve_one: Callable[[socket.socket], int]) -> int:
    """Run `serve_one(sock)` in `count` forked children until SIGTERM/SIGINT; the exit code."""
    children: dict[int, int] = {}  # pid → slot
    stopping = False

    def start(slot: int) -> None:
        pid = os.fork()
        if pid == 0:
            _child(serve_one, sock)
        children[pid] = slot

    def stop(signum: int, _frame: Any) -> None:
        nonlocal stopping
        stopping = True
        for pid in list(children):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    code = 0
    try:
        for slot in range(count):
            start(slot)
        while children:
            try:
                pid, status = os.wait()
            except ChildProcessError:
                break
            except InterruptedError:
                continue
            if pid not in children:
                continue
            slot = children.pop(pid)
            exit_code = os.waitstatus_to_exitcode(status)
            if stopping:
                continue
            if exit_code == STARTUP_FAILED:  # it said why; the others would say the same
                code = 2
                stop(signal.SIGTERM, None)
                continue
            print(
                f"navi: worker {pid} ended (exit {exit_code}); starting another", file=sys.stderr, flush=True
            )
            time.sleep(RESTART_PAUSE)
            if not stopping:
                start(slot)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sock.close()
    return code
