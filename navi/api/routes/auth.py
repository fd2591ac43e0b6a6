"""The login page: exchanges a token for an HttpOnly, SameSite=Strict cookie holding a new
server-side sign-in (`navi.api.signins`); `POST /logout` revokes it and closes the WebSockets it
opened.

The owner's token signs in as the owner; a token of `navi users add NAME` as NAME, for as long as
NAME holds it. A proxy-role token is refused (403, saying so): a proxy speaks for the users behind
it and is nobody to sign a browser in. It is a real token, so it is not counted as a guess.

The cookie is `Secure` when the request came over HTTPS: directly, or through a proxy listed in
NAVI_TRUSTED_PROXIES whose `X-Forwarded-Proto` says `https` (the access control puts that scheme on
the request); the header from anyone else changes nothing.

The page cannot be framed (`frame-ancestors 'none'`, `X-Frame-Options: DENY`), so another site
cannot overlay it to catch a token being typed, and loads nothing but itself."""

from __future__ import annotations

import html
from typing import Annotated

from fastapi import Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from navi.api.routing import api_router
from navi.api.security import COOKIE, COOKIE_MAX_AGE, AccessPolicy, ProxySignIn
from navi.runs import RunManager
from navi.web import PAGE_HEADERS

router = api_router(tags=["auth"])

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Navi — sign in</title>
<meta name="color-scheme" content="dark light">
<style>
body{{font-family:system-ui,sans-serif;background:#0f1419;color:#e6e6e6;display:grid;place-items:center;
min-height:100vh;margin:0}}
form{{background:#1a2029;padding:2rem;border-radius:12px;width:min(24rem,90vw);display:grid;gap:.8rem}}
h1{{margin:0;font-size:1.4rem}} label{{font-size:.9rem}}
input{{padding:.6rem;border-radius:8px;border:1px solid #3a4452;background:#0f1419;color:#fff;font-size:1rem}}
button{{padding:.6rem;border:0;border-radius:8px;background:#2f6fe0;color:#fff;font-size:1rem;cursor:pointer}}
button:focus-visible,input:focus-visible{{outline:3px solid #9cc0ff;outline-offset:2px}}
.error{{color:#ff9b9b;margin:0}} .where{{font-size:.85rem;color:#a9b4c2;margin:0;line-height:1.45}}
code{{font-size:.85rem}}
@media (prefers-color-scheme: light){{body{{background:#fff;color:#18212c}} form{{background:#f5f7fa}}
input{{background:#fff;color:#18212c;border-color:#c3ccd7}} .where{{color:#556170}} .error{{color:#b3261e}}
button:focus-visible,input:focus-visible{{outline-color:#1c5bc9}}}}
</style></head>
<body><form method="post" action="/login">
<h1>Navi</h1>
<label for="token">Access token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus
 aria-describedby="where">
{error}
<button type="submit">Sign in</button>
<p class="where" id="where">Where is it? <code>navi serve</code> prints a sign-in link with the token
when it starts; on the machine Navi runs on, <code>navi token</code> prints that link again. The token
itself is kept in the file <code>navi_token</code> beside Navi's database (<code>NAVI_TOKEN_FILE</code>),
or it is the <code>NAVI_API_TOKEN</code> you set. A user added with <code>navi users add</code> signs in
with their own token.</p>
</form></body></html>"""


def _policy(request: Request) -> AccessPolicy:
    policy: AccessPolicy = request.app.state.access
    return policy


# The pages' headers, except the referrer policy: with "no-referrer" a browser sends the form's POST
# with `Origin: null`, which the Origin check refuses. "same-origin" still tells other sites nothing.
LOGIN_HEADERS = {**PAGE_HEADERS, "Referrer-Policy": "same-origin"}


def _page(error: str = "", status: int = 200, headers: dict[str, str] | None = None) -> HTMLResponse:
    shown = f'<p class="error" role="alert">{html.escape(error)}</p>' if error else ""
    return HTMLResponse(
        PAGE.format(error=shown), status_code=status, headers={**LOGIN_HEADERS, **(headers or {})}
    )


@router.get("/login", response_class=HTMLResponse, include_in_schema=False)
async def login_page(request: Request, token: str = "") -> Response:
    """The sign-in form; `?token=…` (the link `navi serve` prints) signs in at once."""
    if not _policy(request).token:
        return RedirectResponse("/", status_code=303)
    if token:
        return await _sign_in(request, token)
    return _page()


@router.post("/login", include_in_schema=False)
async def login(request: Request, token: Annotated[str, Form()] = "") -> Response:
    if not _policy(request).token:
        return RedirectResponse("/", status_code=303)
    return await _sign_in(request, token)


async def _sign_in(request: Request, token: str) -> Response:
    """Token right (the owner's or a user's): the cookie, and on to the page (the address bar no
    longer holds the token)."""
    policy = _policy(request)
    client = request.client.host if request.client else "unknown"
    if not await policy.login_allowed(client):
        wait = {"Retry-After": str(await policy.retry_after(client))}
        return _page("Too many attempts. Wait a few minutes and try again.", status=429, headers=wait)
    try:
        who = await policy.sign_in_user(token.strip())
    except ProxySignIn as exc:
        return _page(str(exc), status=403)
    if who is None:
        await policy.login_failed(client)
        return _page("That token is not right.", status=401)
    response = RedirectResponse("/", status_code=303)
    response.set_cookie(
        COOKIE,
        await policy.sign_ins.open(*who),
        max_age=COOKIE_MAX_AGE,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/",
    )
    return response


@router.post("/logout", include_in_schema=False)
async def logout(request: Request) -> Response:
    """Revoke this browser's sign-in: the cookie stops working everywhere, copies included, and
    the sockets it opened are closed on every worker (4401, navi/api/sockets.py)."""
    sign_in = request.cookies.get(COOKIE)
    if sign_in:
        sign_ins = _policy(request).sign_ins
        found = await sign_ins.find(sign_in)
        await sign_ins.revoke(sign_in)
        if found is not None:
            runs: RunManager = request.app.state.runs
            runs.feed.revoked(found.owner)
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(
        COOKIE, path="/", httponly=True, samesite="strict", secure=request.url.scheme == "https"
    )
    return response
