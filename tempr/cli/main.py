"""`tempr`: the single command-line entry point.

Each sub-command lives in its own module and registers itself through
``add_parser(subparsers)``; errors tempr raises on purpose become a one-line
message and a non-zero exit, never a traceback.

Start-up is kept cheap: ``tempr recall`` on a warm fleet should take well under a second, and
importing every sub-command would pull in the services' drivers (SQLAlchemy, psycopg, Redis)
for nothing. So when the first argument names a sub-command, only its module is imported;
``tempr`` alone or ``tempr --help`` imports them all to list them.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings

from config.errors import TemprError, ValidationError

_MODULES = (
    "cmd_services",
    "cmd_keys",
    "cmd_ingest",
    "cmd_recall",
    "cmd_worker",
    "cmd_api",
    "cmd_flower",
    "cmd_demo",
    "cmd_bench",
    "cmd_ranker",
)
"""Every sub-command module, in the order ``tempr --help`` lists them."""
_COMMANDS = {
    "services": "cmd_services",
    "db": "cmd_services",
    "keys": "cmd_keys",
    "ingest": "cmd_ingest",
    "recall": "cmd_recall",
    "worker": "cmd_worker",
    "api": "cmd_api",
    "flower": "cmd_flower",
    "demo": "cmd_demo",
    "bench": "cmd_bench",
    "ranker": "cmd_ranker",
}
"""Sub-command name -> the module that registers it (a unit test keeps this in step)."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with every sub-command, or with ``command``'s module only (when it names one)."""
    parser = argparse.ArgumentParser(prog="tempr", description="TEMPR recall for AI-agent memory")
    sub = parser.add_subparsers(dest="command", required=True)
    modules = (_COMMANDS[command],) if command in _COMMANDS else _MODULES
    for name in modules:
        importlib.import_module(f"tempr.cli.{name}").add_parser(sub)
    return parser


def _database_down(exc: Exception) -> bool:
    """A SQLAlchemy OperationalError (checked without importing SQLAlchemy when nothing used it)."""
    errors = sys.modules.get("sqlalchemy.exc")
    return errors is not None and isinstance(exc, errors.OperationalError)


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    warnings.filterwarnings("ignore", category=UserWarning, module="platformdirs")
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv[0] if argv else None).parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ValidationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except TemprError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # `tempr recall ... | head`: the reader left; no traceback for that
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so exit's flush does not fail again
        return 141
    except Exception as exc:
        if not _database_down(exc):
            raise
        print(f"error: database unavailable: {getattr(exc, 'orig', exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def cli() -> int:
    """The ``tempr`` console script: ``main`` after trimming a fleet client's start-up
    (``tempr.cli.startup``; kept out of ``main`` so tests that call it leave their process as is)."""
    from tempr.cli.startup import trim_imports

    argv = sys.argv[1:]
    trim_imports(argv[0] if argv else None)
    return main(argv)


if __name__ == "__main__":
    sys.exit(cli())
