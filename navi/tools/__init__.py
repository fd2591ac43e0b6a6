"""Tools: the base class and result, the registry and per-profile views, and the built-ins."""

from navi.tools.base import Tool, ToolResult
from navi.tools.registry import ToolRegistry, ToolView

__all__ = ["Tool", "ToolRegistry", "ToolResult", "ToolView"]
