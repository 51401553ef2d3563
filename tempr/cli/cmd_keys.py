"""`tempr keys create|list|revoke|local`: API keys, straight in the database (the operator's tool).

    tempr keys create --tenant acme --banks 'acme-*' --roles recall,ingest
    tempr keys list [--tenant acme]
    tempr keys revoke <key id>
    tempr keys local          # make sure <state_dir>/api_key holds a working local admin key (make demo)

`create` prints the key and the tenant's webhook secret once; only a hash of the key is stored.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from config.settings import Settings, get_settings


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("keys", help="create, list and revoke API keys")
    actions = p.add_subparsers(dest="keys_action", required=True, help="create, list, revoke or local")
    create = actions.add_parser("create", help="create a key (printed once)")
    create.add_argument("--tenant", required=True, help="who owns the key's jobs (letters, digits, _ . -)")
    create.add_argument("--banks", required=True, help="comma-separated bank ids, prefixes ending in '*', or '*'")
    create.add_argument("--roles", default="recall", help="comma-separated: recall, ingest, admin (default recall)")
    create.add_argument("--note", default="", help="a free-text label shown by `keys list`")
    create.add_argument("--save", action="store_true", help="also write it to <state_dir>/api_key (mode 0600)")
    create.add_argument("--json", action="store_true", help="print the new key as JSON")
    listing = actions.add_parser("list", help="list keys (never the keys themselves)")
    listing.add_argument("--tenant", help="only this tenant's keys")
    revoke = actions.add_parser("revoke", help="revoke a key by its id (the hex part after tk_)")
    revoke.add_argument("key_id", help="the key's id: the hex part after tk_")
    actions.add_parser("local", help="ensure <state_dir>/api_key holds a live local admin key")
    p.set_defaults(func=run)


def _engine() -> Any:
    from workers.resources import get_resources

    return get_resources().engine


def run(args: argparse.Namespace) -> int:
    from tempr import auth

    settings = get_settings()
    engine = _engine()
    if args.keys_action == "create":
        new = auth.create_key(engine, args.tenant, args.banks.split(","), args.roles.split(","), args.note)
        if args.save:
            auth.save_local_key(settings, new.key)
        if args.json:
            print(json.dumps(new.to_dict(), indent=2))
        else:
            print(f"key             {new.key}")
            print(
                f"id              {new.id}   tenant {new.tenant}   banks {','.join(new.banks)}   roles {','.join(new.roles)}"
            )
            print(f"webhook secret  {new.webhook_secret}   (the tenant's; verifies X-Tempr-Signature)")
            print("Store the key now: only its hash is kept.")
        return 0
    if args.keys_action == "list":
        for row in auth.list_keys(engine, args.tenant):
            state = f"revoked {row['revoked_at'][:19]}" if row["revoked_at"] else "live"
            print(f"{row['id']}  {row['tenant']:<16} {','.join(row['roles']):<20} {','.join(row['banks']):<24} {state}")
        return 0
    if args.keys_action == "revoke":
        if not auth.revoke(engine, args.key_id):
            print(f"error: no live key {args.key_id!r}")
            return 1
        print(f"revoked {args.key_id}")
        return 0
    return _ensure_local(settings, engine)


def _ensure_local(settings: Settings, engine: Any) -> int:
    """Reuse the saved key while it still works; else make a new admin key over every bank."""
    from tempr.auth import ensure_local_key

    key_id, new = ensure_local_key(settings, engine)
    if new:
        print(f"created a local admin key ({key_id}) in {settings.api_key_file} (mode 0600)")
    else:
        print(f"using the local API key in {settings.api_key_file}")
    return 0
