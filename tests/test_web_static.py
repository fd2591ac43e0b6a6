"""The UI's files as served: security headers, and every reference resolving inside Navi itself."""

from __future__ import annotations

import posixpath
import re
import subprocess
from pathlib import Path

from fastapi.testclient import TestClient

from navi.api.app import create_app
from navi.config import Settings
from navi.sessions.filetypes import KINDS
from navi.web import STATIC
from tests.server_helpers import app_client

ROOT = Path(__file__).resolve().parents[1]


def client(settings: Settings) -> TestClient:
    return app_client(create_app(settings))


def test_pages_are_served_with_a_strict_policy(make_settings) -> None:
    with client(make_settings()) as http:
        for path in ("/", "/debug"):
            page = http.get(path)
            assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
            csp = page.headers["content-security-policy"]
            assert "script-src 'self';" in csp and "unsafe-eval" not in csp and "object-src 'none'" in csp
            assert "frame-ancestors 'none'" in csp
            assert page.headers["x-content-type-options"] == "nosniff"
        assert (
            http.get("/static/app.js")
            .headers["content-type"]
            .startswith(("text/javascript", "application/javascript"))
        )
        assert http.get("/static/../config.py").status_code == 404
        assert http.get("/static/nothing.js").status_code == 404


def test_every_reference_is_local_and_resolves(make_settings) -> None:
    refs: set[str] = set()
    for html in STATIC.glob("*.html"):
        text = html.read_text()
        assert "<script>" not in text and not re.search(r"<[^>]*\son\w+=", text)  # no inline code
        refs.update(re.findall(r'(?:src|href)="([^"]+)"', text))
    for module in (STATIC / "js").glob("*.js"):  # imports name modules relative to /static/js/
        imported = re.findall(r'from "([^"]+)"', module.read_text())
        assert all(r.startswith(("./", "../vendor/")) for r in imported), (module.name, imported)
        refs.update(posixpath.normpath(f"/static/js/{r}") for r in imported)
    links = {r for r in refs if r.startswith("/static/")}
    expected = {"/static/app.js", "/static/js/debug.js", "/static/js/api.js", "/static/vendor/marked.esm.js"}
    assert expected <= links
    assert all(r.startswith(("/", "#", "data:")) for r in refs), sorted(refs)
    with client(make_settings()) as http:
        for link in sorted(links):
            assert http.get(link).status_code == 200, link


def test_vendored_versions_match_the_pins() -> None:
    pins = dict(re.findall(r"^(\w+)=([\d.]+)$", (ROOT / "scripts" / "vendor-web").read_text(), re.M))
    shipped = (STATIC / "vendor" / "VERSIONS.txt").read_text()
    assert f"marked {pins['MARKED']}" in shipped
    assert f"dompurify {pins['DOMPURIFY']}" in shipped
    assert f"swagger-ui-dist {pins['SWAGGER_UI']}" in shipped
    assert f"redoc {pins['REDOC']}" in shipped
    assert f"@highlightjs/cdn-assets {pins['HIGHLIGHT']}" in shipped
    assert f"DOMPurify {pins['DOMPURIFY']}" in (STATIC / "vendor" / "purify.es.mjs").read_text()[:200]
    assert "sourceMappingURL" not in (STATIC / "vendor" / "marked.esm.js").read_text()


def test_the_file_chooser_offers_the_kinds_uploads_accept() -> None:
    """The page's file input lists exactly the extensions the server takes (navi/sessions/filetypes.py)."""
    page = (STATIC / "index.html").read_text()
    found = re.search(r'<input type="file" id="file-input" multiple\s+accept="([^"]+)">', page)
    assert found is not None
    assert found.group(1).split(",") == [ext for kind in KINDS.values() for ext in kind]


def test_the_page_loads_the_script_its_modules_build() -> None:
    """index.html loads app.js, and app.js is exactly what scripts/bundle-page (the pinned esbuild)
    builds from static/js/ now: a module changed without building again fails here, not in a
    browser test that ran the old code."""
    page = (STATIC / "index.html").read_text()
    assert re.findall(r'<script type="module" src="([^"]+)"', page) == ["/static/app.js"]
    checked = subprocess.run(
        [str(ROOT / "scripts" / "bundle-page"), "--check"], capture_output=True, text=True, timeout=120
    )
    assert checked.returncode == 0, checked.stderr
    for module in (STATIC / "js").glob("*.js"):
        if module.name not in ("debug.js", "docs.js", "theme.js"):  # pages of their own, and the theme
            assert f"// navi/web/static/js/{module.name}\n" in (STATIC / "app.js").read_text(), module.name
