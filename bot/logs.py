"""Log lines: one JSON object per line (or plain text), each naming the delivery it serves.

The webhook endpoint, the inbox worker, dispatch and the handlers `bind` what they learn
(delivery id, event, installation, repository, pull request) into a context variable;
asyncio copies it into every task started afterwards, so each line logged during one
delivery's work carries them, and concurrent deliveries never see each other's. Every line
also goes through `redact`: a GitHub token, an App JWT or a private key is cut out whatever
logged it, and so are the secrets `configure` is given.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Literal, TextIO

LogFormat = Literal["json", "text"]
REDACTED = "[redacted]"

_EMPTY: Mapping[str, object] = MappingProxyType({})
_CONTEXT: ContextVar[Mapping[str, object]] = ContextVar("flakybot_log_context", default=_EMPTY)
# GitHub's token prefixes (ghp_ personal, gho_ OAuth, ghu_/ghs_ App user and installation,
# ghr_ refresh), fine-grained personal tokens, JWTs (the App's), PEM private keys.
_CREDENTIALS = re.compile(
    r"\bgh[pousr]_[A-Za-z0-9_-]{16,}"
    r"|\bgithub_pat_[A-Za-z0-9_]{20,}"
    r"|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)",
    re.DOTALL,
)


def bind(**fields: object) -> None:
    """Add fields to the log context of this task and of the tasks it starts from now on."""
    known = {key: value for key, value in fields.items() if value is not None}
    if known:
        _CONTEXT.set(MappingProxyType({**_CONTEXT.get(), **known}))


class Redactor:
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        # Short values would cut ordinary words out of lines; real secrets are long.
        self.secrets = sorted({s for s in secrets if len(s) >= 8}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        return _CREDENTIALS.sub(REDACTED, text)


class JsonFormatter(logging.Formatter):
    """`{"time", "level", "logger", "message", delivery..., "error"}`, one line each."""

    def __init__(self, redact: Redactor) -> None:
        super().__init__()
        self.redact = redact

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            **getattr(record, "context", _CONTEXT.get()),
        }
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return self.redact(json.dumps(entry, ensure_ascii=False, default=str))


class TextFormatter(logging.Formatter):
    """`time LEVEL logger: message [delivery=… repo=… pr=…]`, for people at a terminal."""

    def __init__(self, redact: Redactor) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")
        self.redact = redact

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        context: Mapping[str, object] = getattr(record, "context", _CONTEXT.get())
        if context:
            text += " [" + " ".join(f"{key}={value}" for key, value in context.items()) + "]"
        return self.redact(text)


class ContextFilter(logging.Filter):
    """Copies the log context onto the record when it is made, in the task that logs it."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.context = _CONTEXT.get()
        return True


def handler(
    fmt: LogFormat, secrets: Iterable[str] = (), stream: TextIO | None = None
) -> logging.Handler:
    """A stream handler (stderr by default) writing `fmt` lines, context and redaction on."""
    out: logging.StreamHandler[TextIO] = logging.StreamHandler(stream or sys.stderr)
    redact = Redactor(secrets)
    out.setFormatter(JsonFormatter(redact) if fmt == "json" else TextFormatter(redact))
    out.addFilter(ContextFilter())
    return out


def configure(fmt: LogFormat, level: str, secrets: Iterable[str] = ()) -> None:
    """Send every log line to stderr as `fmt`, replacing any handler set before."""
    logging.basicConfig(level=level.upper(), handlers=[handler(fmt, secrets)], force=True)
    # aiosqlite logs every statement with its parameters (payloads) at DEBUG: noise, not ours.
    logging.getLogger("aiosqlite").setLevel(max(logging.INFO, logging.getLogger().level))
