"""API keys, tenants and what a key may do: the rules (SQL lives in ``tempr.store.keys_repo``).

A key is ``tk_<id>_<secret>``: ``id`` (16 hex) is public and names the key in `tempr keys list`;
only ``sha256(secret)`` is stored, so a database dump does not hand out working keys (the secret
is 256 random bits, so a fast hash is enough: there is nothing to brute-force). A key belongs to a
*tenant*, is scoped to bank patterns (``tempr.bank_ids``: ``acme``, ``acme-*``, ``*``) and carries
roles:

    recall   POST .../memories/recall[/async], GET /v1/jobs/{id} (the tenant's own jobs only)
    ingest   POST .../facts
    admin    everything above, DELETE a bank, and managing keys

A tenant's jobs are readable only with that tenant's keys; its webhooks are signed with its own
secret, generated when its first key is created. ``TEMPR_AUTH=off`` turns all of this off (every
caller is :data:`ANONYMOUS`); every process that starts with it off says so in its log.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import re
import secrets
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from config.errors import AuthError, Forbidden, ValidationError
from config.settings import Settings
from tempr.bank_ids import check_bank_pattern, in_scope

if TYPE_CHECKING:
    from sqlalchemy import Engine

log = logging.getLogger(__name__)

ROLES = ("recall", "ingest", "admin")
TENANT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_KEY = re.compile(r"tk_([0-9a-f]{16})_([A-Za-z0-9_-]{20,128})")
OFF_WARNING = (
    "TEMPR_AUTH=off: authentication is disabled; every caller can read, write and delete every bank "
    "and read every job. Never expose this process beyond a trusted machine."
)


@dataclass(frozen=True)
class Principal:
    """Who is calling. ``tenant`` None: authentication is off (everything allowed)."""

    tenant: str | None
    key_id: str | None = None
    banks: tuple[str, ...] = ("*",)
    roles: frozenset[str] = field(default_factory=lambda: frozenset(ROLES))

    def can(self, role: str, bank_id: str | None = None) -> bool:
        if role not in self.roles and "admin" not in self.roles:
            return False
        return bank_id is None or in_scope(self.banks, bank_id)

    def require(self, role: str, bank_id: str | None = None) -> Principal:
        if role not in self.roles and "admin" not in self.roles:
            raise Forbidden(f"this API key lacks the {role!r} role")
        if bank_id is not None and not in_scope(self.banks, bank_id):
            raise Forbidden(f"this API key is not scoped to bank {bank_id!r}")
        return self


ANONYMOUS = Principal(tenant=None)


@dataclass(frozen=True)
class NewKey:
    """What `tempr keys create` prints once: the key itself is not recoverable afterwards."""

    key: str
    id: str
    tenant: str
    banks: list[str]
    roles: list[str]
    webhook_secret: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def check_tenant_name(name: str) -> str:
    if not TENANT.fullmatch(name or ""):
        raise ValidationError("tenant must be 1-64 letters, digits, '_', '.' or '-'", field="tenant")
    return name


def check_roles(roles: Iterable[str]) -> list[str]:
    out = sorted({r.strip() for r in roles if r.strip()})
    bad = [r for r in out if r not in ROLES]
    if bad or not out:
        raise ValidationError(f"roles must be some of {', '.join(ROLES)} (got {bad or 'none'})", field="roles")
    return out


def _keys_repo() -> Any:
    """The SQL (imported on first use: reading the local key, as the CLI's fleet path does, needs
    no SQLAlchemy)."""
    from tempr.store import keys_repo

    return keys_repo


def create_key(engine: Engine, tenant: str, banks: Iterable[str], roles: Iterable[str], note: str = "") -> NewKey:
    """Store a new key (hashed) for ``tenant``, creating the tenant and its webhook secret if new."""
    tenant = check_tenant_name(tenant)
    patterns = sorted({check_bank_pattern(b.strip()) for b in banks if b.strip()})
    if not patterns:
        raise ValidationError("a key needs at least one bank pattern", field="banks")
    role_list = check_roles(roles)
    key_id, secret = secrets.token_hex(8), secrets.token_urlsafe(32)
    with engine.begin() as conn:
        webhook_secret = _keys_repo().ensure_tenant(conn, tenant, secrets.token_urlsafe(32))
        _keys_repo().insert_key(conn, key_id, tenant, hash_secret(secret), patterns, role_list, note)
    return NewKey(f"tk_{key_id}_{secret}", key_id, tenant, patterns, role_list, webhook_secret)


def authenticate(engine: Engine, raw_key: str | None) -> Principal:
    """The principal of a presented key; AuthError when missing, malformed, unknown or revoked."""
    if not raw_key:
        raise AuthError("an API key is required (Authorization: Bearer <key>, or X-API-Key)")
    match = _KEY.fullmatch(raw_key.strip())
    if match is None:
        raise AuthError("malformed API key")
    key_id, secret = match.groups()
    with engine.connect() as conn:
        row = _keys_repo().find_key(conn, key_id)
    if row is None or not hmac.compare_digest(row.key_hash, hash_secret(secret)):
        raise AuthError("unknown API key")
    if row.revoked_at is not None:
        raise AuthError("this API key was revoked")
    return Principal(row.tenant, row.id, row.banks, frozenset(row.roles))


class KeyCache:
    """The principals of keys this process checked in the last ``ttl_s`` seconds.

    A gateway checks a key on every request. The check is a PostgreSQL round trip plus a pool
    ping, and it runs on a thread hop: on a cache hit that was about a quarter of the gateway's
    time. A client usually sends the same key many times a second, so a verified key is trusted
    for ``ttl_s`` (``TEMPR_AUTH_CACHE_S``). Only successes are kept: a new key works at once, an
    unknown one is checked every time. A revoked key stops working within ``ttl_s`` on every gateway
    (at once on the one that revoked it: ``clear``). Entries are keyed by the key's hash.
    """

    def __init__(self, ttl_s: float, max_entries: int = 4096) -> None:
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self._entries: dict[str, tuple[float, Principal]] = {}

    def get(self, raw_key: str | None) -> Principal | None:
        if self.ttl_s <= 0 or not raw_key:
            return None
        entry = self._entries.get(hash_secret(raw_key))
        if entry is None or entry[0] < time.monotonic():
            return None
        return entry[1]

    def put(self, raw_key: str, principal: Principal) -> None:
        if self.ttl_s <= 0:
            return
        if len(self._entries) >= self.max_entries:  # many keys at once: start over rather than grow
            self._entries.clear()
        self._entries[hash_secret(raw_key)] = (time.monotonic() + self.ttl_s, principal)

    def clear(self) -> None:
        self._entries.clear()


def check_tenant(engine: Engine, tenant: str, role: str, bank_id: str) -> Principal:
    """A tenant named by a trusted enqueuer (the gateway, an app on the broker): it must hold a live
    key with ``role`` over ``bank_id``. Raises Forbidden otherwise."""
    with engine.connect() as conn:
        keys = _keys_repo().live_keys_of(conn, tenant)
    for row in keys:
        principal = Principal(row.tenant, row.id, row.banks, frozenset(row.roles))
        if principal.can(role, bank_id):
            return principal
    raise Forbidden(f"tenant {tenant!r} has no live key with the {role!r} role over bank {bank_id!r}")


def task_principal(
    engine: Engine, settings: Settings, *, api_key: str | None, tenant: str | None, role: str, bank_id: str
) -> Principal:
    """Who a Celery task runs for: an ``api_key`` (authenticated here) or a ``tenant`` (checked)."""
    if settings.auth == "off":
        return ANONYMOUS
    if api_key:
        return authenticate(engine, api_key).require(role, bank_id)
    if tenant:
        return check_tenant(engine, tenant, role, bank_id)
    raise AuthError("authentication is on: pass api_key (or tenant) in the task's kwargs")


_ENGINES: dict[str, Engine] = {}


def default_engine(settings: Settings) -> Engine:
    """A small engine on this process's database, for clients that have no resources of their own."""
    from tempr.endpoints import resolve_endpoints
    from tempr.store.engine import make_engine

    url = resolve_endpoints(settings).database_url
    if not url:
        raise AuthError("no database to check API keys against: set TEMPR_DATABASE_URL or run `tempr services up`")
    if url not in _ENGINES:
        _ENGINES[url] = make_engine(url, pool_size=2)
    return _ENGINES[url]


