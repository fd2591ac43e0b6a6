"""Settings: every knob Navi reads from the environment or `.env`, in one typed object.

Built by `load_settings()` in the app factory or the CLI, never at import (tests build many).
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, computed_field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from navi import redact
from navi.config.browser import BrowserConfig
from navi.config.models import ModelSettings
from navi.config.voice import VoiceSettings
from navi.llm.settings import BackendSettings
from navi.net.guard import parse_allowlist

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}


class SettingsError(Exception):
    """A setting has a value Navi cannot use; the message names the variable."""


def is_loopback_host(host: str) -> bool:
    """Whether `host` (a name or an address, IPv6 with or without brackets) is this machine only."""
    host = host.strip("[]")
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _split_list(raw: str) -> list[str]:
    return [part.strip() for part in raw.split(",") if part.strip()]


APPROVAL_MODES = ("auto", "smart", "always")


def _tool_modes(raw: str) -> dict[str, str]:
    """`"terminal=always, http_request=auto"` → {tool: mode}; ValueError saying what is wrong."""
    modes: dict[str, str] = {}
    for part in _split_list(raw):
        tool, sep, mode = (p.strip() for p in part.partition("="))
        if not sep or not tool:
            raise ValueError(f"{part!r} is not tool=mode (e.g. terminal=always)")
        if mode.lower() not in APPROVAL_MODES:
            raise ValueError(f"{part!r}: the mode must be one of {', '.join(APPROVAL_MODES)}")
        modes[tool] = mode.lower()
    return modes


def _headers(raw: str) -> dict[str, str]:
    """`"Priority: high, X-Tags: bell"` → {name: value}; ValueError saying which entry is wrong."""
    headers: dict[str, str] = {}
    for part in _split_list(raw):
        name, sep, value = (p.strip() for p in part.partition(":"))
        if not sep or not name or not name.replace("-", "").isalnum() or not value.isprintable():
            raise ValueError(f"{part!r} is not Name: value (e.g. Priority: high)")
        headers[name] = value
    return headers


class Settings(BackendSettings, ModelSettings, VoiceSettings, BrowserConfig, BaseSettings):
    """Every setting; the model backends' (navi/llm/settings.py) and model list's (config/models.py) first."""

    model_config = SettingsConfigDict(
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        case_sensitive=False,
        validate_default=True,
    )

    # --- LLM (after the backends' own settings) ---------------------------------------------------
    llm_connect_timeout_seconds: float = Field(5.0, gt=0)
    # A model call fails when the first token takes longer than this (model load + reading the
    # prompt), or when the stream then goes quiet for longer than the idle timeout.
    llm_first_token_timeout_seconds: float = Field(300.0, gt=0)
    llm_idle_timeout_seconds: float = Field(60.0, gt=0)
    # Token caps, one per kind of model call: nothing a model does can run until the window is full.
    llm_max_tokens_answer: int = Field(2048, ge=16)
    llm_max_tokens_planning: int = Field(160, ge=16)
    llm_max_tokens_summary: int = Field(768, ge=64)
    llm_max_tokens_extraction: int = Field(384, ge=32)
    llm_max_tokens_naming: int = Field(24, ge=4)
    llm_max_tokens_analysis: int = Field(768, ge=64)

    # --- Security / sandboxing -------------------------------------------------------------------
    fs_allowed_paths: str = "*"
    terminal_allowed_commands: str = "*"
    ssh_hosts_file: str = "ssh_hosts.json"
    # Hosts the fetching tools may reach although they are local or private (names, IPs, CIDRs).
    navi_fetch_allowed_hosts: str = ""
    code_exec_memory_mb: int = Field(512, ge=64)
    # The browser tool's: navi/config/browser.py.
    code_exec_timeout_seconds: int = Field(30, ge=1, le=300)
    terminal_timeout_seconds: int = Field(60, ge=1, le=600)
    # Which tool calls wait for the user: auto (none), smart (programs, code, changes), always (all).
    navi_approval_mode: Literal["auto", "smart", "always"] = "smart"
    # Per-tool modes, e.g. "terminal=always,http_request=auto".
    navi_approval_overrides: str = ""
    # A call nobody answers within this many seconds is not run (counts as a denial).
    navi_approval_timeout_seconds: float = Field(300.0, gt=0)
    # Turns run through the OpenAI-compatible API (/v1/chat/completions) have nobody to answer an
    # approval: its calls are denied at once (deny), or run without asking (allow).
    navi_openai_api_approvals: Literal["deny", "allow"] = "deny"
    # … and so have turns asked for through Navi's MCP server (`navi mcp`, /mcp): its own setting,
    # since the clients it serves (desktop apps, other agents) are trusted differently.
    navi_mcp_approvals: Literal["deny", "allow"] = "deny"
    # A question the user stopped before any answer: sent to the model marked as stopped (mark), or
    # left out of what it sees (omit). Never merged into the next question.
    navi_stopped_questions: Literal["mark", "omit"] = "mark"

    # code_exec, terminal and user tools run under bubblewrap: `auto` when it works here (else
    # unconfined, with a warning), `required` (refuse to run them without it), `off`.
    sandbox_mode: Literal["auto", "required", "off"] = "auto"
    # Whether sandboxed children may use the network (false: a network namespace of their own).
    sandbox_network: bool = True

    # --- Server ----------------------------------------------------------------------------------
    navi_host: str = "127.0.0.1"
    navi_port: int = Field(8000, ge=1, le=65535)
    navi_api_token: str = ""
    # Where the token Navi makes for itself (no NAVI_API_TOKEN) is kept; empty: beside the database.
    navi_token_file: str = ""
    # Web Push (docs/notifications.md): where Navi keeps the VAPID key pair it makes on first start
    # (empty: beside the database), and the contact push services see in its VAPID claims.
    navi_vapid_file: str = ""
    navi_push_subject: str = "mailto:navi@localhost"
    # Background jobs (docs/jobs.md): how many each user may have queued or running, and each
    # job's budget of steps (tool calls) and seconds.
    navi_jobs_per_user: int = Field(3, ge=1, le=100)
    navi_job_max_steps: int = Field(40, ge=1, le=10_000)
    navi_job_max_seconds: int = Field(1800, ge=10, le=7 * 86400)
    # A research job (docs/jobs.md): sub-questions, sources read, web search (off: named URLs only).
    navi_research_max_questions: int = Field(3, ge=1, le=10)
    navi_research_max_sources: int = Field(8, ge=1, le=50)
    navi_research_web_search: bool = True
    # Serve without any token. Only on loopback, and only when asked for by name.
    navi_auth_disabled: bool = False
    navi_allowed_hosts: str = ""
    navi_allowed_origins: str = ""
    # Reverse proxies whose X-Forwarded-For names the real client (IPs or CIDR ranges); empty: none.
    navi_trusted_proxies: str = ""
    # Limits on what a client may send: the largest JSON request body (uploads and imports have
    # their own), how long a connection may take to send a request's head, and how many
    # connections may be waiting to send one at once (the oldest is closed to make room).
    navi_max_request_mb: int = Field(16, ge=1)
    navi_header_timeout_seconds: float = Field(10.0, gt=0)
    navi_max_pending_connections: int = Field(256, ge=8)
    # How often every open WebSocket's sign-in or token is checked again: a removed user's or a
    # signed-out browser's socket no announcement reached is closed within this many seconds.
    navi_socket_recheck_seconds: float = Field(5.0, gt=0)
    # Where `navi chat` and `navi tools` reach Navi (http://host:port); empty: NAVI_HOST:NAVI_PORT.
    navi_url: str = ""
    # `navi chat`'s input history; empty: navi/chat_history under $XDG_STATE_HOME (~/.local/state).
    navi_chat_history_file: str = ""

    # --- Database --------------------------------------------------------------------------------
    db_path: str = "navi.db"
    database_url: str = ""

    # --- Logging ---------------------------------------------------------------------------------
    log_level: LogLevel = "INFO"
    log_format: Literal["console", "json"] = "console"
    # Traces of turns and model calls go to this OTLP/HTTP collector (its base URL: the traces
    # are posted to …/v1/traces); empty: no traces, and no cost.
    otel_exporter_otlp_endpoint: str = ""

    # --- Tools -----------------------------------------------------------------------------------
    tools_dir: str = "tools"
    manuals_dir: str = "manuals"
    # JSON file of MCP servers whose tools Navi offers (the `mcpServers` shape); empty: none.
    mcp_servers_file: str = ""
    # Agent Skills (docs/skills.md): each user's own skills live in SKILLS_DIR/<user>/ (what
    # `navi skills add` installs into); SKILLS_DIRS are more folders of the owner's skills, read in
    # place (comma- or os.pathsep-separated).
    skills_dir: str = "skills"
    skills_dirs: str = ""
    skill_script_timeout_seconds: int = Field(60, ge=1, le=300)

    # --- Session files ---------------------------------------------------------------------------
    session_files_dir: str = "session_files"
    session_files_max_size_mb: int = Field(200, ge=1)
    session_files_ttl_hours: int = Field(24, ge=1)
    # Session archives taken by POST /sessions/import and `navi sessions import`.
    navi_import_max_mb: int = Field(64, ge=1)
    navi_import_max_messages: int = Field(20_000, ge=1)
    # A ChatGPT or Claude export: its messages (ChatGPT: nodes) in all, every conversation's together.
    navi_import_max_file_messages: int = Field(200_000, ge=1)

    # --- Agent ---------------------------------------------------------------------------------------
    planning_enabled: bool = True
    # A message of at most this many words, with no word of sequence in it ("and", "then", "first",
    # a numbered step, a second line), is answered without the planning call: a greeting, a
    # question, a remark. 0: every message is planned.
    planning_skip_words: int = Field(12, ge=0)
    navi_tool_disclosure: bool = True
    navi_loop_monitor: bool = False

    # --- Context compression ---------------------------------------------------------------------
    context_compression_enabled: bool = True
    context_compression_threshold: float = Field(0.80, gt=0.0, le=1.0)
    context_keep_recent: int = Field(10, ge=1)
    context_summary_temperature: float = Field(0.3, ge=0.0, le=2.0)
    context_summary_max_input_tokens: int = Field(3_000, ge=256)
    context_long_message_tokens: int = Field(1_500, ge=0)

    # --- Documents (docs/documents.md) -------------------------------------------------------------
    # Folders kept in sync with the owner's documents (a notes folder, an Obsidian vault): comma- or
    # os.pathsep-separated paths, each a collection of kind "folder" followed for changes.
    knowledge_dirs: str = ""

    # --- Runs across processes --------------------------------------------------------------------
    # A turn whose Navi process died is declared lost (error `worker_lost`, the message kept, Retry
    # offered) at most this many seconds after the death; leases are renewed every 0.15 × of it.
    run_lease_seconds: float = Field(10.0, ge=0.5, le=3600)
    # PostgreSQL: a run's frames stay in the database this long after it ended, for connections that
    # reconnect to any worker (`?since=N&run=…`) and for following it from another worker.
    run_events_keep_seconds: float = Field(300.0, ge=0)

    # --- Schedules -------------------------------------------------------------------------------
    # The user's time zone (IANA name) for cron expressions and one-off times; empty: this machine's.
    tz: str = ""
    navi_schedule_poll_seconds: float = Field(5.0, ge=0.2, le=60)
    navi_schedule_busy_wait_seconds: float = Field(300.0, ge=0)
    navi_notify_webhook_url: str = ""
    navi_notify_webhook_token: str = ""
    navi_notify_webhook_headers: str = ""

    # --- Channels (docs/channels.md) ----------------------------------------------------------------
    # The profile of sessions a channel starts; empty: the default profile.
    navi_channel_profile: str = ""
    # Email: on when NAVI_EMAIL_ADDRESS, NAVI_EMAIL_IMAP_HOST and NAVI_EMAIL_SMTP_HOST are all set.
    navi_email_address: str = ""
    navi_email_imap_host: str = ""
    navi_email_imap_port: int = Field(993, ge=1, le=65535)
    navi_email_imap_security: Literal["tls", "none"] = "tls"
    navi_email_smtp_host: str = ""
    navi_email_smtp_port: int = Field(587, ge=1, le=65535)
    navi_email_smtp_security: Literal["tls", "starttls", "none"] = "starttls"
    navi_email_username: str = ""
    navi_email_password: str = ""
    # SMTP's own login, when it is not the IMAP one.
    navi_email_smtp_username: str = ""
    navi_email_smtp_password: str = ""
    navi_email_folder: str = "INBOX"
    navi_email_poll_seconds: float = Field(60.0, ge=1, le=3600)
    # The authserv-id (usually the host name) your receiving mail server writes in the
    # Authentication-Results it adds: only a DKIM or DMARC pass from that server, for the From's
    # domain, lets a mail through. Empty: no mail passes unless NAVI_EMAIL_TRUST_LOCAL_DELIVERY.
    navi_email_authserv_id: str = ""
    # Take mail that carries no Authentication-Results of that server as delivered by a path you
    # trust (only your own accounts can put mail in the folder): its From alone says who wrote it.
    navi_email_trust_local_delivery: bool = False
    # Matrix: on when NAVI_MATRIX_HOMESERVER and NAVI_MATRIX_USER are set, with the password or an
    # access token of that account.
    navi_matrix_homeserver: str = ""
    navi_matrix_user: str = ""
    navi_matrix_password: str = ""
    navi_matrix_access_token: str = ""

    # --- Memory ----------------------------------------------------------------------------------
    memory_stale_minutes: int = Field(30, ge=1)
    memory_extract_interval_minutes: int = Field(5, ge=1)
    # "builtin" (= "builtin:minilm", the default): all-MiniLM-L6-v2 on onnxruntime; "builtin:wordllama":
    # WordLlama's word vectors (faster, less exact) — both shipped in wheels; another name: that model
    # on the default backend's embedding endpoint (Ollama /api/embed, OpenAI-style /v1/embeddings);
    # empty: keyword-only. Documents are embedded with the same model.
    memory_embed_model: str = "builtin"

    # --- Documents (docs/documents.md) ----------------------------------------------------------------
    # The largest document Navi takes (413 beyond it) and reads, in bytes.
    documents_max_bytes: int = Field(100 * 1024 * 1024, ge=1024)
    # Pages, slides, sheets or chapters read from one document; more is a failed document.
    documents_max_pages: int = Field(5000, ge=1)
    # Wall-clock seconds reading one document may take (in a child process); then it is stopped.
    documents_extract_seconds: float = Field(120.0, ge=1, le=3600)
    # Index documents in this process's background (one indexer per worker); off: they wait queued
    # for a process that does (another worker, `navi docs add`).
    documents_indexing: bool = True

    # --- Persona ---------------------------------------------------------------------------------
    navi_persona: str = ""
    navi_persona_file: str = ""

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper_level(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value

    @field_validator(
        "sandbox_mode",
        "navi_browser_sandbox",
        "navi_approval_mode",
        "navi_openai_api_approvals",
        "navi_mcp_approvals",
        "navi_stopped_questions",
        "navi_email_imap_security",
        "navi_email_smtp_security",
        "voice_stt",
        "voice_tts",
        mode="before",
    )
    @classmethod
    def _lower_mode(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator(
        "navi_url", "otel_exporter_otlp_endpoint", "navi_matrix_homeserver", "voice_stt_url", "voice_tts_url"
    )
    @classmethod
    def _url(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        if value and not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value

    @field_validator("database_url")
    @classmethod
    def _pg_url(cls, value: str) -> str:
        value = value.strip()
        if value and not value.startswith(("postgresql://", "postgresql+asyncpg://", "postgres://")):
            raise ValueError("must be a postgresql:// URL")
        if value:
            from sqlalchemy.engine import make_url  # only when a URL is set: config stays light

            try:
                make_url(value)
            except Exception as exc:  # SQLAlchemy's parse errors, and int() on a bad port
                raise ValueError(f"is not a valid URL ({exc})") from None
        return value

    @field_validator("tz")
    @classmethod
    def _tz(cls, value: str) -> str:
        value = value.strip()
        if not value or value.startswith(":"):  # ":/etc/localtime", as libc reads TZ: this machine's
            return ""
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError("must be a time zone name like Europe/Berlin or UTC") from None
        return value

    @field_validator("navi_notify_webhook_url")
    @classmethod
    def _webhook(cls, value: str) -> str:
        value = value.strip()
        if value and not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value

    @field_validator("navi_notify_webhook_headers")
    @classmethod
    def _webhook_headers(cls, value: str) -> str:
        _headers(value)  # raises, naming the entry that is wrong
        return value.strip()

    @field_validator("navi_fetch_allowed_hosts")
    @classmethod
    def _fetch_hosts(cls, value: str) -> str:
        parse_allowlist(_split_list(value))  # raises ValueError saying which entry is wrong
        return value

    @field_validator("navi_trusted_proxies")
    @classmethod
    def _proxies(cls, value: str) -> str:
        for entry in _split_list(value):
            try:
                ipaddress.ip_network(entry, strict=False)
            except ValueError:
                raise ValueError(f"{entry!r} is not an IP address or CIDR range") from None
        return value

    @field_validator("navi_approval_overrides")
    @classmethod
    def _overrides(cls, value: str) -> str:
        _tool_modes(value)  # raises, naming the entry that is wrong
        return value.strip()

    @model_validator(mode="after")
    def _load_persona_from_file(self) -> Settings:
        if not self.navi_persona and self.navi_persona_file:
            path = Path(self.navi_persona_file).expanduser()
            try:
                self.navi_persona = path.read_text(encoding="utf-8").strip()
            except OSError as exc:
                raise ValueError(f"NAVI_PERSONA_FILE: cannot read {path}: {exc.strerror or exc}") from None
        return self

    # --- Derived values --------------------------------------------------------------------------
    @computed_field  # type: ignore[prop-decorator]
    @property
    def fs_allowed_paths_list(self) -> list[str]:
        return _split_list(self.fs_allowed_paths)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def terminal_allowed_commands_list(self) -> list[str]:
        return _split_list(self.terminal_allowed_commands)

    @property
    def approval_overrides(self) -> dict[str, str]:
        return _tool_modes(self.navi_approval_overrides)

    @property
    def notify_webhook_headers(self) -> dict[str, str]:
        return _headers(self.navi_notify_webhook_headers)

    @property
    def allowed_hosts_list(self) -> list[str]:
        return _split_list(self.navi_allowed_hosts)

    @property
    def fetch_allowed_hosts_list(self) -> list[str]:
        return _split_list(self.navi_fetch_allowed_hosts)

    @property
    def allowed_origins_list(self) -> list[str]:
        return _split_list(self.navi_allowed_origins)

    @property
    def trusted_proxies_list(self) -> list[str]:
        return _split_list(self.navi_trusted_proxies)

    @property
    def session_files_max_bytes(self) -> int:
        return self.session_files_max_size_mb * 1024 * 1024

    @property
    def navi_max_request_bytes(self) -> int:
        return self.navi_max_request_mb * 1024 * 1024

    @property
    def navi_import_max_bytes(self) -> int:
        return self.navi_import_max_mb * 1024 * 1024

    @property
    def token_file(self) -> str:
        """The file holding Navi's own access token: NAVI_TOKEN_FILE, else beside DB_PATH."""
        if self.navi_token_file:
            return self.navi_token_file
        return str(Path(self.db_path).expanduser().parent / "navi_token")

    @property
    def vapid_file(self) -> str:
        """The file holding Navi's VAPID key pair: NAVI_VAPID_FILE, else beside DB_PATH."""
        if self.navi_vapid_file:
            return self.navi_vapid_file
        return str(Path(self.db_path).expanduser().parent / "navi_vapid.pem")

    @property
    def uses_postgres(self) -> bool:
        return bool(self.database_url)

    def listens_on_loopback(self, host: str | None = None) -> bool:
        return is_loopback_host(host or self.navi_host)


def _env_name(loc: tuple[int | str, ...]) -> str:
    return str(loc[0]).upper() if loc else "settings"


def load_settings(**overrides: object) -> Settings:
    """Build settings from the environment and `.env`; raise `SettingsError` naming the bad variable."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            name = _env_name(err["loc"])
            msg = err["msg"].removeprefix("Value error, ")
            if name == "SETTINGS" and ":" in msg:
                name, _, msg = msg.partition(":")
                msg = msg.strip()
            value = err.get("input")
            secret = any(word in name for word in ("KEY", "TOKEN", "PASSWORD", "SECRET"))
            # A URL's password (DATABASE_URL, OLLAMA_HOST) is masked in what is shown.
            shown = f" (got {value!r})" if isinstance(value, str | int | float) and not secret else ""
            problems.append(redact.text(f"{name}: {msg}{shown}"))
        raise SettingsError("invalid configuration — " + "; ".join(problems)) from None


def cache_home() -> Path:
    """Where Navi keeps what it can make again (models assembled or rewritten): ~/.cache/navi."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "navi"
