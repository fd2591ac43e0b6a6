"""Moved to `navi.compose`; kept only as a re-export while `navi/api/websocket.py` still imports it."""

from navi.compose import Runtime, build_runtime

__all__ = ["Runtime", "build_runtime"]
