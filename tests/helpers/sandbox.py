"""Sandboxes for tests, built the way `navi.compose.parts.sandbox_policy` builds Navi's own.

`mode="required"` by default: a test of confinement must fail, not quietly run unconfined, on a
machine where bubblewrap does not work.
"""

from __future__ import annotations

from typing import Any

from navi.sandbox import Sandbox, SandboxPolicy, navi_code_paths, python_paths


def make_sandbox(**policy: Any) -> Sandbox:
    policy.setdefault("mode", "required")
    policy.setdefault("protected_paths", navi_code_paths())
    policy.setdefault("runtime_paths", python_paths())
    policy["allowed_paths"] = tuple(str(p) for p in policy.get("allowed_paths", ()))
    policy["hidden_paths"] = tuple(str(p) for p in policy.get("hidden_paths", ()))
    return Sandbox(SandboxPolicy(**policy))
