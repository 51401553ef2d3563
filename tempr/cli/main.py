"""`tempr`: the single command-line entry point.

Each sub-command lives in its own module and registers itself through
``add_parser(subparsers)``; errors tempr raises on purpose become a one-line
message and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

from sqlalchemy.exc import OperationalError

from config.errors import TemprError, ValidationError


def build_parser() -> argparse.ArgumentParser:
    from tempr.cli import (
        cmd_api,
        cmd_bench,
        cmd_demo,
        cmd_flower,
        cmd_ingest,
        cmd_keys,
        cmd_ranker,
        cmd_recall,
        cmd_services,
        cmd_worker,
    )

    parser = argparse.ArgumentParser(prog="tempr", description="TEMPR recall for AI-agent memory")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in (
        cmd_services,
        cmd_keys,
        cmd_ingest,
        cmd_recall,
        cmd_worker,
        cmd_api,
        cmd_flower,
        cmd_demo,
        cmd_bench,
        cmd_ranker,
    ):
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    warnings.filterwarnings("ignore", category=UserWarning, module="platformdirs")
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ValidationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except TemprError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except OperationalError as exc:
        print(f"error: database unavailable: {exc.orig}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
