"""The `browser` tool: Debian's Chromium driven by Playwright, confined, every request through the
network guard. `launch.py` starts Chromium, `routing.py` answers its requests, `snapshot.py` turns a
page into text with numbered elements, `sessions.py` keeps one context per session, `tool.py` is the
tool. Nothing here imports Playwright until the first call."""

from navi.tools.builtin.browser.launch import BrowserSettings, BrowserUnavailable
from navi.tools.builtin.browser.tool import BrowserTool

__all__ = ["BrowserSettings", "BrowserTool", "BrowserUnavailable"]
