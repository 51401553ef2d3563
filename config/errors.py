"""tempr's exception tree. Catch narrowly.

TemprError
├── ValidationError          bad input: a 4xx for HTTP, a named line/field for the CLI
│   ├── IngestValidationError    one JSONL line or array item; carries line and field
│   └── ConfigError              a TEMPR_* setting that cannot be used; names the variable
├── AuthError                no API key, or an unknown/revoked one (401)
│   └── Forbidden                a valid key outside its banks or roles (403)
├── PayloadTooLarge          a request body over TEMPR_MAX_BODY_BYTES (413)
├── NotFound                 an unknown bank or job (or another tenant's job)
├── ServiceError             a service tempr manages could not be started or reached
│   └── ServiceUnavailable       down right now: retry shortly (HTTP 503 + Retry-After)
└── RecallError              a recall could not be answered
    ├── AllStrategiesFailed      every strategy degraded: nothing to fuse
    └── RecallTimeout            the request's deadline passed
"""

from __future__ import annotations

import re


class TemprError(Exception):
    """Base of every error tempr raises on purpose."""


class ValidationError(TemprError):
    """Input that can never succeed as sent. ``field`` names the offending field."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.args = (message, field)  # Celery rebuilds a worker's exception as cls(*args): keep the field

    def __str__(self) -> str:
        return f"field '{self.field}': {self.message}" if self.field else self.message

    def to_dict(self) -> dict[str, object]:
        return {"error": type(self).__name__, "message": self.message, "field": self.field}


class IngestValidationError(ValidationError):
    """A bad fact. ``line`` is 1-based (JSONL line, or array index + 1 over HTTP)."""

    def __init__(self, message: str, line: int = 0, field: str | None = None) -> None:
        super().__init__(message, field=field)
        self.line = line
        self.args = (message, line, field)

    def __str__(self) -> str:
        where = f"line {self.line}" + (f", field '{self.field}'" if self.field else "")
        return f"{where}: {self.message}"

    def to_dict(self) -> dict[str, object]:
        return {**super().to_dict(), "line": self.line}


class ConfigError(ValidationError):
    """A ``TEMPR_*`` setting that cannot be used; ``field`` is the environment variable's name.

    Raised when the settings load (``config.settings.get_settings``), so a typo fails at start-up
    with one line naming the variable, not later as a request's error."""


class AuthError(TemprError):
    """No API key, or one that is malformed, unknown or revoked."""

    def to_dict(self) -> dict[str, object]:
        return {"error": type(self).__name__, "message": str(self), "field": "authorization"}


class Forbidden(AuthError):
    """A valid API key used outside its banks or roles."""


class PayloadTooLarge(TemprError):
    """A request body over the configured limit."""


class NotFound(TemprError):
    """An unknown bank, job or memory."""


class ServiceError(TemprError):
    """PostgreSQL or Redis could not be started, stopped or reached."""


class PermanentDatabaseError(TemprError):
    """The database refused a statement for good (``permanent_database_error``): a task that would
    retry a database error raises this instead, so it fails once, with the database's reason."""


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
_OUTAGE_TYPES = {
    "sqlalchemy.exc.OperationalError": "the database is unavailable",
    "sqlalchemy.exc.InterfaceError": "the database is unavailable",
    "sqlalchemy.exc.DisconnectionError": "the database is unavailable",
    "psycopg.OperationalError": "the database is unavailable",
    "psycopg.errors.OperationalError": "the database is unavailable",
    "redis.exceptions.ConnectionError": "Redis is unavailable",
    "redis.exceptions.TimeoutError": "Redis is unavailable",
    "redis.exceptions.BusyLoadingError": "Redis is unavailable",
    "kombu.exceptions.OperationalError": "the broker is unavailable",
    "amqp.exceptions.ConnectionError": "the broker is unavailable",
}
_ADDRESS = re.compile(r"(\[[0-9a-fA-F:]+\]|\b\d{1,3}(?:\.\d{1,3}){3}\b|\blocalhost\b)(:\d+)?|\bport \d+|\bhost=\S+")


PERMANENT_SQLSTATE_CLASSES = ("54",)
"""SQLSTATE classes that psycopg raises as ``OperationalError`` although the statement, not the
service, is at fault: 54, program limit exceeded (a value too large for an index entry, a statement
too complex). Retrying cannot help, and "the database is unavailable" would be the wrong reason."""


def permanent_database_error(exc: BaseException) -> bool:
    """Whether ``exc`` (a driver error, or SQLAlchemy's wrapper of one) is one of those."""
    orig = getattr(exc, "orig", None) or exc
    state = getattr(orig, "sqlstate", None)
    return isinstance(state, str) and state[:2] in PERMANENT_SQLSTATE_CLASSES


def outage_message(exc: BaseException) -> str | None:
    """What a service outage behind ``exc`` is called in public, or None if it is not one.

    Checked through the exception's class hierarchy by qualified name, so this module imports
    none of the drivers. Celery's "Retry limit exceeded ... result store" RuntimeError counts too;
    a ``permanent_database_error`` does not."""
    if permanent_database_error(exc):
        return None
    for cls in type(exc).__mro__:
        found = _OUTAGE_TYPES.get(f"{cls.__module__}.{cls.__qualname__}")
        if found:
            return found
    if isinstance(exc, RuntimeError) and "Retry limit exceeded" in str(exc):
        return "the result store (Redis) is unavailable"
    if isinstance(exc, ConnectionError):  # not TimeoutError: a socket timeout is also how waiting ends
        return "a service is unavailable"
    return None


def public_text(exc: BaseException) -> str:
    """The message of ``exc`` safe to show a caller: outages named generically, no host or port.

    A SQLAlchemy statement error (it has ``statement`` and ``orig``) is told by its driver error's
    first line: its own text carries the whole SQL statement, its parameters and, for a constraint,
    the failing row (a 384-number vector among them), which an import's failure message printed."""
    outage = outage_message(exc)
    if outage:
        return outage
    orig = getattr(exc, "orig", None)
    if hasattr(exc, "statement") and isinstance(orig, BaseException):
        first = str(orig).strip().splitlines()[0] if str(orig).strip() else ""
        message = f"{type(orig).__name__}: {first}" if first else type(orig).__name__
    else:
        message = str(exc)
    return _ADDRESS.sub("<address>", message) or type(exc).__name__


def public_message(exc: BaseException) -> str:
    """``Type: message`` with the message from ``public_text``."""
    return f"{type(exc).__name__}: {public_text(exc)}"


class ServiceUnavailable(ServiceError):
    """A service (database, Redis, broker) is down right now: try again shortly (HTTP 503)."""
