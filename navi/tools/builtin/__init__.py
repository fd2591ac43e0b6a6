"""Navi's built-in tools. Each registers through `ToolRegistry.register(..., builtin=True)`."""
