"""axe-core, Deque's accessibility engine, run in the page: its colour-contrast rule (WCAG 2 AA).

The engine is a test asset, not part of the page: tests/ui/vendor/axe.min.js, fetched from npm by
scripts/vendor-web at the version below and checked here by its sha256 before a test injects it
(MPL-2.0, tests/ui/vendor/LICENSE.axe-core.txt).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from playwright.sync_api import Page

AXE_VERSION = "4.14.1"
AXE = Path(__file__).parent / "vendor" / "axe.min.js"
AXE_SHA256 = "29348999450cdf2849a8e70b7912fc2da85a849da39c0d0d5394f51d4a9ed95c"

# Only the colour-contrast rule; every element, the ones under a modal dialog included (axe leaves
# out what is hidden or inert by itself).
RUN = """async () => {
  const result = await axe.run(document, { runOnly: { type: "rule", values: ["color-contrast"] },
    resultTypes: ["violations"] });
  return result.violations.flatMap((rule) => rule.nodes.map((node) => ({
    target: node.target.join(" "), html: node.html.slice(0, 120),
    summary: (node.any[0] || {}).message || node.failureSummary })));
}"""


def axe_source() -> str:
    data = AXE.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    assert digest == AXE_SHA256, f"{AXE} is not axe-core {AXE_VERSION} (sha256 {digest})"
    return data.decode()


def contrast_violations(page: Page) -> list[dict[str, Any]]:
    """What axe's colour-contrast rule finds on the page as it is now (empty: AA everywhere)."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(content=axe_source())
    violations: list[dict[str, Any]] = page.evaluate(RUN)
    return violations
