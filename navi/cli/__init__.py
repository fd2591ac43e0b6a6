"""The `navi` command line. Each command group lives in its own module."""

from __future__ import annotations

from navi.cli.main import app, main

__all__ = ["app", "main"]
