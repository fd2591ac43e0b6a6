"""Settings → the plain values the HTTP layer is built from (`ServerConfig`).

`create_app` and its routes read these typed parts, never `Settings`: who may connect and how
(token, hosts, origins, proxies), the size limits, where uploads go, what unattended runs may do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from navi.compose.token import access_token
from navi.config import Settings
from navi.runctx import Unattended


@dataclass(frozen=True)
class Uploads:
    """Where a session's uploaded files go (`root/{session_id}/`) and how large one may be."""

    root: Path
    max_bytes: int

    def folder(self, session_id: str) -> Path:
        return self.root / session_id


@dataclass(frozen=True)
class ServerConfig:
    token: str  # the access token asked for ("" when NAVI_AUTH_DISABLED)
    host: str
    port: int
    backend: str  # the default backend, for the start-up log line
    uploads: Uploads
    tools_dir: Path
    allowed_hosts: list[str] = field(default_factory=list)
    allowed_origins: list[str] = field(default_factory=list)
    trusted_proxies: list[str] = field(default_factory=list)
    max_request_bytes: int = 1024 * 1024
    import_max_bytes: int = 64 * 1024 * 1024
    import_max_messages: int = 20_000
    import_max_file_messages: int = 200_000
    header_timeout_seconds: float = 10.0
    openai_approvals: Unattended = "deny"
    mcp_approvals: Unattended = "deny"
    loop_monitor: bool = False
    socket_recheck_seconds: float = 5.0  # how often open WebSockets' credentials are checked again
    voice_max_bytes: int = 25 * 1024 * 1024  # one clip sent to POST /v1/audio/transcriptions


def server_config(settings: Settings) -> ServerConfig:
    return ServerConfig(
        token=access_token(settings).value,  # the one set, else Navi's own (made on first start)
        host=settings.navi_host,
        port=settings.navi_port,
        backend=settings.default_llm_backend,
        uploads=Uploads(Path(settings.session_files_dir), settings.session_files_max_bytes),
        tools_dir=Path(settings.tools_dir),
        allowed_hosts=settings.allowed_hosts_list,
        allowed_origins=settings.allowed_origins_list,
        trusted_proxies=settings.trusted_proxies_list,
        max_request_bytes=settings.navi_max_request_bytes,
        import_max_bytes=settings.navi_import_max_bytes,
        import_max_messages=settings.navi_import_max_messages,
        import_max_file_messages=settings.navi_import_max_file_messages,
        header_timeout_seconds=settings.navi_header_timeout_seconds,
        openai_approvals=settings.navi_openai_api_approvals,
        mcp_approvals=settings.navi_mcp_approvals,
        loop_monitor=settings.navi_loop_monitor,
        socket_recheck_seconds=settings.navi_socket_recheck_seconds,
        voice_max_bytes=settings.voice_max_mb * 1024 * 1024,
    )
