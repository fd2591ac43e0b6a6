"""scripts/layers.py, the layer check `make lint` runs: this checkout passes it, and a tree that
imports upwards, in a circle or only for types, or has an overlong module, is reported and fails."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load_script():
    spec = importlib.util.spec_from_file_location("navi_layers_script", ROOT / "scripts" / "layers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


layers = _load_script()


def test_this_checkout_keeps_its_layers(capsys: pytest.CaptureFixture[str]) -> None:
    assert layers.main([]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "arrows against the layers: 0" in out
    assert "cycles between parts: 0" in out and "cycles between modules: 0" in out
    assert "(the 10 largest; 0 over 500 lines)" in out and "allowed:" not in out


def _write(root: Path, path: str, text: str) -> None:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


def test_a_tree_against_its_layers_is_reported_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for package in ("navi", "navi/llm", "navi/agent", "navi/tools"):
        _write(tmp_path, f"{package}/__init__.py", "")
    _write(tmp_path, "navi/llm/base.py", "from navi.agent import loop\n")  # llm is below agent
    _write(tmp_path, "navi/agent/loop.py", "from navi.llm import base\nfrom . import steps\n")
    _write(tmp_path, "navi/agent/steps.py", "def run():\n    from navi.agent.loop import x\n")
    _write(
        tmp_path,
        "navi/tools/hints.py",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from navi.agent.loop import Agent\n",
    )
    _write(tmp_path, "navi/tools/big.py", "x = 1\n" * 501)
    _write(
        tmp_path,
        "docs/architecture.md",
        f"{layers.PICTURE_BEGIN}\n{layers.picture()}\n{layers.PICTURE_END}\n",
    )

    assert layers.main(["--root", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert "navi.llm.base → navi.agent.loop: agent is above llm" in out
    assert "navi.tools.hints → navi.agent.loop (types): agent is above tools" in out
    assert "3 modules: navi.agent.loop, navi.agent.steps, navi.llm.base" in out  # relative, lazy
    assert "cycles between parts: 1\n  agent ⇄ llm\n" in out
    assert "501  navi/tools/big.py  OVER" in out
    assert "over 500 lines without an entry in LONG_MODULES: navi/tools/big.py" in err
    assert "2 import(s) against the layer order" in err and "2 import cycle(s)" in err


def test_a_picture_that_is_not_the_layers_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path, "navi/__init__.py", "")
    _write(tmp_path, "docs/architecture.md", f"{layers.PICTURE_BEGIN}\n```\nold\n```\n{layers.PICTURE_END}\n")
    assert layers.main(["--root", str(tmp_path)]) == 1
    assert "the layer picture in docs/architecture.md is not LAYERS'" in capsys.readouterr().err


def test_a_long_signature_or_a_frame_dispatched_on_its_type_inside_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for package in ("navi", "navi/agent", "navi/api"):
        _write(tmp_path, f"{package}/__init__.py", "")
    params = ", ".join(f"p{n}" for n in range(9))
    _write(
        tmp_path,
        "navi/agent/loop.py",
        f"class Loop:\n    def step(self, {params}):\n        pass\n\n"
        "    def short(self, a, b, c, d, e, f, g, h):\n        pass\n\n"  # 8: allowed
        "def route(frame, event):\n"
        "    if frame.get('type') == 'message':\n        return 1\n"
        "    return event['type']\n\n"
        "def schema(spec):\n    return spec['type']\n",  # not a frame: allowed
    )
    _write(tmp_path, "navi/api/socket.py", "def read(frame):\n    return frame['type']\n")  # an edge
    picture = f"{layers.PICTURE_BEGIN}\n{layers.picture()}\n{layers.PICTURE_END}\n"
    _write(tmp_path, "docs/architecture.md", picture)

    assert layers.main(["--root", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert "navi/agent/loop.py:Loop.step (9)" in out and "Loop.short" not in out
    assert "over 8 parameters, not in MANY_PARAMS: navi/agent/loop.py:Loop.step (9)" in err
    assert "navi/agent/loop.py:9  NEW" in out and "navi/agent/loop.py:11  NEW" in out
    assert "socket.py:2" not in out and "loop.py:14" not in out  # an edge; a schema, not a frame
    assert 'a frame dispatched on its "type" outside the edge adapters' in err
