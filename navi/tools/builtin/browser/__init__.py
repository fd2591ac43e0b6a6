"""The `browser` tool: Debian's Chromium driven by Playwright, confined, every request through the
network guard. `launch.py` starts Chromium, `routing.py` answers its requests, `snapshot.py` turns a
page into text with numbered elements, `sessions.py` keeps one context per session, `tool.py` is the
tool. Nothing here imports Playwright until the first call, and the package imports the tool only
when it is asked for (the stores keep `states.py`'s saved sign-ins without loading the tool)."""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from navi.tools.builtin.browser.launch import BrowserSettings, BrowserUnavailable
    from navi.tools.builtin.browser.tool import BrowserTool

__all__ = ["BrowserSettings", "BrowserTool", "BrowserUnavailable"]


def __getattr__(name: str) -> Any:
    if name in ("BrowserSettings", "BrowserUnavailable"):
        from navi.tools.builtin.browser import launch

        return getattr(launch, name)
    if name == "BrowserTool":
        from navi.tools.builtin.browser import tool

        return tool.BrowserTool
    raise AttributeError(f"module 'navi.tools.builtin.browser' has no attribute {name!r}")
