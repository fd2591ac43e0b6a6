"""The browser profiles' REST routes on a live Navi (no Chromium is started): the token, each user
their own profiles with the sites they hold cookies for and never a cookie's value, a deletion, and
another user's profile answering 404."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from navi.testing.fake_server import FakeModelServer
from navi.tools.builtin.browser.profiles import Profiles
from tests.server_helpers import LiveNavi, live_navi
from tests.test_documents_api import as_user


def cookie(domain: str, value: str) -> dict[str, object]:
    return {
        "name": "sid",
        "value": value,
        "domain": domain,
        "path": "/",
        "expires": -1,
        "httpOnly": True,
        "secure": True,
        "sameSite": "Lax",
    }


@pytest.fixture
def navi(tmp_path: Path, fake_server: FakeModelServer) -> Iterator[LiveNavi]:
    with live_navi(tmp_path, fake_server, navi_browser_profiles_dir=str(tmp_path / "bp")) as server:
        yield server


def test_profiles_are_listed_without_values_and_deleted_each_users_own(
    navi: LiveNavi, tmp_path: Path
) -> None:
    profiles = Profiles(tmp_path / "bp")
    shop = [cookie(".shop.example", "owner-cookie-value"), cookie("accounts.shop.example", "v2")]
    profiles.save("local", "shop", {"cookies": shop, "origins": []})
    assert httpx.get(f"{navi.url}/browser/profiles").status_code == 401
    with navi.client() as http, as_user(navi, "alice") as alice:
        profiles.save("alice", "mail", {"cookies": [cookie("mail.example", "alice-value")], "origins": []})
        listed = http.get("/browser/profiles")
        assert [(p["name"], p["sites"]) for p in listed.json()["profiles"]] == [
            ("shop", ["accounts.shop.example", "shop.example"])
        ]
        assert "owner-cookie-value" not in listed.text
        assert [p["name"] for p in alice.get("/browser/profiles").json()["profiles"]] == ["mail"]
        assert alice.delete("/browser/profiles/shop").status_code == 404  # the owner's: not alice's
        assert profiles.exists("local", "shop")
        assert http.delete("/browser/profiles/.shop").status_code == 422
        assert http.delete("/browser/profiles/shop").status_code == 204
        assert http.delete("/browser/profiles/shop").status_code == 404
        assert http.get("/browser/profiles").json() == {"profiles": []}
        assert [p["name"] for p in alice.get("/browser/profiles").json()["profiles"]] == ["mail"]
