"""The skills REST API on a live Navi: the token, a zip installed (a hostile one refused whole),
a malformed skill reported with its file and line while the rest install, list / show / disable /
remove, SKILLS_DIRS skills the owner's only, and one user's skills invisible to another."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from navi.testing.fake_server import FakeModelServer
from tests.helpers.skills import BROKEN, CSV_REPORT, HOUSE_STYLE, STYLE_GUIDE, SUMMARISE_PY, collection
from tests.server_helpers import LiveNavi, live_navi
from tests.test_documents_api import as_user


def zipped(members: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    return buffer.getvalue()


@pytest.fixture
def navi(tmp_path: Path, fake_server: FakeModelServer) -> Iterator[LiveNavi]:
    shared = collection(tmp_path / "collection")
    with live_navi(
        tmp_path, fake_server, skills_dir=str(tmp_path / "skills"), skills_dirs=str(shared)
    ) as server:
        yield server


def test_skills_over_rest(navi: LiveNavi) -> None:
    assert httpx.get(f"{navi.url}/skills").status_code == 401  # the token is asked for
    with navi.client() as http:
        listed = http.get("/skills").json()
        assert sorted(s["name"] for s in listed["skills"]) == ["csv-report", "house-style"]
        assert all(s["source"].endswith("collection") for s in listed["skills"])
        (problem,) = listed["problems"]
        assert problem["file"].endswith("broken-skill/SKILL.md") and problem["line"] == 4
        assert "malformed YAML front matter" in problem["message"]

        body = zipped(
            {
                "letters/SKILL.md": HOUSE_STYLE.replace("name: house-style", "name: letters"),
                "letters/references/style-guide.md": STYLE_GUIDE,
                "broken-skill/SKILL.md": BROKEN,
            }
        )
        resp = http.post("/skills", content=body, headers={"Content-Type": "application/zip"})
        assert resp.status_code == 201, resp.text
        done = resp.json()
        assert [s["name"] for s in done["installed"]] == ["letters"]
        assert done["installed"][0]["source"] == "own" and done["installed"][0]["files"] == [
            "references/style-guide.md"
        ]
        assert [(p["file"], p["line"]) for p in done["problems"]] == [("skill.zip/broken-skill/SKILL.md", 4)]

        shown = http.get("/skills/letters").json()
        assert shown["skill_md"].startswith("---\nname: letters") and "path" not in shown

        hostile = zipped({"../../evil/SKILL.md": CSV_REPORT})
        bad = http.post("/skills", content=hostile, headers={"Content-Type": "application/zip"})
        assert bad.status_code == 422 and bad.json()["code"] == "bad_skill"
        assert "unsafe name" in bad.json()["detail"] and "/tmp" not in bad.json()["detail"]
        not_zip = http.post("/skills", content=b"hello", headers={"Content-Type": "application/zip"})
        assert not_zip.status_code == 422 and "not a zip file" in not_zip.json()["detail"]

        off = http.patch("/skills/csv-report", json={"enabled": False})
        assert off.status_code == 200 and off.json()["enabled"] is False
        assert {s["name"]: s["enabled"] for s in http.get("/skills").json()["skills"]}["csv-report"] is False
        # A SKILLS_DIRS skill is never deleted by Navi; one's own is.
        assert http.delete("/skills/csv-report").status_code == 409
        assert http.delete("/skills/letters").status_code == 204
        assert http.get("/skills/letters").status_code == 404
        assert http.patch("/skills/nope", json={"enabled": True}).status_code == 404


def test_one_users_skills_are_not_anothers(navi: LiveNavi) -> None:
    with as_user(navi, "alice") as alice, as_user(navi, "bob") as bob:
        assert alice.get("/skills").json() == {"skills": [], "problems": []}  # no SKILLS_DIRS for users
        body = zipped({"csv-report/SKILL.md": CSV_REPORT, "csv-report/scripts/summarise.py": SUMMARISE_PY})
        assert alice.post("/skills", content=body).status_code == 201
        assert [s["name"] for s in alice.get("/skills").json()["skills"]] == ["csv-report"]
        assert bob.get("/skills").json()["skills"] == []
        assert bob.get("/skills/csv-report").status_code == 404
        assert bob.delete("/skills/csv-report").status_code == 404
        assert bob.patch("/skills/csv-report", json={"enabled": False}).status_code == 404
        assert alice.get("/skills/csv-report").json()["enabled"] is True
