"""`navi doctor`: check the model servers, the profiles' models, the database, the tools folder, the
sandbox, the MCP servers, each configured channel's login and the address Navi listens on; print
each check as it ends, with its fix.

Nothing is created: a missing database or tools folder is reported as what `navi serve` will make.
Every network question gets a few seconds, so an unreachable host costs seconds, not minutes.

For each model it also reports what the server says about it: a window smaller than the one Navi
is configured with (OLLAMA_NUM_CTX, Navi's window for every backend) is a problem with its fix,
and a model without native tool calls gets a note that Navi will call tools through text, a
llama-server with one slot a note that side calls will evict the conversation's cached prompt.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import typer

from navi.cli.common import settings_or_exit
from navi.config import Settings
from navi.llm.backends import kind_of, spelled_out
from navi.llm.base import LLMBackend, ModelInfo, model_listed
from navi.llm.chain import ModelChain
from navi.llm.errors import LLMError
from navi.llm.registry import BackendRegistry

T = TypeVar("T")
NETWORK_TIMEOUT = 3.0  # seconds for each request to a model server or database
MCP_START_TIMEOUT = 20.0  # an MCP server's start (some fetch their packages first)
CHANNEL_TIMEOUT = 20.0  # a channel's logins (email: IMAP and SMTP, each with TLS)
CHANNEL_FIX = "check the channel's settings in .env (docs/channels.md)"


@dataclass
class Check:
    ok: bool
    what: str
    fix: str = ""
    note: bool = False  # worth knowing, not a problem

    @property
    def mark(self) -> str:
        return "✗" if not self.ok else ("!" if self.note else "✓")


def _window_fix(info: ModelInfo, window: int, server_window: int) -> str:
    if info.server == "ollama":
        return f"set OLLAMA_NUM_CTX={server_window} (the most {info.name} can take)"
    grow = {
        "llama.cpp": f"or restart llama-server with `-c {window}`",
        "vllm": f"or restart vLLM with `--max-model-len {window}`",
        "lm-studio": f"or load the model in LM Studio with a context length of {window}",
    }.get(info.server, "or give the model a larger window on the server")
    return f"set OLLAMA_NUM_CTX={server_window} {grow}"


async def model_checks(llm: LLMBackend, model: str, window: int) -> list[Check]:
    """The server's window against Navi's, and how tools will be called."""
    try:
        info = await llm.model_info(model)
    except LLMError as exc:
        return [Check(False, f"model {model}: {exc}")]
    checks: list[Check] = []
    server = info.server or llm.name
    if info.context_length is None:
        checks.append(Check(True, f"model {model}: the server does not say its window; Navi uses {window:,}"))
    elif window > info.context_length:
        limit = (
            f"the {info.context_length:,} it was trained for"
            if info.server == "ollama"
            else f"the {info.context_length:,} the {server} server runs it with"
        )
        checks.append(
            Check(
                False,
                f"model {model}: Navi's window ({window:,} tokens) is larger than {limit}; "
                "long conversations would overflow it",
                _window_fix(info, window, info.context_length),
            )
        )
    else:
        checks.append(
            Check(
                True,
                f"model {model}: window {window:,} tokens "
                f"(the {server} server allows {info.context_length:,})",
            )
        )
    if not info.native_tools:
        checks.append(
            Check(
                True,
                f"model {model}: no native tool calls on this server — Navi will use text tool calling "
                "(tools described in the prompt, calls read from the reply)",
                "for native tool calls, serve it with a chat template that supports tools"
                + (" (llama-server --jinja --chat-template-file …)" if info.server == "llama.cpp" else ""),
                note=True,
            )
        )
    if info.server == "llama.cpp" and info.details.get("slots") == 1:
        checks.append(
            Check(
                True,
                f"model {model}: llama-server runs one slot — planning, naming and summaries take the "
                "conversation's cached prompt, and the next answer reads it all again",
                "restart llama-server with `--parallel 2` and twice the `-c` (each slot gets half), "
                "and `--cache-reuse 256`",
                note=True,
            )
        )
    return checks


async def run_checks(settings: Settings) -> AsyncIterator[Check]:
    """Each check as soon as it is done, so a slow server shows where doctor is waiting."""
    from navi.compose.models import build_backends, build_profiles

    yield Check(True, "configuration loads")
    yield _host_check(settings)
    yield _token_check(settings)
    backends = build_backends(settings, timeout=NETWORK_TIMEOUT)
    profiles = build_profiles(settings, backends)
    try:
        used: dict[str, dict[str, list[str]]] = {}
        for profile in profiles.all():
            backend_name = profiles.backend_of(profile)
            for name, model in _endpoints(backends, backend_name, profiles.model_of(profile)):
                used.setdefault(name, {}).setdefault(model, []).append(profile.id)
        for backend_name, models in used.items():
            async for check in _backend_checks(settings, backends, backend_name, models):
                yield check
        yield await _memory_check(settings, backends)
    finally:
        await backends.aclose()
    yield await _database_check(settings)
    yield _tools_check(settings)
    for check in await asyncio.to_thread(_skills_checks, settings):
        yield check
    yield await asyncio.to_thread(_sandbox_check, settings)
    yield await asyncio.to_thread(_browser_check, settings)
    async for check in mcp_checks(settings):
        yield check
    async for check in channel_checks(settings):
        yield check


async def channel_checks(settings: Settings) -> AsyncIterator[Check]:
    """Log in to each configured channel as `navi serve` would (email: IMAP and SMTP; Matrix)."""
    from navi.compose.channels import build_channels

    for channel in build_channels(settings):
        try:
            problems = await asyncio.wait_for(channel.check(), CHANNEL_TIMEOUT)
        except TimeoutError:
            problems = [f"no answer within {CHANNEL_TIMEOUT:.0f} s"]
        if problems:
            yield Check(False, f"channel {channel.name}: {'; '.join(problems)}", CHANNEL_FIX)
        else:
            yield Check(True, f"channel {channel.name}: logged in")


async def mcp_checks(settings: Settings, start_timeout: float = MCP_START_TIMEOUT) -> AsyncIterator[Check]:
    """Start each server of MCP_SERVERS_FILE (all at once), say how many tools it lists or why it
    failed, with the end of its stderr; then stop them."""
    from navi.compose.parts import mcp_servers
    from navi.compose.problems import SetupError
    from navi.mcp.config import tokens_file
    from navi.mcp.manager import McpManager
    from navi.tools.registry import ToolRegistry

    try:
        servers = mcp_servers(settings)
    except SetupError as exc:
        yield Check(False, exc.problem, exc.fix)
        return
    if not servers:
        return
    tokens = tokens_file(settings.db_path)  # OAuth servers: the tokens `navi mcp-login` stored
    manager = McpManager(servers, ToolRegistry(), tokens_file=tokens, start_timeout=start_timeout)
    try:
        manager.start()
        await manager.wait_started(start_timeout + 1)
        for server in servers:
            where = f"MCP server '{server.name}' ({server.describe()})"
            connection = manager.connections.get(server.name)
            if connection is None:
                yield Check(True, f"{where}: disabled", note=True)
            elif connection.state == "ready":
                count = len(connection.tools)
                yield Check(True, f"{where}: {count} tool{'s' if count != 1 else ''}")
            else:
                tail = connection.stderr_tail()[-800:]
                why = connection.error or "it did not start"
                fix = (
                    f"its stderr ends with: {tail}"
                    if tail
                    else f"check the entry in {settings.mcp_servers_file}"
                )
                yield Check(False, f"{where}: {why}", fix)
    finally:
        await manager.aclose()


async def _within(work: Awaitable[T]) -> T:
    """`work`, or TimeoutError once it has run for a little over the network timeout (a server
    that accepts connections but never answers; a check that asks several questions)."""
    return await asyncio.wait_for(work, NETWORK_TIMEOUT * 2)


async def _backend_checks(
    settings: Settings, backends: BackendRegistry, backend_name: str, models: dict[str, list[str]]
) -> AsyncIterator[Check]:
    try:
        llm = backends.get(backend_name)
    except LLMError as exc:
        yield Check(False, str(exc), f"set DEFAULT_LLM_BACKEND to {spelled_out()}")
        return
    silent = f"the {backend_name} server did not answer within {NETWORK_TIMEOUT * 2:.0f} s"
    kind = kind_of(backend_name)
    pull = kind.pull if kind else ""  # how to get a missing model, where the server has a command
    try:
        status = await _within(llm.status())
    except TimeoutError:
        yield Check(False, silent, _server_fix(backend_name, llm))
        return
    if not status.ok:
        yield Check(False, status.detail, _server_fix(backend_name, llm))
        return
    yield Check(True, status.detail)
    try:
        available = await _within(llm.list_models())
    except (LLMError, TimeoutError) as exc:
        yield Check(False, f"cannot list models: {str(exc) or silent}", _server_fix(backend_name, llm))
        return
    for model, profile_ids in models.items():
        users = ", ".join(profile_ids)
        try:
            if not available or model_listed(available, model) or await _within(_serves_any_name(llm, model)):
                yield Check(True, f"model {model} is available ({users})")
                for check in await _within(model_checks(llm, model, settings.ollama_num_ctx)):
                    yield check
            elif pull:
                yield Check(False, f"model {model} is not pulled ({users})", pull.format(model=model))
            else:
                yield Check(
                    False,
                    f"model {model} is not offered by the {backend_name} server ({users})",
                    f"pick one of: {', '.join(available[:8])}",
                )
        except TimeoutError:
            yield Check(False, f"model {model}: {silent}", _server_fix(backend_name, llm))


def _host_check(settings: Settings) -> Check:
    host = settings.navi_host
    if settings.listens_on_loopback():
        return Check(True, f"Navi listens on {host}, this machine only")
    if settings.navi_api_token:
        from navi.cli.serve import short_token_problem

        weak = short_token_problem(settings)
        if weak:
            return Check(
                False,
                f"NAVI_HOST={host} reaches beyond this machine, but NAVI_API_TOKEN has only "
                f"{len(settings.navi_api_token)} characters: `navi serve` will refuse to start",
                "set a NAVI_API_TOKEN of at least 16 characters (e.g. `openssl rand -hex 32`)",
            )
        return Check(True, f"Navi listens on {host}, beyond this machine, and asks for NAVI_API_TOKEN")
    return Check(
        False,
        f"NAVI_HOST={host} reaches beyond this machine, but NAVI_API_TOKEN is not set: anyone on the "
        "network could drive your agent, so `navi serve` will refuse to start",
        "set NAVI_API_TOKEN (e.g. `openssl rand -hex 32`), or NAVI_HOST=127.0.0.1",
    )


def _token_check(settings: Settings) -> Check:
    """Where the access token comes from (never what it is)."""
    from navi.compose import SetupError
    from navi.compose.token import access_token

    try:
        token = access_token(settings, create=False)
    except SetupError as exc:
        return Check(False, exc.problem, exc.fix)
    if token.source == "setting":
        return Check(True, "requests need NAVI_API_TOKEN")
    if token.source == "disabled":
        return Check(
            True, "NAVI_AUTH_DISABLED: no access token; anyone who can reach the port can drive Navi"
        )
    if token.value:
        return Check(True, f"requests need Navi's own token, kept in {token.path} (readable only by you)")
    return Check(
        True, f"no access token yet: `navi serve` makes one in {token.path} and prints a sign-in link"
    )


async def _memory_check(settings: Settings, backends: BackendRegistry) -> Check:
    """Which memory search Navi will use; an embedding model is asked for one vector to prove it."""
    from navi.compose.models import describe_memory_search, embedder

    embed = embedder(settings, backends)
    dialect = "postgresql" if settings.database_url else "sqlite"
    if embed is None:
        return Check(True, f"memory search: {describe_memory_search(None, dialect)}", note=True)
    try:
        (vector,) = await asyncio.wait_for(embed(["where I live"]), 30.0)
    except Exception as exc:  # a missing model, a server without embeddings: words only, said so
        return Check(
            False,
            f"memory search: embedding model {embed.name} does not answer ({exc}); "
            "search falls back to keywords",
            "set MEMORY_EMBED_MODEL=builtin, pull the model (`ollama pull NAME`), or start llama-server "
            "with --embeddings",
        )
    detail = describe_memory_search(embed, dialect)
    return Check(True, f"memory search: {detail} ({len(vector)} dimensions)")


async def _database_check(settings: Settings) -> Check:
    from navi.compose import SetupError
    from navi.compose.database import probe_database

    try:
        return Check(True, await probe_database(settings, connect_timeout=NETWORK_TIMEOUT))
    except SetupError as exc:
        return Check(False, exc.problem, exc.fix)


def _tools_check(settings: Settings) -> Check:
    from navi.compose import SetupError
    from navi.compose.parts import check_tools_dir

    folder = Path(settings.tools_dir).expanduser().absolute()
    try:
        check_tools_dir(settings)
    except SetupError as exc:
        return Check(False, exc.problem, exc.fix)
    if not folder.exists():
        return Check(True, f"no tools folder at {folder} yet; `navi serve` creates it with the starter tools")
    return Check(True, f"tools folder {folder}")


def _skills_checks(settings: Settings) -> list[Check]:
    """The owner's skills: how many load, and each that does not, with its file and line."""
    from navi.compose.parts import skill_library
    from navi.sessions.models import DEFAULT_OWNER

    report = skill_library(settings).load(DEFAULT_OWNER)
    off = len(report.skills) - len(report.enabled())
    count = f"{len(report.skills)} skill{'s' if len(report.skills) != 1 else ''}" + (
        f" ({off} off)" if off else ""
    )
    checks = [Check(True, f"skills: {count}")]
    fix = "fix the file, or remove the skill (docs/skills.md)"
    return checks + [Check(False, f"skill {problem}", fix) for problem in report.problems]


