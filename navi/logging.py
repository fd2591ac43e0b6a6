"""Structured logging: structlog on top of the standard library, level from `LOG_LEVEL`.

Request and session ids are bound with `structlog.contextvars`, so every line logged while serving
a request or running a session carries them without being passed around.

Every line, ours or a library's, at every level, passes `redact_secrets` before it is written:
credentials in headers, query strings and URLs (a token, a password in `OLLAMA_HOST`) never reach
the log, whatever logged them (a debug line of the WebSocket library prints handshake headers).
"""

from __future__ import annotations

import logging
import sys

import structlog

from navi import redact


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever `sys.stderr` is when a line is logged (test runners and CLIs swap it)."""

    @property
    def stream(self) -> object:
        return sys.stderr

    @stream.setter
    def stream(self, _value: object) -> None:
        pass


def redact_secrets(
    _logger: object, _method: str, event_dict: structlog.types.EventDict
) -> structlog.types.EventDict:
    """Mask credentials in every field of a line (its message, headers, URLs, a traceback's text).
    Keys starting with "_" are structlog's own bookkeeping (the stdlib record), left as they are."""
    for key, value in list(event_dict.items()):
        if key.startswith("_"):
            continue
        if redact.is_secret_name(key):
            event_dict[key] = redact.secret_value(value)
        elif isinstance(value, str | dict | list | tuple):
            event_dict[key] = redact.data(value)
    return event_dict


def uvicorn_named(
    _logger: object, _method: str, event_dict: structlog.types.EventDict
) -> structlog.types.EventDict:
    """uvicorn writes all its lines, the normal ones too, through a logger named "uvicorn.error":
    named "uvicorn" here, so a socket that opened or closed as it should is not labelled an error."""
    if event_dict.get("logger") == "uvicorn.error":
        event_dict["logger"] = "uvicorn"
    return event_dict


class SocketAccessLines(logging.Filter):
    """uvicorn's line for every WebSocket opened or refused ('"WebSocket /ws/…" [accepted]'): an
    access-log line, which Navi writes at DEBUG only (like `http.request`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (isinstance(record.msg, str) and record.msg.startswith('%s - "WebSocket '))


def configure_logging(level: str = "INFO", fmt: str = "console") -> None:
    shared: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        uvicorn_named,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        # Tracebacks become text here, so the redaction below sees them too.
        structlog.processors.format_exc_info,
        redact_secrets,
    ]
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer()
        if fmt == "json"
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=shared,
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
    )
    handler = _StderrHandler()
    handler.setFormatter(formatter)
    root = logging.getLogger()
    for old in list(root.handlers):
        if getattr(old, "_navi", False):
            root.removeHandler(old)
    handler._navi = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level.upper())
    # Third-party chatter stays at WARNING unless we are debugging.
    for noisy in ("httpx", "httpx2", "httpcore", "httpcore2", "asyncssh", "aiosqlite", "mcp"):
        logging.getLogger(noisy).setLevel(logging.DEBUG if level.upper() == "DEBUG" else logging.WARNING)
    uvicorn = logging.getLogger("uvicorn.error")
    for kept in [f for f in uvicorn.filters if isinstance(f, SocketAccessLines)]:
        uvicorn.removeFilter(kept)
    if level.upper() != "DEBUG":
        uvicorn.addFilter(SocketAccessLines())


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    return structlog.stdlib.get_logger(name)
