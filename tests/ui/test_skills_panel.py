"""The Skills panel (issue 46): the user's skills listed with their descriptions and a skill that
failed to load with its file and line; a skill's SKILL.md shown as text (never as HTML); a skill
turned off and on; a zip installed from the file picker; one's own skill removed after a confirm.
Below them, the browser sign-ins (`navi browser login`): listed with their sites, never a cookie's
value, one forgotten after a confirm."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from navi.tools.builtin.browser.profiles import Profiles
from tests.helpers.skills import BROKEN, CSV_REPORT, HOUSE_STYLE, STYLE_GUIDE, SUMMARISE_PY, write_skill
from tests.server_helpers import LiveNavi
from tests.ui.browser import open_app

pytestmark = [pytest.mark.browser, pytest.mark.navi(planning_enabled=False)]


def enabled(navi: LiveNavi) -> dict[str, bool]:
    skills = httpx.get(f"{navi.url}/skills", headers=navi.auth).json()["skills"]
    return {s["name"]: s["enabled"] for s in skills}


def test_the_skills_panel(page: Page, navi: LiveNavi, tmp_path: Path) -> None:
    own = Path(navi.settings.skills_dir) / "local"
    marked = HOUSE_STYLE.replace("# House style", "# House style <b>bold</b>")
    write_skill(own, "house-style", marked, {"references/style-guide.md": STYLE_GUIDE})
    write_skill(own, "broken-skill", BROKEN)
    open_app(page, "/")
    page.locator("#open-skills").click()
    dialog = page.get_by_role("dialog", name="Skills")
    expect(dialog).to_be_visible()
    rows = dialog.locator("#skill-list li")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("house-style")
    expect(rows.first).to_contain_text("Write letters in the family's house style.")
    expect(dialog.locator("#skill-problems")).to_contain_text(
        "broken-skill/SKILL.md:4: malformed YAML front matter"
    )

    # SKILL.md as text.
    rows.first.locator(".collection-open").click()
    expect(dialog.locator("#skill-md")).to_contain_text("# House style <b>bold</b>")
    expect(dialog.locator("#skill-md b")).to_have_count(0)

    # Off, then on again.
    dialog.get_by_label("Offer house-style to Navi").uncheck()
    expect(dialog.locator("#skills-status")).to_have_text("house-style is off.")
    assert enabled(navi) == {"house-style": False}
    dialog.get_by_label("Offer house-style to Navi").check()
    expect(dialog.locator("#skills-status")).to_have_text("house-style is on.")
    assert enabled(navi) == {"house-style": True}

    # A zip from the file picker.
    archive = tmp_path / "csv-report.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("csv-report/SKILL.md", CSV_REPORT)
        z.writestr("csv-report/scripts/summarise.py", SUMMARISE_PY)
    dialog.locator("#skills-input").set_input_files(str(archive))
    expect(dialog.locator("#skills-status")).to_have_text("Installed csv-report.")
    expect(rows).to_have_count(2)
    expect(dialog.locator("li[data-name='csv-report']")).to_contain_text("1 file")

    # A hostile zip is refused with the reason.
    bad = io.BytesIO()
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("../evil/SKILL.md", CSV_REPORT)
    dialog.locator("#skills-input").set_input_files(
        {"name": "evil.zip", "mimeType": "application/zip", "buffer": bad.getvalue()}
    )
    expect(dialog.locator("#skills-status")).to_contain_text("evil.zip was not installed: ")
    expect(dialog.locator("#skills-status")).to_contain_text("unsafe name in the zip")

    # Removed after a confirm.
    dialog.get_by_role("button", name="Remove skill csv-report").click()
    page.get_by_role("dialog", name="Remove csv-report?").get_by_role("button", name="Remove").click()
    expect(rows).to_have_count(1)
    assert enabled(navi) == {"house-style": True}

    # The browser sign-ins: the sites each keeps cookies for, one forgotten after a confirm.
    expect(dialog.locator("#signin-empty")).to_be_visible()
    profiles = Profiles(Path(navi.settings.navi_browser_profiles_dir))
    cookie = {"name": "sid", "value": "the-cookie-value", "domain": ".shop.example", "path": "/"}
    profiles.save("local", "shop", {"cookies": [cookie], "origins": []})
    page.locator("#close-skills").click()
    page.locator("#open-skills").click()
    signins = dialog.locator("#signin-list li")
    expect(signins).to_have_count(1)
    expect(signins.first).to_contain_text("shop")
    expect(signins.first).to_contain_text("shop.example")
    expect(dialog).not_to_contain_text("the-cookie-value")
    dialog.get_by_role("button", name="Forget sign-in shop").click()
    page.get_by_role("dialog", name="Forget shop?").get_by_role("button", name="Forget").click()
    expect(signins).to_have_count(0)
    expect(dialog.locator("#skills-status")).to_have_text("Forgot shop.")
    assert not profiles.exists("local", "shop")
