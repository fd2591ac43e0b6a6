"""The sandbox every child of a tool runs in: bubblewrap namespaces, a filtered file system, no
inherited environment. `policy.py` says what a child may see, `bwrap.py` builds the command line,
`probe.py` checks that bubblewrap works here, `sandbox.py` is what the tools call."""

from navi.sandbox.policy import (
    MODES,
    SandboxMode,
    SandboxPolicy,
    allowed_from_list,
    navi_code_paths,
    python_paths,
)
from navi.sandbox.probe import INSTALL_FIX, Availability, probe
from navi.sandbox.sandbox import Sandbox, SandboxRefused

__all__ = [
    "INSTALL_FIX",
    "MODES",
    "Availability",
    "Sandbox",
    "SandboxMode",
    "SandboxPolicy",
    "SandboxRefused",
    "allowed_from_list",
    "navi_code_paths",
    "probe",
    "python_paths",
]
