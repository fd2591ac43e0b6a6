"""The composition root: the one place `Settings` is read and Navi's parts are wired together.

`runtime.py` builds the `Runtime` (registries, stores, the agent) and owns the shared database;
`parts.py` turns settings into the plain values each lower package is built from; `problems.py`
says in one line what in the configuration stops Navi from starting.
"""

from typing import TYPE_CHECKING, Any

from navi.compose.problems import SetupError

if TYPE_CHECKING:
    from navi.compose.runtime import Runtime, build_runtime

__all__ = ["Runtime", "SetupError", "build_runtime"]


def __getattr__(name: str) -> Any:
    """`Runtime` and `build_runtime` on first use: the runtime imports every part of Navi, which a
    light command (`navi chat` reading the token file) should not pay for."""
    if name in ("Runtime", "build_runtime"):
        from navi.compose import runtime

        return getattr(runtime, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
