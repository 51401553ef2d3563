"""The one rule for bank ids, used by ingest, recall, the client, the HTTP routes and the tasks."""

from __future__ import annotations

import re

from config.errors import ValidationError

BANK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")


def check_bank_id(bank_id: str) -> str:
    """Return ``bank_id`` if valid; else raise a ValidationError naming the ``bank_id`` field."""
    if not BANK_ID.match(bank_id or ""):
        raise ValidationError(
            "bank id must be 1-128 characters of letters, digits, '_', '.', ':' or '-'", field="bank_id"
        )
    return bank_id
