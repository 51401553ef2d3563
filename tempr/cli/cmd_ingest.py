"""`tempr ingest --bank B FILE.jsonl`: validate the whole file, then write it in one transaction."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tqdm import tqdm

from config.errors import IngestValidationError, ValidationError
from tempr.ingest.facts import parse_jsonl
from tempr.ingest.pipeline import IngestDeps, ingest_facts


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

    facts = list(parse_jsonl(_read_lines(args.file)))
    res = get_resources()
    deps = IngestDeps(res.engine, res.embedder, res.extractor, res.settings)
    with tqdm(total=len(facts), unit="fact", desc=f"embed {args.bank}", disable=args.json, file=sys.stderr) as bar:

        def progress(stage: str, n: int) -> None:
            """Facts embedded so far; then one write of the whole batch (facts already present skip both)."""
            if stage == "embed":
                bar.update(n)
            else:
                bar.set_description(f"wrote {args.bank}")
                bar.update(bar.total - bar.n)

        report = ingest_facts(args.bank, facts, deps, progress=progress)
        bar.update(bar.total - bar.n)
    if args.json:
        print(json.dumps(report.to_dict()))
    else:
        print(
            f"bank {report.bank_id}: {report.received} facts read, {report.inserted} inserted, "
            f"{report.skipped} already present; {report.entity_links} entity links, "
            f"links {report.links}; {report.elapsed_s:.1f}s ({report.facts_per_s:.0f} facts/s)"
        )
    return 0
