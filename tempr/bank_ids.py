"""The one rule for bank ids, and the bank patterns API keys are scoped to.

A bank id is 1-128 characters: a letter or digit, then letters, digits, ``_ . : -``. The same
rule is the ``banks.id`` CHECK constraint of the first migration; every entry point (HTTP path,
CLI ``--bank``, Celery payloads, the recall planner, ingest) calls :func:`check_bank_id`, so a
bank id refused in one place is refused everywhere, with the same 422 naming ``bank_id``.

``fullmatch`` (not ``match`` with ``$``): ``$`` also matches before a trailing newline, which
would let ``"bank\\n"`` past this check and into the database's stricter CHECK (a 500).

A *bank pattern* (an API key's scope) is a bank id (that bank only), a prefix ending in ``*``
(``acme-*``: every bank whose id starts with ``acme-``), or ``*`` alone (every bank).
"""

from __future__ import annotations

import re

from config.errors import ValidationError

BANK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}")
_PREFIX = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,126}")
RULE = "bank id must be 1-128 characters of letters, digits, '_', '.', ':' or '-', starting with a letter or digit"


def is_bank_id(value: object) -> bool:
    return isinstance(value, str) and BANK_ID.fullmatch(value) is not None


def check_bank_id(bank_id: object, field: str = "bank_id") -> str:
    """Return ``bank_id`` if valid, else raise ValidationError naming ``field``."""
    if not is_bank_id(bank_id):
        raise ValidationError(RULE, field=field)
    return str(bank_id)


def check_bank_pattern(pattern: str) -> str:
    """A bank id, ``<prefix>*`` or ``*``; raises ValidationError(field="banks")."""
    if pattern == "*" or is_bank_id(pattern):
        return pattern
    if pattern.endswith("*") and _PREFIX.fullmatch(pattern[:-1]):
        return pattern
    raise ValidationError(f"bank pattern {pattern!r} must be a bank id, '<prefix>*' or '*'", field="banks")


def bank_matches(pattern: str, bank_id: str) -> bool:
    if pattern.endswith("*"):
        return bank_id.startswith(pattern[:-1])
    return bank_id == pattern


def in_scope(patterns: list[str] | tuple[str, ...], bank_id: str) -> bool:
    return any(bank_matches(p, bank_id) for p in patterns)


def pattern_covered(pattern: str, scope: list[str] | tuple[str, ...]) -> bool:
    """True when every bank ``pattern`` matches is matched by some pattern of ``scope``."""
    inner = pattern[:-1] if pattern.endswith("*") else None
    for outer in scope:
        if outer.endswith("*"):
            if (inner if inner is not None else pattern).startswith(outer[:-1]):
                return True
        elif inner is None and pattern == outer:
            return True
    return False
