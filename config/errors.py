"""tempr's exception tree. Catch narrowly.

TemprError
├── ValidationError          bad input: a 4xx for HTTP, a named line/field for the CLI
│   ├── IngestValidationError    one JSONL line or array item; carries line and field
│   └── ConfigError              a TEMPR_* setting that cannot be used; names the variable
├── NotFound                 an unknown bank or job
├── ServiceError             a service tempr manages could not be started or reached
└── RecallError              a recall could not be answered
    ├── AllStrategiesFailed      every strategy degraded: nothing to fuse
    └── RecallTimeout            the request's deadline passed
"""

from __future__ import annotations


class TemprError(Exception):
    """Base of every error tempr raises on purpose."""


class ValidationError(TemprError):
    """Input that can never succeed as sent. ``field`` names the offending field."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field

    def __str__(self) -> str:
        return f"field '{self.field}': {self.message}" if self.field else self.message

    def to_dict(self) -> dict[str, object]:
        return {"error": type(self).__name__, "message": self.message, "field": self.field}


class IngestValidationError(ValidationError):
    """A bad fact. ``line`` is 1-based (JSONL line, or array index + 1 over HTTP)."""

    def __init__(self, message: str, *, line: int, field: str | None = None) -> None:
        super().__init__(message, field=field)
        self.line = line

    def __str__(self) -> str:
        where = f"line {self.line}" + (f", field '{self.field}'" if self.field else "")
        return f"{where}: {self.message}"

    def to_dict(self) -> dict[str, object]:
        return {**super().to_dict(), "line": self.line}


class ConfigError(ValidationError):
    """A ``TEMPR_*`` setting that cannot be used; ``field`` is the environment variable's name.

    Raised when the settings load (``config.settings.get_settings``), so a typo fails at start-up
    with one line naming the variable, not later as a request's error."""


class NotFound(TemprError):
    """An unknown bank, job or memory."""


class ServiceError(TemprError):
    """PostgreSQL or Redis could not be started, stopped or reached."""


class RecallError(TemprError):
    """A recall could not be answered."""


class AllStrategiesFailed(RecallError):
    """Every retrieval strategy failed or timed out, so there is nothing to fuse."""


class RecallTimeout(RecallError):
    """The recall's deadline passed before its result was ready."""


# Retries: nothing in tempr retries an error by class. A recall has a deadline and is cheaper to
# ask again than to retry step by step; a worker lost mid-task is covered by late acks (the broker
# redelivers the message). The one retry loop is webhook delivery (tasks/webhooks.py): connection
# errors, timeouts, 5xx, 408 and 429 are retried with backoff, other answers are final.
