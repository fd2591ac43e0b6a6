"""Tools: the base class and result, the registry and per-profile views, and the built-ins.

The registry is imported on first use, so importing `navi.tools.base` (as the tool host and user
tools do) does not load the model layer and JSON Schema machinery with it.
"""

from typing import TYPE_CHECKING, Any

from navi.tools.base import Tool, ToolResult

if TYPE_CHECKING:
    from navi.tools.registry import ToolRegistry, ToolView

__all__ = ["Tool", "ToolRegistry", "ToolResult", "ToolView"]


def __getattr__(name: str) -> Any:
    if name in ("ToolRegistry", "ToolView"):
        from navi.tools import registry

        return getattr(registry, name)
    raise AttributeError(f"module 'navi.tools' has no attribute {name!r}")
