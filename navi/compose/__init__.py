"""The composition root: the one place `Settings` is read and Navi's parts are wired together.

`runtime.py` builds the `Runtime` (registries, stores, the agent) and owns the shared database;
`parts.py` turns settings into the plain values each lower package is built from; `problems.py`
says in one line what in the configuration stops Navi from starting.
"""

from navi.compose.problems import SetupError
from navi.compose.runtime import Runtime, build_runtime

__all__ = ["Runtime", "SetupError", "build_runtime"]
