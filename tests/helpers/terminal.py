"""A real terminal for `navi chat` (tmux: send keys, read the screen) and a TCP proxy that can cut
every connection through it (the server "drops the socket" without stopping)."""

from __future__ import annotations

import contextlib
import os
import shlex
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

TMUX = "/usr/bin/tmux"
NAVI = [sys.executable, "-m", "navi"]


def chat_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A clean environment for a `navi chat` process: nothing of the test's own settings leaks in."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "LOG_LEVEL": "WARNING",
        "PLANNING_SKIP_WORDS": "0",  # every message planned, as in the rest of the suite (conftest.py)
    }
    if os.environ.get("PYTHONPATH"):  # the code under test (a checkout run with PYTHONPATH), not the venv's
        env["PYTHONPATH"] = os.pathsep.join(
            str(Path(p).resolve()) for p in os.environ["PYTHONPATH"].split(os.pathsep) if p
        )
    env.update(extra)
    return env


class Terminal:
    """`command` running in a tmux window of a fixed size, on a tmux server of its own."""

    def __init__(
        self, command: list[str], env: dict[str, str], *, width: int = 120, height: int = 40
    ) -> None:
        self.socket = f"navi-test-{uuid.uuid4().hex[:10]}"
        self.width, self.height = width, height
        assignments = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        # Every byte the program writes is kept (`raw`, beside its HOME), for a failure's post-mortem:
        # the program starts once tmux copies the pane's output there. The pane stays after the
        # program ends, showing how it ended.
        self.raw = Path(env.get("HOME") or f"/tmp/{self.socket}").parent / f"terminal-{self.socket}.raw"
        go = shlex.quote(str(self.raw))
        line = (
            f"while [ ! -e {go} ]; do sleep 0.02; done; env -i {assignments} {shlex.join(command)}; "
            'echo; echo "[exited $?]"; sleep 600'
        )
        self._tmux("new-session", "-d", "-s", "chat", "-x", str(width), "-y", str(height), line)
        self._tmux("pipe-pane", "-o", "-t", "chat", f"cat >> {go}")
        deadline = time.monotonic() + 5
        while not self.raw.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        self.raw.touch()
        self.socket_path = Path(self._tmux("display-message", "-p", "#{socket_path}").strip())

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(
            [TMUX, "-L", self.socket, "-f", "/dev/null", *args], capture_output=True, text=True, timeout=10
        )
        if done.returncode != 0:
            raise RuntimeError(f"tmux {args[0]} failed: {done.stderr.strip()}")
        return done.stdout

    def screen(self, history: bool = False) -> str:
        """What the window shows (with `history`, also what scrolled off), trailing spaces trimmed."""
        extra = ["-S", "-2000"] if history else []
        text = self._tmux("capture-pane", "-p", "-t", "chat", *extra)
        return "\n".join(line.rstrip() for line in text.splitlines()).rstrip() + "\n"

    def send(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "chat", *keys)

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", "chat", "-l", text)

    def wait_for(
        self, check: str | Callable[[str], bool], *, limit: float = 20.0, history: bool = True
    ) -> str:
        """Poll the screen until `check` (a text, or a test of the screen) holds; the screen then.
        Fails with the screen when it does not within `limit` seconds."""
        test = (lambda s: check in s) if isinstance(check, str) else check
        deadline = time.monotonic() + limit
        while True:
            text = self.screen(history=history)
            if test(text):
                return text
            if time.monotonic() > deadline:
                raise AssertionError(f"the screen never showed {check!r}; it shows:\n{text}")
            time.sleep(0.1)

    def wait_for_prompt(self, after: str = "Type a message", *, limit: float = 20.0) -> str:
        """Wait until the input prompt (a line that is only "›") is drawn below `after`: keys sent
        before it lands in the terminal's line buffer, where Esc Enter is not Alt+Enter."""

        def drawn(screen: str) -> bool:
            return after in screen and any(
                line.strip() == "›" for line in screen.split(after, 1)[1].splitlines()
            )

        return self.wait_for(drawn, limit=limit)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._tmux("kill-server")
        self.socket_path.unlink(missing_ok=True)


class CuttableProxy:
    """Forwards TCP from a port of its own to `target`; `cut()` closes every connection through it
    (the listening socket stays, so clients can reconnect)."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.conns: list[socket.socket] = []
        self.ending: set[socket.socket] = set()  # of a pair, the side whose first pump has stopped
        self.accepted = 0
        self.lock = threading.Lock()
        self.closed = False
        threading.Thread(target=self._accept, daemon=True, name="proxy-accept").start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                client.close()
                continue
            with self.lock:
                self.conns += [client, upstream]
                self.accepted += 1
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
            with self.lock:  # the second pump of a pair to end closes both
                if src in self.ending:
                    self.ending.discard(src)
                    src.close()
                    dst.close()
                else:
                    self.ending.add(dst)

    def cut(self) -> None:
        """Shut every connection down; the pumps close them once both have stopped (closing here
        would free a descriptor a pump may still write to, which a new connection can be given)."""
        with self.lock:
            conns, self.conns = self.conns, []
        for s in conns:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self.closed = True
        self.cut()
        self.listener.close()