def _sandbox_check(settings: Settings) -> Check:
    """Whether code_exec, terminal and user tools run confined, as `navi serve` would run them."""
    from navi.compose.parts import build_sandbox
    from navi.sandbox import INSTALL_FIX

    sandbox = build_sandbox(settings)
    if sandbox.active:
        return Check(True, f"sandbox: {sandbox.describe()}")
    if settings.sandbox_mode == "off":
        return Check(
            True,
            f"sandbox: {sandbox.describe()} (SANDBOX_MODE=off)",
            "set SANDBOX_MODE=auto to confine them with bubblewrap",
            note=True,
        )
    then = (
        "code_exec, terminal and user tools will refuse to run (SANDBOX_MODE=required)"
        if settings.sandbox_mode == "required"
        else "code_exec, terminal and user tools would run unconfined, as the user running Navi"
    )
    return Check(False, f"sandbox: {sandbox.availability.problem}; {then}", INSTALL_FIX)


_PLAYWRIGHT = "pip install 'navi[browser]'"


def _browser_check(settings: Settings) -> Check:
    """Whether the browser tool can start Chromium, and confined how (Chromium is not started)."""
    import importlib.util
    import os

    from navi.compose.parts import browser_settings, build_sandbox
    from navi.tools.builtin.browser.launch import BrowserUnavailable, sandbox_kind, working_bwrap

    # The browser tool is optional: what keeps it from starting is worth knowing, not a failure.
    browser = working_bwrap(browser_settings(settings, build_sandbox(settings)))
    if not os.access(browser.executable, os.X_OK):
        fix = "apt-get install chromium, or set NAVI_BROWSER_EXECUTABLE to its path"
        return Check(
            True, f"browser: no Chromium at {browser.executable}; the browser tool will fail", fix, True
        )
    if importlib.util.find_spec("playwright") is None:
        return Check(
            True, "browser: Playwright is not installed; the browser tool will fail", _PLAYWRIGHT, True
        )
    try:
        kind = sandbox_kind(browser)
    except BrowserUnavailable as exc:
        return Check(True, f"browser: {exc}", "apt-get install bubblewrap", True)
    how = {
        "bwrap": "in bubblewrap, with no network of its own",
        "chromium": "in Chromium's own sandbox",
        "off": "unconfined (NAVI_BROWSER_SANDBOX=off)",
    }[kind]
    return Check(True, f"browser: {browser.executable}, {how}", note=kind == "off")


