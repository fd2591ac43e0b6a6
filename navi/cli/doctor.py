"""`navi doctor`: check the model servers, the profiles' models and the database; print fixes.

For each model it also reports what the server says about it: a window smaller than the one Navi
is configured with (OLLAMA_NUM_CTX, Navi's window for every backend) is a problem with its fix,
and a model without native tool calls gets a note that Navi will call tools through text.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import typer

from navi.cli.main import settings_or_exit
from navi.config import Settings
from navi.llm.base import LLMBackend, ModelInfo
from navi.llm.errors import LLMError


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
    return checks


def _has_model(available: list[str], model: str) -> bool:
    if model in available:
        return True
    if ":" not in model:
        return f"{model}:latest" in available
    return model.endswith(":latest") and model.removesuffix(":latest") in available


async def run_checks(settings: Settings) -> list[Check]:
    from navi.compose.parts import build_backends, build_profiles

    checks = [Check(True, "configuration loads")]
    backends = build_backends(settings)
    profiles = build_profiles(settings, backends)
    try:
        used: dict[str, dict[str, list[str]]] = {}
        for profile in profiles.all():
            backend_name = profiles.backend_of(profile)
            model = profiles.model_of(profile)
            used.setdefault(backend_name, {}).setdefault(model, []).append(profile.id)
        for backend_name, models in used.items():
            try:
                llm = backends.get(backend_name)
            except LLMError as exc:
                checks.append(
                    Check(False, str(exc), "set DEFAULT_LLM_BACKEND to ollama, openai or anthropic")
                )
                continue
            status = await llm.status()
            if not status.ok:
                checks.append(Check(False, status.detail, _server_fix(backend_name, settings)))
                continue
            checks.append(Check(True, status.detail))
            try:
                available = await llm.list_models()
            except LLMError as exc:
                checks.append(Check(False, f"cannot list models: {exc}", _server_fix(backend_name, settings)))
                continue
            for model, profile_ids in models.items():
                users = ", ".join(profile_ids)
                if not available or _has_model(available, model) or await _serves_any_name(llm, model):
                    checks.append(Check(True, f"model {model} is available ({users})"))
                    checks.extend(await model_checks(llm, model, settings.ollama_num_ctx))
                elif backend_name == "ollama":
                    checks.append(
                        Check(False, f"model {model} is not pulled ({users})", f"run `ollama pull {model}`")
                    )
                else:
                    checks.append(
                        Check(
                            False,
                            f"model {model} is not offered by the {backend_name} server ({users})",
                            f"pick one of: {', '.join(available[:8])}",
                        )
                    )
        ok, detail = await check_database(settings)
        fix = (
            "check DATABASE_URL and that PostgreSQL is running"
            if settings.database_url
            else "check DB_PATH points to a writable location"
        )
        checks.append(Check(ok, detail, "" if ok else fix))
    finally:
        await backends.aclose()
    return checks


async def _serves_any_name(llm: LLMBackend, model: str) -> bool:
    """llama-server answers for its one model under whatever name a request uses."""
    try:
        return (await llm.model_info(model)).server == "llama.cpp"
    except LLMError:
        return False


async def check_database(settings: Settings) -> tuple[bool, str]:
    """Open the database and run a trivial query; return (ok, what happened)."""
    from navi.compose.parts import database_url, describe_database
    from navi.storage.database import Database

    db = Database(database_url(settings))
    try:
        await db.ping()
    except Exception as exc:  # every driver has its own exception tree; doctor reports them all
        return False, f"cannot open {describe_database(settings)}: {exc}"
    finally:
        await db.dispose()
    return True, f"{describe_database(settings)} opens"


def _server_fix(backend: str, settings: Settings) -> str:
    if backend == "ollama":
        return f"start Ollama with `ollama serve` (or set OLLAMA_HOST; now {settings.ollama_host})"
    if backend == "openai":
        return "start the server or set OPENAI_BASE_URL / OPENAI_API_KEY"
    return "set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL if you use a proxy)"


def doctor() -> None:
    """Check that Navi can reach its model server, models and database."""
    settings = settings_or_exit()
    checks = asyncio.run(run_checks(settings))
    for check in checks:
        typer.echo(f"{check.mark} {check.what}")
        if check.fix:
            typer.echo(f"    {'hint' if check.note else 'fix'}: {check.fix}")
    failed = sum(not c.ok for c in checks)
    if failed:
        typer.echo(f"{failed} problem{'s' if failed > 1 else ''} found.")
        raise typer.Exit(1)
    typer.echo("All good.")


def register(app: typer.Typer) -> None:
    app.command()(doctor)
