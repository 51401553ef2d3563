"""`tempr bench quality|latency|scale|ingest|all`: the benchmarks, each runnable alone.

Each prints its tables and (full runs) rewrites its section of BENCHMARKS.md and its
PNG plots under bench/plots/. The benchmark code is the repository's ``bench`` package, installed
with tempr (``pip install -e .`` maps it), so this command runs from any working directory.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from config.errors import ValidationError

NAMES = ("quality", "latency", "scale", "ingest", "all")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench",
        help="run the benchmarks (LoCoMo quality, latency, scale, ingest)",
        description="Run a benchmark; full runs rewrite their section of BENCHMARKS.md and their plots.",
    )
    p.add_argument("name", choices=NAMES, help="which benchmark (all: every one, as `make bench` does)")
    p.add_argument(
        "--quick",
        action="store_true",
        help="a small smoke run (1 conversation / 20 questions, small banks); prints, writes nothing",
    )
    p.add_argument(
        "--write",
        dest="write",
        action="store_true",
        default=None,
        help="write BENCHMARKS.md and plots even for a --quick run",
    )
    p.add_argument("--no-write", dest="write", action="store_false", help="print only")
    p.add_argument(
        "--locomo",
        type=Path,
        default=None,
        help="folder of LoCoMo conversations (default: ../shared/bench/locomo-dev from the repo root)",
    )
    p.add_argument("--conversations", help="quality: comma-separated conversation names (e.g. 26,30)")
    p.add_argument("--questions", type=int, help="quality: at most this many questions per conversation")
    p.add_argument("--in-process-only", action="store_true", help="quality: skip the run through the workers")
    p.add_argument("--sizes", help="latency/scale: comma-separated bank sizes (default 10000,100000)")
    p.add_argument(
        "--bulk",
        action="store_true",
        help="latency/scale: build missing synthetic banks in bulk (facts, then the HNSW index and "
        "semantic links; drops and rebuilds the bench database's vector index): hours faster at 1M facts",
    )
    p.add_argument(
        "--facts", type=int, help="ingest: synthetic facts when the LoCoMo dev data is missing (default 5000)"
    )
    p.add_argument(
        "--peer",
        choices=["hindsight"],
        help="latency: instead, tempr beside the Hindsight 1.1 peer over HTTP on the LoCoMo banks, interleaved "
        "(needs ../shared/bench/peer/hindsight_peer.sh install)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        from bench import suite
    except ImportError:
        raise ValidationError(
            "the bench package is not installed: run `make install` in a checkout of the repository", field="bench"
        ) from None

    if args.peer:
        if args.name != "latency":
            raise ValidationError("--peer goes with `tempr bench latency`", field="peer")
        from bench import peer_latency

        cfg = peer_latency.PeerLatencyConfig(write=not args.quick if args.write is None else args.write)
        if args.quick:
            cfg.questions, cfg.hits, cfg.throughput_s = 40, 20, 10.0
        if args.questions:
            cfg.questions = args.questions
        peer_latency.main(cfg)
        return 0
    options = suite.Options(quick=args.quick, write=args.write, via_workers=not args.in_process_only)
    if args.locomo is not None:
        options.locomo = args.locomo
    if not options.locomo.is_dir() and args.name in ("quality", "all"):
        raise ValidationError(f"no LoCoMo folder at {options.locomo} (use --locomo DIR)", field="locomo")
    if args.conversations:
        options.conversations = [c.strip() for c in args.conversations.split(",") if c.strip()]
    options.questions = args.questions
    if args.sizes:
        try:
            options.sizes = tuple(sorted(int(s) for s in args.sizes.split(",") if s.strip()))
        except ValueError:
            raise ValidationError("--sizes takes comma-separated integers", field="sizes") from None
        if len(options.sizes) < 2 and args.name in ("scale", "all"):
            raise ValidationError("scale needs at least two bank sizes", field="sizes")
    options.facts = args.facts
    options.bulk = args.bulk
    suite.run_one(args.name, options)
    return 0