async def _serves_any_name(llm: LLMBackend, model: str) -> bool:
    """llama-server answers for its one model under whatever name a request uses."""
    try:
        return (await llm.model_info(model)).server == "llama.cpp"
    except LLMError:
        return False


def _endpoints(backends: BackendRegistry, backend: str, model: str) -> list[tuple[str, str]]:
    """The (backend, model) pairs a profile's calls use: a model chain's endpoints (docs/models.md),
    else its one backend and model."""
    chain = backends.get(backend) if backend in backends else None
    if backends.models is None or not isinstance(chain, ModelChain):
        return [(backend, model)]
    return [(e.id, e.model) for e in chain.endpoints]


def _server_fix(backend: str, llm: LLMBackend) -> str:
    """What to do when the backend's server does not answer (its entry in `navi.llm.backends`;
    a model list's endpoint: its backend's entry)."""
    kind = kind_of(backend) or kind_of(llm.name)
    return kind.server_fix.format(where=llm.where) if kind else "fix its entry in MODELS_FILE"


def doctor() -> None:
    """Check the set-up and print the fix for each problem.

    The model server and models, the database, the tools folder, the sandbox, the MCP servers
    (each started, its tools counted, then stopped), each channel's login (email: IMAP and SMTP; Matrix)
    and the address Navi listens on; each check prints as it ends. Creates nothing.
    """
    settings = settings_or_exit()

    async def report() -> int:
        failed = 0
        async for check in run_checks(settings):
            typer.echo(f"{check.mark} {check.what}")  # echo flushes: each line shows as its check ends
            if check.fix:
                typer.echo(f"    {'hint' if check.note else 'fix'}: {check.fix}")
            failed += not check.ok
        return failed

    failed = asyncio.run(report())
    if failed:
        typer.echo(f"{failed} problem{'s' if failed > 1 else ''} found.")
        raise typer.Exit(1)
    typer.echo("All good.")


def register(app: typer.Typer) -> None:
    app.command()(doctor)