def revoke(engine: Engine, key_id: str) -> bool:
    with engine.begin() as conn:
        return _keys_repo().revoke_key(conn, key_id)


def list_keys(engine: Engine, tenant: str | None = None) -> list[dict[str, Any]]:
    with engine.connect() as conn:
        return [row.to_dict() for row in _keys_repo().list_keys(conn, tenant)]


def webhook_secret_for(engine: Engine, settings: Settings, tenant: str | None) -> str | None:
    """The secret to sign a job's webhook with: its tenant's, else TEMPR_WEBHOOK_SECRET (may be None)."""
    if tenant:
        with engine.connect() as conn:
            return _keys_repo().tenant_secret(conn, tenant)
    return settings.webhook_secret or None


def local_key(settings: Settings) -> str | None:
    """The key this machine's CLI uses: TEMPR_API_KEY, else <state_dir>/api_key (see `make demo`)."""
    if settings.api_key:
        return settings.api_key
    try:
        return settings.api_key_file.read_text().strip() or None
    except OSError:
        return None


def require_local_key(settings: Settings) -> str | None:
    """The CLI's key for calls through the workers; None when auth is off; AuthError when missing."""
    if settings.auth == "off":
        return None
    key = local_key(settings)
    if not key:
        raise AuthError(f"no API key: run `tempr keys local` (writes {settings.api_key_file}) or set TEMPR_API_KEY")
    return key


def ensure_local_key(settings: Settings, engine: Engine) -> tuple[str, bool]:
    """Reuse the saved local key while it still works, else make and save a new admin key over
    every bank. Returns (key id or file, whether it is new): `tempr keys local`, and what the
    benchmarks do before they send work through the workers."""
    saved = local_key(settings)
    if saved:
        try:
            authenticate(engine, saved).require("admin")
            return str(settings.api_key_file), False
        except AuthError:
            pass
    new = create_key(engine, "local", ["*"], ["admin"], "made by `tempr keys local`")
    save_local_key(settings, new.key)
    return new.id, True


def save_local_key(settings: Settings, key: str) -> None:
    """Write the key readable by its owner only (0600), created with that mode (never world-readable)."""
    path = settings.api_key_file
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(key + "\n")
    os.chmod(path, 0o600)


def warn_if_off(settings: Settings, who: str) -> bool:
    if settings.auth != "off":
        return False
    log.warning("%s: %s", who, OFF_WARNING)
    print(f"WARNING ({who}): {OFF_WARNING}", file=sys.stderr)
    return True
