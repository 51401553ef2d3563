"""`tempr ingest --bank B FILE.jsonl [--via-workers]`: validate the whole file, then make it visible at once.

A file of at most ``TEMPR_INGEST_CHUNK_FACTS`` facts is written in one transaction by this
process. A longer one is streamed: validated in one pass, staged chunk by chunk, published in
one transaction (bounded memory). ``--via-workers`` hands the chunks to the ingest workers:
this process validates and enqueues, then reports progress; it loads no model.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from tqdm import tqdm

from config.errors import IngestValidationError, TemprError, ValidationError
from tempr.ingest.facts import parse_jsonl


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ingest",
        help="ingest pre-extracted facts from a JSON-Lines file",
        description="Validate every line first (a bad line stops the file, naming the line and field), then "
        "embed, extract entities, link and write all facts in one transaction. Idempotent by fact id.",
    )
    p.add_argument("--bank", required=True, help="bank id (created on first use)")
    p.add_argument("file", type=Path, help="JSONL file, one fact per line ('-' for stdin)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument(
        "--via-workers",
        action="store_true",
        help="split the file into chunks processed in parallel by the ingest workers (still all-or-nothing)",
    )
    p.add_argument("--chunk-facts", type=int, default=None, help="facts per chunk (default TEMPR_INGEST_CHUNK_FACTS)")
    p.set_defaults(func=run)


def _read_lines(path: Path) -> list[str]:
    if str(path) == "-":
        return sys.stdin.read().splitlines()
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise ValidationError(f"no such file: {path}", field="file") from None
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise IngestValidationError("not valid UTF-8", line=line) from None


def run(args: argparse.Namespace) -> int:
    from workers.resources import get_resources

    res = get_resources()
    chunk = args.chunk_facts or res.settings.ingest_chunk_facts
    if args.via_workers:
        if str(args.file) == "-":
            raise ValidationError("--via-workers needs a file, not stdin", field="file")
        report = _via_workers(args, res, chunk)
    elif str(args.file) != "-" and _longer_than(args.file, chunk):
        report = _streamed(args, res, chunk)
    else:
        report = _one_transaction(args, res)
    if args.json:
        print(json.dumps(report))
    else:
        print(
            f"bank {report['bank_id']}: {report['received']} facts read, {report['inserted']} inserted, "
            f"{report['skipped']} already present; {report['entity_links']} entity links, "
            f"links {report['links']}; {report['elapsed_s']:.1f}s ({report['facts_per_s']:.0f} facts/s)"
        )
    return 0


def _longer_than(path: Path, chunk: int) -> bool:
    try:
        with path.open("rb") as fh:
            return sum(1 for raw in fh if raw.strip()) > chunk
    except FileNotFoundError:
        raise ValidationError(f"no such file: {path}", field="file") from None


def _deps(res: Any) -> Any:
    from tempr.ingest.pipeline import IngestDeps

    return IngestDeps(res.engine, res.embedder, res.extractor, res.settings)


def _one_transaction(args: argparse.Namespace, res: Any) -> dict[str, Any]:
    from tempr.ingest.pipeline import ingest_facts

    facts = list(parse_jsonl(_read_lines(args.file)))
    with _bar(args, len(facts), "fact") as bar:

        def progress(stage: str, n: int) -> None:
            """Facts embedded so far; then one write of the whole batch (facts already present skip both)."""
            if stage == "embed":
                bar.update(n)
            else:
                bar.set_description(f"wrote {args.bank}")
                bar.update(bar.total - bar.n)

        report = ingest_facts(args.bank, facts, _deps(res), progress=progress)
        bar.update(bar.total - bar.n)
    return report.to_dict()


def _streamed(args: argparse.Namespace, res: Any, chunk: int) -> dict[str, Any]:
    from tempr.ingest.imports import ingest_file

    with _bar(args, None, "fact") as bar:

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        return ingest_file(args.file, args.bank, _deps(res), chunk_facts=chunk, progress=progress)


def _via_workers(args: argparse.Namespace, res: Any, chunk: int) -> dict[str, Any]:
    from tempr.ingest import fleet
    from tempr.ingest.imports import with_elapsed
    from workers.app import app

    started = time.perf_counter()
    import_id = fleet.submit_file(args.file, args.bank, res.engine, app, chunk_facts=chunk)
    with _bar(args, None, "fact") as bar:

        def progress(status: dict[str, Any]) -> None:
            p = status["progress"]
            bar.total = p["facts_total"]
            bar.set_postfix_str(f"{status['stage']}, eta {p['eta_s'] if p['eta_s'] is not None else '?'} s")
            bar.update(p["facts_done"] - bar.n)

        status = fleet.wait(import_id, res.engine, on_progress=progress)
    if status["status"] != "succeeded":
        raise TemprError(f"import {import_id} failed: {(status['error'] or {}).get('message')}")
    return with_elapsed(status["result"], time.perf_counter() - started)


def _bar(args: argparse.Namespace, total: int | None, unit: str) -> tqdm:
    return tqdm(total=total, unit=unit, desc=f"ingest {args.bank}", disable=args.json, file=sys.stderr)
