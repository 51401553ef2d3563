"""`tempr recall --bank B "query"`: one recall, printed as a table or (``--json``) the response object.

By default the recall runs on the worker fleet (``tempr services up``). When `services up` started
its local gateway with this configuration, the command asks that gateway over HTTP with the
standard library alone (``tempr.cli.quick``: no Celery, redis-py or pydantic to import, which was
most of its wall time). Otherwise a quick check that a worker consuming ``fuse`` answers
(``fleet_probe``), then the job is enqueued through Celery and awaited. Either way the command
loads no model. Only when no worker answers does it recall in this process (loading the
embedding model takes seconds), and it says so on stderr. ``--via-workers`` insists on the fleet
(an error without one); ``--in-process`` skips it. Heavy modules (models, the recall pipeline,
SQLAlchemy) are imported only on the in-process path.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from tempr.cli.fleet_probe import FLEET, IN_PROCESS, where_to_run

if TYPE_CHECKING:
    from tempr.recall.models import RecallRequest, RecallResponse

DEFAULT_LIMIT = 10
PROBE_TIMEOUT_S = 1.0
"""How long the fleet check waits when no worker answers (a warm fleet answers in ms)."""
_ARMS = ("semantic", "keyword", "graph", "temporal")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "recall",
        help="recall memories for a query",
        description="Recall the memories of one bank that best answer a query (TEMPR: four strategies, "
        "fusion, rerank, boosts, token packing). An unknown bank is an error (exit 1).",
    )
    p.add_argument("--bank", required=True, help="the bank to search (it must exist: create it with `tempr ingest`)")
    p.add_argument("query", help="the question, in natural language (at most 500 tokens)")
    p.add_argument(
        "--budget",
        choices=["low", "mid", "high"],
        default="mid",
        help="how many candidates each strategy may return and how deep the graph walk goes (default mid)",
    )
    p.add_argument("--max-tokens", type=int, default=4096, help="token budget for the returned memories (default 4096)")
    p.add_argument(
        "--limit",
        type=int,
        default=None,
        help=f"show at most N memories (default {DEFAULT_LIMIT} in the table, all with --json; 0 = all)",
    )
    p.add_argument("--types", help="only these fact types, comma-separated: world,experience,observation")
    p.add_argument("--tags", help="only memories with these tags, comma-separated (see --tags-match)")
    p.add_argument(
        "--tags-match",
        default="any",
        choices=["any", "all", "any_strict", "all_strict", "exact"],
        help="how --tags must match; *_strict also drops untagged memories (default any)",
    )
    p.add_argument("--query-timestamp", help="ISO-8601 'now' for the query: anchors relative dates and recency")
    p.add_argument("--include-chunks", action="store_true", help="also return each memory's source chunk")
    p.add_argument(
        "--trace",
        action="store_true",
        help="explain the answer: per memory its strategy ranks, scores, boosts and packing; then the timings",
    )
    p.add_argument("--json", action="store_true", help="print exactly the response object (JSON)")
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--via-workers",
        action="store_true",
        help="only through the worker fleet (the default tries it first): an error if no worker answers",
    )
    where.add_argument(
        "--in-process",
        action="store_true",
        help="recall in this process, not on the worker fleet (loads the embedding model: seconds)",
    )
    p.set_defaults(func=run)


def request_body(args: argparse.Namespace) -> dict[str, Any]:
    """The request as JSON fields: what the gateway is sent, and what ``build_request`` validates."""

    def split(value: str | None) -> list[str] | None:
        return [v.strip() for v in value.split(",") if v.strip()] if value else None

    body: dict[str, Any] = {
        "query": args.query,
        "budget": args.budget,
        "max_tokens": args.max_tokens,
        "types": split(args.types),
        "tags": split(args.tags),
        "tags_match": args.tags_match,
        "query_timestamp": args.query_timestamp,
        "trace": args.trace,
    }
    if args.include_chunks:
        body["include"] = {"entities": True, "chunks": {}}
    return body


def build_request(args: argparse.Namespace) -> RecallRequest:
    from tempr.recall.models import parse_request

    return parse_request(request_body(args))


def run(args: argparse.Namespace) -> int:
    if args.limit is not None and args.limit < 0:
        from config.errors import ValidationError

        raise ValidationError("must be 0 (all) or more", field="--limit")
    mode = where_to_run(args)
    answer, why_not = (None, None) if mode == IN_PROCESS else quick_answer(args)
    if answer is None:
        answer = slow_answer(args, mode, why_not)
    if args.json:
        if args.limit:
            answer["results"] = answer["results"][: args.limit]
        print(json.dumps(answer, indent=2, ensure_ascii=False))
    else:
        print_table(answer, limit=DEFAULT_LIMIT if args.limit is None else args.limit)
    return 0


def quick_answer(args: argparse.Namespace) -> tuple[dict[str, Any] | None, str | None]:
    """Through the local gateway (``tempr.cli.quick``): (the answer, None); (None, why no worker
    answers) when the gateway says none does; (None, None) when there is no usable gateway."""
    from tempr.cli import quick

    try:
        return quick.recall(args.bank, request_body(args)), None
    except quick.NotReady as exc:
        return None, str(exc)


def slow_answer(args: argparse.Namespace, mode: str, why_not: str | None) -> dict[str, Any]:
    """Through Celery (the fleet probe first, unless the gateway already said no worker answers),
    else in this process: the response object as JSON."""
    request = build_request(args)
    if mode != IN_PROCESS and why_not is None:
        why_not = fleet_unavailable()
    if mode == IN_PROCESS:
        response = recall_in_process(args.bank, request)
    elif why_not is None:
        response = recall_on_fleet(args.bank, request)
    elif mode == FLEET:
        from config.errors import ServiceUnavailable

        raise ServiceUnavailable(f"--via-workers: {why_not}; start the workers with `tempr services up`")
    else:
        print(
            f"tempr recall: {why_not}, so this recall runs in this process (slower: it loads the model); "
            "start the workers with `tempr services up`",
            file=sys.stderr,
        )
        response = recall_in_process(args.bank, request)
    return response.model_dump(mode="json")


def fleet_unavailable() -> str | None:
    """None when a worker consuming ``fuse`` (where a recall starts) answers; else why not
    (``tempr.cli.fleet_probe``)."""
    from config.settings import get_settings
    from tempr.cli.fleet_probe import no_consumer_reason
    from tempr.client import sender_app
    from tempr.endpoints import resolve_endpoints

    settings = get_settings()
    endpoints = resolve_endpoints(settings, database=False)
    return no_consumer_reason(sender_app(settings, endpoints), endpoints.broker_url, "fuse", timeout_s=PROBE_TIMEOUT_S)


def recall_on_fleet(bank_id: str, request: RecallRequest) -> RecallResponse:
    """Enqueue on the fleet and wait (bounded by the job's deadline). This process opens no database
    connection: the start task checks the key and the bank, and ``get`` raises its ``AuthError`` or
    ``NotFound`` here."""
    from tempr.client import recall_async

    job = recall_async(bank_id, request, check_key=False)  # the start task checks this machine's key
    return job.get(timeout=request.timeout_s or 60)


def recall_in_process(bank_id: str, request: RecallRequest) -> RecallResponse:
    from tempr.recall.pipeline import recall
    from workers.resources import get_resources, recall_context

    return recall(bank_id, request, recall_context(reranker=get_resources().reranker))


def print_table(response: dict[str, Any], *, width: int = 88, limit: int = 0) -> None:
    """The answer as a table; ``response`` is the response object as JSON (from the gateway, or a
    ``RecallResponse.model_dump(mode="json")``)."""
    results = response.get("results") or []
    shown = results[:limit] if limit else results
    degraded, cache = response.get("degraded") or [], response.get("cache")
    print(
        f"bank {response['bank_id']} · budget {response['budget']} · reranker {response['reranker']}"
        + (f" · degraded: {', '.join(degraded)}" if degraded else "")
        + (f" · cache {cache}" if cache else "")
        + (f" · showing {len(shown)} of {len(results)}" if len(shown) < len(results) else "")
    )
    if not results:
        print("  (no memories matched)")
    trace = response.get("trace")
    for rank, r in enumerate(shown, start=1):
        when = (r.get("occurred_start") or r.get("mentioned_at") or "")[:10]
        text = r["text"] if len(r["text"]) <= width else r["text"][: width - 1] + "…"
        arms = "".join(k[0].upper() for k in _ARMS if r["scores"].get(k) is not None)
        print(f"{rank:>3}. {r['scores']['final']:.3f} [{arms:<4}] {when:<10} {text}")
        if trace:
            _print_features(trace.get("rerank") or {}, r["id"])
    if trace:
        print_trace(response, shown)


def _fmt(value: Any, spec: str = ".3f") -> str:
    return format(value, spec) if isinstance(value, int | float) else "-"


def print_trace(response: dict[str, Any], shown: list[dict[str, Any]]) -> None:
    """Per memory: strategy ranks, RRF, rerank, boosts, packing; then the stage waterfall."""
    trace = response.get("trace") or {}
    fusion = {f["id"]: f for f in trace.get("fusion", [])}
    rerank = (trace.get("rerank") or {}).get("scores") or {}
    boosts = {b["id"]: b for b in trace.get("boosts", [])}  # every *_boost key, whatever the trace adds
    packing = {p["id"]: p for p in trace.get("packing", [])}
    rows = []
    for i, r in enumerate(shown, start=1):
        b = boosts.get(r["id"]) or {}
        mult = " ".join(
            f"{k.removesuffix('_boost')[:3]} {_fmt(v, '.2f')}" for k, v in b.items() if k.endswith("_boost")
        )
        rows.append((i, r, mult))
    wide = max([len("boosts (×)"), *(len(m) for _, _, m in rows)])
    print("\ntrace: why each memory is here (ranks per strategy: S semantic, K keyword, G graph, T temporal)")
    head = f"{'#':>3}  {'S':>3} {'K':>3} {'G':>3} {'T':>3}  {'rrf':>6}  {'rerank':>6}  {'boosts (×)':<{wide}}"
    print(f"{head}  {'final':>6}  packing")
    for i, r, mult in rows:
        ranks = (fusion.get(r["id"]) or {}).get("ranks") or {}
        p = packing.get(r["id"]) or {}
        pack = f"{p.get('outcome', '-')} ({p.get('tokens', '?')} tok of {p.get('remaining_before', '?')})"
        cells = " ".join(f"{ranks.get(a, '-'):>3}" for a in _ARMS)
        rrf = _fmt((fusion.get(r["id"]) or {}).get("rrf"), ".4f")
        final = r["scores"]["final"]
        print(f"{i:>3}  {cells}  {rrf:>6}  {_fmt(rerank.get(r['id'])):>6}  {mult:<{wide}}  {final:>6.3f}  {pack}")
    skipped = [p for p in trace.get("packing", []) if p.get("outcome") == "skipped"]
    if skipped:
        print(f"     ({len(skipped)} more candidates did not fit max_tokens)")
    print_waterfall(response.get("timings_ms") or {})


def print_waterfall(timings: dict[str, float], *, width: int = 40) -> None:
    from tempr.recall.waterfall import waterfall

    bars, total = waterfall(timings)
    print("\ntimings (ms): ░ waiting in a queue, █ working")
    scale = width / total if total > 0 else 0.0
    for bar in bars:
        lead = round(bar.start_ms * scale)
        wait = round(bar.wait_ms * scale)
        work = max(1, round(bar.work_ms * scale)) if bar.work_ms > 0 else 0
        drawn = (" " * lead + "░" * wait + "█" * work)[: width + 1]
        print(f"  {bar.step:<18} {drawn:<{width + 1}} wait {bar.wait_ms:>7.1f}  work {bar.work_ms:>7.1f}")
    print(f"  {'total':<18} {'':<{width + 1}} {total:>25.1f}")


def _print_features(rerank: dict[str, Any], unit_id: str) -> None:
    """Under a result: the learned ranker's raw score and the candidate's non-zero features."""
    names, row = rerank.get("feature_names"), (rerank.get("features") or {}).get(unit_id)
    if not names or row is None:
        return
    parts = [f"{n} {v:.3g}" for n, v in zip(names, row, strict=True) if v]
    repeat = (rerank.get("repeats") or {}).get(unit_id)
    stepped = f" (repeat {repeat} of its chunk: stepped down)" if repeat else ""
    print(f"       ranker {rerank.get('raw', {}).get(unit_id, 0.0):+.3f}{stepped} · " + " · ".join(parts))
