"""`tempr demo` (placeholder until its issue lands: says so and exits non-zero)."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="not available yet")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    print("tempr demo: not implemented yet")
    return 1
