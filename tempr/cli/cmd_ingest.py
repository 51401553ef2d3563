"""`tempr ingest --bank B FILE.jsonl`: validate the whole file, then make it visible at once.

By default the file goes to the worker fleet (`tempr services up`) when a worker consuming the
``ingest`` queue answers a quick probe (``tempr.cli.fleet_probe``: milliseconds on a warm fleet):
this process validates the file, splits it into chunks that the ingest workers embed and stage in
parallel, and waits for the publish; it loads no model, so a small file takes about as long as
the workers need to embed it. An ingest worker that `tempr services up` started here moments ago
and that is still loading its models is waited for. When no ingest worker answers, the file is
ingested in this process (loading the models takes seconds) and one stderr line says so.
``--via-workers`` insists on the fleet (an error naming `tempr services up` without one);
``--in-process`` skips it. Either way a bad line anywhere stops the file before anything is
visible, and the file is published in one transaction: all of it or none of it.

In this process, a file of at most ``TEMPR_INGEST_CHUNK_FACTS`` facts is written in one
transaction; a longer one is streamed: validated in one pass, staged chunk by chunk, published in
one transaction (bounded memory).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from config.errors import IngestValidationError, ServiceUnavailable, TemprError, ValidationError

if TYPE_CHECKING:
    from tqdm import tqdm

from tempr.cli.fleet_probe import FLEET, IN_PROCESS, where_to_run

INGEST_QUEUE = "ingest"
PROBE_TIMEOUT_S = 0.5
"""How long the fleet check waits when no ingest worker answers (a warm fleet answers in ms)."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ingest",
        help="ingest pre-extracted facts from a JSON-Lines file",
        description="Validate every line first (a bad line stops the file, naming the line and field), then "
        "embed, extract entities, link and write all facts in one transaction. Idempotent by fact id. "
        "Runs on the worker fleet when an ingest worker answers (`tempr services up`), else in this process.",
    )
    p.add_argument("--bank", required=True, help="bank id (created on first use)")
    p.add_argument("file", type=Path, help="JSONL file, one fact per line ('-' for stdin)")
    p.add_argument(
        "--json", action="store_true", help="print the report as JSON (the progress bar shows only on a terminal)"
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--via-workers",
        action="store_true",
        help="only through the ingest workers (the default tries them first): an error if none answers",
    )
    where.add_argument(
        "--in-process",
        action="store_true",
        help="ingest in this process, not on the workers (loads the embedding and entity models: seconds)",
    )
    p.add_argument(
        "--chunk-facts",
        type=int,
        default=None,
        help="facts per chunk (default: on the fleet, the file spread over this machine's cores, at most "
        "TEMPR_INGEST_CHUNK_FACTS; in this process, TEMPR_INGEST_CHUNK_FACTS)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.chunk_facts is not None and args.chunk_facts < 1:
        raise ValidationError("--chunk-facts must be at least 1", field="chunk_facts")
    mode = where_to_run(args)
    report = _via_gateway(args) if mode != IN_PROCESS else None
    if report is None:
        report = _through_celery_or_here(args, mode)
    if args.json:
        print(json.dumps(report))
    else:
        print(
            f"bank {report['bank_id']}: {report['received']} facts read, {report['inserted']} inserted, "
            f"{report['skipped']} already present; {report['entity_links']} entity links, "
            f"links {report['links']}; {report['elapsed_s']:.1f}s ({report['facts_per_s']:.0f} facts/s)"
        )
    return 0


def _via_gateway(args: argparse.Namespace) -> dict[str, Any] | None:
    """The file through the local gateway (``tempr.cli.quick``: no settings, Celery or SQLAlchemy to
    import here), or None when the Celery path must take it (no gateway of this configuration, no
    key, no ingest worker answering, stdin: see ``quick.ingest``)."""
    from tempr.cli import quick

    if str(args.file) == "-" or not args.file.is_file():
        return None  # stdin is spooled, and a missing file is named, by the Celery path
    started = time.perf_counter()
    seen: list[float] = []
    bars: list[tqdm] = []  # made at the first status: a file the gateway refuses shows no bar

    def progress(status: dict[str, Any]) -> None:
        if not bars:
            seen.append(time.perf_counter())
            bars.append(_bar(args, None, "fact"))
        _show(bars[0], status)

    spread = None if args.chunk_facts else os.cpu_count() or 1
    try:
        status = quick.ingest(
            args.bank, args.file, chunk_facts=args.chunk_facts, spread_over=spread, on_progress=progress
        )
    finally:
        for bar in bars:
            bar.close()
    if status is None:
        return None
    return _fleet_report(status, started=started, submitted=seen[0], probe_s=0.0)


def _show(bar: tqdm, status: dict[str, Any]) -> None:
    """An import's status on the progress bar: facts done of total, stage, ETA."""
    p = status["progress"]
    bar.total = p["facts_total"]
    bar.set_postfix_str(f"{status['stage']}, eta {p['eta_s'] if p['eta_s'] is not None else '?'} s")
    bar.update(p["facts_done"] - bar.n)


def _fleet_report(status: dict[str, Any], *, started: float, submitted: float, probe_s: float) -> dict[str, Any]:
    """The published import's report, timed from ``started``, with where the time went (``timeline``)."""
    from tempr.ingest.reports import with_elapsed

    if status["status"] != "succeeded":
        raise TemprError(f"import {status.get('job_id')} failed: {(status.get('error') or {}).get('message')}")
    done = time.perf_counter()
    publish_s = float(status["result"].get("elapsed_s") or 0.0)
    report = with_elapsed(status["result"], done - started)
    report["timeline"] = {
        "probe": round(probe_s, 3),
        "submit": round(submitted - started, 3),
        "staging": round(max(0.0, done - submitted - publish_s), 3),
        "publish": round(publish_s, 3),
        "chunks": status["progress"]["chunks_total"],
    }
    return report


def _through_celery_or_here(args: argparse.Namespace, mode: str) -> dict[str, Any]:
    """Through Celery when an ingest worker answers (or insisted on with ``--via-workers``), else in
    this process, saying so on stderr."""
    from config.settings import get_settings

    settings = get_settings()
    report: dict[str, Any] | None = None
    if mode != IN_PROCESS:
        probe_started = time.perf_counter()
        app, why_not = _fleet(settings)
        if why_not is None:
            report = _via_workers(args, app, settings, probe_s=time.perf_counter() - probe_started)
        elif mode == FLEET:
            raise ServiceUnavailable(f"--via-workers: {why_not}; start the workers with `tempr services up`")
        else:
            print(
                f"tempr ingest: {why_not}, so this file is ingested in this process (slower: it loads the "
                "models); start the workers with `tempr services up`",
                file=sys.stderr,
            )
    if report is None:
        report = _in_process(args, args.chunk_facts or settings.ingest_chunk_facts)
    return report


STARTING_GRACE_S = 30.0
"""How long to wait for an ingest worker that `tempr services up` started here moments ago and that
is still loading its models (a few seconds), rather than loading them again in this process."""
STARTING_WITHIN_S = 120.0
"""A local worker younger than this that does not answer yet is taken to be starting."""


def _fleet(settings: Any) -> tuple[Any, str | None]:
    """An enqueue-only Celery app on this machine's broker, and why the fleet cannot take the file (None: it can)."""
    from config.celery import celery_config, make_celery
    from tempr.cli.fleet_probe import no_consumer_reason
    from tempr.endpoints import resolve_endpoints

    endpoints = resolve_endpoints(settings)
    app = make_celery(lambda: celery_config(settings, endpoints.broker_url, endpoints.result_backend))
    why_not = no_consumer_reason(app, endpoints.broker_url, INGEST_QUEUE, timeout_s=PROBE_TIMEOUT_S)
    if why_not is None or not _local_ingest_worker_starting(settings):
        return app, why_not
    print("tempr ingest: waiting for the ingest workers `tempr services up` just started", file=sys.stderr)
    deadline = time.monotonic() + STARTING_GRACE_S
    while why_not is not None and time.monotonic() < deadline:
        time.sleep(0.5)
        why_not = no_consumer_reason(app, endpoints.broker_url, INGEST_QUEUE, timeout_s=PROBE_TIMEOUT_S)
    return app, why_not


def _local_ingest_worker_starting(settings: Any) -> bool:
    """A worker that `tempr services up` started here moments ago (its pidfile's age), alive, consuming
    ``ingest`` (its command line, read from /proc: elsewhere this is never true and nothing waits)."""
    from tempr.services.workers import DetachedWorkers

    workers = DetachedWorkers(settings.state_dir.resolve() / "workers")
    for name, pid in workers.running().items():
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
            age = time.time() - workers.pidfile(name).stat().st_mtime
        except OSError:
            continue
        queues = argv[argv.index("-Q") + 1].split(",") if "-Q" in argv[:-1] else []
        if "ingest" in queues and age < STARTING_WITHIN_S:
            return True
    return False


def _in_process(args: argparse.Namespace, chunk: int) -> dict[str, Any]:
    from workers.resources import get_resources

    res = get_resources()
    if str(args.file) != "-" and _longer_than(args.file, chunk):
        report = _streamed(args, res, chunk)
    else:
        report = _one_transaction(args, res)
    return _with_own_index(_with_chunk_vectors(report, res), res)


def _with_own_index(report: dict[str, Any], res: Any) -> dict[str, Any]:
    """In this process a bank this write took past the threshold gets its own HNSW index before the
    command returns, as the ``index_bank`` task does on the fleet (``tempr.store.bank_index``)."""
    from tempr.store import bank_index

    with res.engine.connect() as conn:
        if not report.get("bank_id") or not bank_index.wants_index(conn, report["bank_id"]):
            return report
    print(f"tempr ingest: building bank {report['bank_id']}'s own search index", file=sys.stderr)
    seconds = bank_index.build(res.engine, report["bank_id"])
    return {**report, "own_index_s": None if seconds is None else round(seconds, 3)}


def _with_chunk_vectors(report: dict[str, Any], res: Any) -> dict[str, Any]:
    """In this process the chunks' vectors follow the (already visible) facts before the command
    returns, as the ``embed_chunks`` task does on the fleet; the report says how many and how long."""
    from tempr.ingest.backfill import embed_missing_chunks

    if not report.get("chunks") or not res.settings.chunk_vectors:
        return report
    started = time.perf_counter()
    done = embed_missing_chunks(_deps(res), report["bank_id"]).get(report["bank_id"], 0)
    return {**report, "chunks_embedded": done, "chunk_vectors_s": round(time.perf_counter() - started, 3)}


def _read_lines(path: Path) -> list[str]:
    if str(path) == "-":
        return sys.stdin.read().splitlines()  # parse_jsonl drops a byte order mark
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        from tempr.ingest.facts import unreadable  # only on this error: the quick path imports no pydantic

        raise unreadable(path, exc) from None
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise IngestValidationError("not valid UTF-8", line=line) from None


def _longer_than(path: Path, chunk: int) -> bool:
    try:
        with path.open("rb") as fh:
            return sum(1 for raw in fh if raw.strip()) > chunk
    except OSError as exc:
        from tempr.ingest.facts import unreadable  # only on this error: the quick path imports no pydantic

        raise unreadable(path, exc) from None


def _deps(res: Any) -> Any:
    return res.ingest_deps()


def _one_transaction(args: argparse.Namespace, res: Any) -> dict[str, Any]:
    from tempr.ingest.facts import parse_jsonl
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


def _via_workers(args: argparse.Namespace, app: Any, settings: Any, *, probe_s: float) -> dict[str, Any]:
    """Validate and enqueue (nothing is queued for a bad file), then follow the import until published.

    The report's ``timeline`` says where the command's time went (seconds): ``probe`` (is an ingest
    worker there), ``submit`` (validate, register, enqueue), ``staging`` (until the publish began,
    as seen by polling) and ``publish`` (the publishing transaction, timed by the worker)."""
    from tempr.ingest import fleet
    from tempr.providers.embedder.spaces import space_of
    from workers.resources import get_resources

    started = time.perf_counter()
    engine = get_resources().engine
    if args.chunk_facts:  # as asked
        chunk, spread = args.chunk_facts, None
    else:  # a small file in as many chunks as this machine has cores, so every worker process helps
        chunk, spread = settings.ingest_chunk_facts, os.cpu_count() or 1
    with _file_for_workers(args.file) as path:
        space = space_of(settings.embedder)
        import_id = fleet.submit_file(path, args.bank, engine, app, chunk_facts=chunk, space=space, spread_over=spread)
    submitted = time.perf_counter()
    with _bar(args, None, "fact") as bar:
        status = fleet.wait(import_id, engine, on_progress=lambda status: _show(bar, status))
    return _fleet_report(status, started=started, submitted=submitted, probe_s=probe_s)


class _file_for_workers:  # noqa: N801 - used as a context manager, like open()
    """The file itself, or stdin spooled to a temporary file (the fleet path reads its input twice)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tmp: Path | None = None

    def __enter__(self) -> Path:
        if str(self.path) != "-":
            return self.path
        fd, name = tempfile.mkstemp(prefix="tempr-ingest-", suffix=".jsonl")
        self.tmp = Path(name)
        with os.fdopen(fd, "wb") as out:
            while block := sys.stdin.buffer.read(1 << 20):
                out.write(block)
        return self.tmp

    def __exit__(self, *exc: object) -> None:
        if self.tmp is not None:
            self.tmp.unlink(missing_ok=True)


def _bar(args: argparse.Namespace, total: int | None, unit: str) -> tqdm:
    from tqdm import tqdm

    # With --json the report owns stdout; the bar stays on stderr, shown when that is a terminal
    # (``disable=None``), so a long import keeps its progress and a pipeline's log stays clean.
    # The rate is the mean since the start (``smoothing=0``): progress comes a chunk or an embedding
    # call at a time, and tqdm's default, weighted to the last update, showed 5,827 facts/s for a
    # 1,210-fact import that ran at 607.
    return tqdm(
        total=total,
        unit=unit,
        desc=f"ingest {args.bank}",
        disable=None if args.json else False,
        file=sys.stderr,
        smoothing=0,
    )
