"""`navi browser login|profiles|forget`: named sign-ins for the `browser` tool.

`navi browser login NAME URL` opens URL in Navi's own confined Chromium (headless, the same network
rules as the tool) and lets you drive it from the terminal — the page's text and numbered elements,
then `type 1 alice`, `password 2` (asked without echo), `click 3`, `shot page.png` for a look at the
page, `save` — so it works on a server without a display, over SSH. `save` keeps the cookies and
storage as the profile NAME (NAVI_BROWSER_PROFILES_DIR/<user>/NAME.json, 0600); the model then opens
pages signed in with `{"action": "open", "url": …, "profile": "NAME"}`, which asks first in `smart`
mode. The password itself is kept nowhere. `profiles` lists a user's, `forget` deletes one.
"""

from __future__ import annotations

import asyncio
import getpass
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from navi.cli.common import PLAIN_HELP, fail, settings_or_exit
from navi.cli.stores import UserOption, known_user, with_stores

app = typer.Typer(
    help="Named browser sign-ins for the browser tool: login, profiles, forget.",
    no_args_is_help=True,
    rich_markup_mode=PLAIN_HELP,
)

HELP = """Commands:
  read                 the page again        open URL        go to another address
  click N              click element N       back            history back
  type N TEXT          fill field N          scroll up|down
  password N           fill field N, asked without echo
  select N OPTION      pick an option        shot FILE.png   save a screenshot to look at
  save                 keep the sign-in as the profile and quit
  quit                 quit without saving"""


def _user(user: str) -> None:
    from navi.sessions.models import DEFAULT_OWNER

    if user != DEFAULT_OWNER:

        async def check(rt: Any) -> str:
            return await known_user(rt, user)

        with_stores(check)


def _profiles() -> Any:
    from navi.tools.builtin.browser.profiles import Profiles

    return Profiles(Path(settings_or_exit().navi_browser_profiles_dir).expanduser().absolute())


async def run_login(
    tool: Any,
    owner: str,
    name: str,
    url: str,
    ask: Callable[[str], str],
    ask_secret: Callable[[str], str],
    say: Callable[[str], None],
) -> bool:
    """Drive `tool`'s browser for `owner` from the commands `ask` returns until `save` (True: the
    profile is written) or `quit`/the end of input (False: nothing is kept)."""
    from navi import runctx

    key = f"login:{owner}:{name}"
    ctx = runctx.RunContext(session_id=key, owner=owner, persistent=False)
    saved = False
    with runctx.using(ctx):
        await tool.pool.session(key, None, owner=owner, profile=name, create=True)
        try:
            say(_shown(await tool.execute({"action": "open", "url": url})))
            while True:
                try:
                    line = ask("browser> ").strip()
                except (EOFError, KeyboardInterrupt):
                    break
                if not line:
                    continue
                if line in ("save", "done"):
                    saved = True
                    break
                if line in ("quit", "exit"):
                    break
                params, problem = _command(line, ask_secret)
                if problem:
                    say(problem)
                    continue
                if params.get("action") == "shot":
                    say(await _shot(tool, key, str(params["file"])))
                    continue
                say(_shown(await tool.execute(params)))
        finally:
            await tool.pool.close_session(key, keep_profile=saved)
    return saved


def _shown(result: Any) -> str:
    """A result as the person at the terminal reads it (the note for the model left out)."""
    from navi.tools.builtin.browser.snapshot import QUOTED_NOTE

    return result.output.removeprefix(QUOTED_NOTE + "\n") if result.success else f"error: {result.error}"


def _command(line: str, ask_secret: Callable[[str], str]) -> tuple[dict[str, Any], str | None]:
    """A typed command as the tool's arguments, or why it is not one."""
    try:
        words = shlex.split(line)
    except ValueError as exc:
        return {}, f"{exc}"
    verb, rest = words[0].lower(), words[1:]
    try:
        if verb in ("read", "back") and not rest:
            return {"action": verb}, None
        if verb == "open" and len(rest) == 1:
            return {"action": "open", "url": rest[0]}, None
        if verb == "scroll" and rest in (["up"], ["down"]):
            return {"action": "scroll", "direction": rest[0]}, None
        if verb == "click" and len(rest) == 1:
            return {"action": "click", "element": int(rest[0])}, None
        if verb == "type" and len(rest) >= 2:
            return {"action": "type", "element": int(rest[0]), "text": " ".join(rest[1:])}, None
        if verb == "password" and len(rest) == 1:
            secret = ask_secret(f"password for element [{int(rest[0])}] (not shown): ")
            return {"action": "type", "element": int(rest[0]), "text": secret}, None
        if verb == "select" and len(rest) >= 2:
            return {"action": "select", "element": int(rest[0]), "value": " ".join(rest[1:])}, None
        if verb == "shot" and len(rest) == 1:
            return {"action": "shot", "file": rest[0]}, None
    except ValueError:
        return {}, "an element is its number, as [N] in the page"
    return {}, HELP


async def _shot(tool: Any, key: str, file: str) -> str:
    session = tool.pool.peek(key)
    if session is None or session.tab is None:
        return "no page is open"
    png = await session.tab.page.screenshot(type="png")
    await asyncio.to_thread(Path(file).write_bytes, png)
    return f"saved {len(png):,} bytes to {file}"


@app.command("login")
def login(
    name: Annotated[str, typer.Argument(help="The profile's name (a-z, 0-9, - and _).")],
    url: Annotated[str, typer.Argument(help="The sign-in page.")],
    user: UserOption = "local",
) -> None:
    """Sign into a site once in Navi's own browser, from this terminal; keep it as profile NAME."""
    from navi.compose import parts
    from navi.tools.builtin.browser import BrowserTool
    from navi.tools.builtin.browser.profiles import NAME

    if not NAME.match(name):
        fail(f"bad profile name {name!r}: lower-case letters, digits, '-' and '_', at most 40")
    _user(user)
    settings = settings_or_exit()
    tool = BrowserTool(
        parts.browser_settings(settings, parts.build_sandbox(settings)), guard=parts.fetch_guard(settings)
    )
    typer.echo(HELP)

    async def run() -> bool:
        try:
            return await run_login(tool, user, name, url, input, getpass.getpass, typer.echo)
        finally:
            await tool.aclose()

    if asyncio.run(run()):
        typer.echo(f"saved the browser profile {name!r}; the browser tool opens with it as profile={name!r}")
    else:
        typer.echo("nothing saved")


@app.command("profiles")
def profiles(user: UserOption = "local") -> None:
    """List the browser profiles (named sign-ins)."""
    _user(user)
    names = _profiles().names(user)
    typer.echo("\n".join(names) if names else "no browser profiles (navi browser login NAME URL makes one)")


@app.command("forget")
def forget(
    name: Annotated[str, typer.Argument(help="The profile's name.")], user: UserOption = "local"
) -> None:
    """Delete a browser profile (its cookies and storage)."""
    from navi.tools.builtin.browser.profiles import ProfileError

    _user(user)
    try:
        removed = _profiles().remove(user, name)
    except ProfileError as exc:
        fail(str(exc))
    if not removed:
        fail(f"there is no browser profile {name!r}", 1)
    typer.echo(f"forgot the browser profile {name!r}")


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="browser")
