"""Starts `navi serve` in forked children, so a test can SIGKILL Navi and start it again many times.

Importing Navi takes about a second; forking a process that has already imported it takes a few
milliseconds. Each child runs the real `navi serve` command (the same Typer entry point, the same
settings from the environment this process was started with). Commands on stdin, one per line:

    serve PORT [NAME=VALUE …]  →  `pid N`: the child serving on PORT, with those variables set on
                                 top of the environment (its output goes to serve-N.log here)
    wait PID     →  `gone`: that child has exited (the test kills it itself)

When stdin closes, children still running are killed.

Usage: python -m tests.helpers.serve_forks   (no threads are started before a fork)
"""

from __future__ import annotations

import os
import signal
import sys

import uvicorn  # noqa: F401  (imported before forking, so each child starts fast)

import navi.api.app
import navi.compose
import navi.llm.ollama_backend
import navi.tools.builtin.filesystem
import navi.tools.builtin.image
import navi.tools.builtin.web  # noqa: F401
from navi.cli.main import _register, app


def _child(port: str, env: list[str]) -> None:
    code = 1
    try:
        for pair in env:
            name, _, value = pair.partition("=")
            os.environ[name] = value
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        log = os.open(f"serve-{os.getpid()}.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(log, 1)
        os.dup2(log, 2)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        app(["serve", "--port", port])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        os._exit(code)


def main() -> None:
    _register()
    children: set[int] = set()
    print("ready", flush=True)
    try:
        for line in sys.stdin:
            command, _, arg = line.strip().partition(" ")
            if command == "serve":
                port, *env = arg.split()
                pid = os.fork()
                if pid == 0:
                    _child(port, env)
                children.add(pid)
                print(f"pid {pid}", flush=True)
            elif command == "wait":
                os.waitpid(int(arg), 0)
                children.discard(int(arg))
                print("gone", flush=True)
    finally:  # the test ended (or failed): no server outlives it
        for pid in children:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
