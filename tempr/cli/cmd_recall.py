"""`tempr recall --bank B "query"`: one recall, printed as a table or (``--json``) the response object."""

from __future__ import annotations

import argparse
import json
from typing import Any

from tempr.recall.models import RecallRequest, RecallResponse, parse_request


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("recall", help="recall memories for a query")
    p.add_argument("--bank", required=True)
    p.add_argument("query")
    p.add_argument("--budget", choices=["low", "mid", "high"], default="mid")
    p.add_argument("--max-tokens", type=int, default=4096)
    p.add_argument("--types", help="comma-separated: world,experience,observation")
    p.add_argument("--tags", help="comma-separated tags")
    p.add_argument("--tags-match", default="any", choices=["any", "all", "any_strict", "all_strict", "exact"])
    p.add_argument("--query-timestamp", help="ISO-8601; anchors relative dates and recency (default now)")
    p.add_argument("--include-chunks", action="store_true")
    p.add_argument("--trace", action="store_true")
    p.add_argument("--json", action="store_true", help="print exactly the response object")
    p.add_argument("--via-workers", action="store_true", help="run through the Celery chord instead of in-process")
    p.set_defaults(func=run)


def build_request(args: argparse.Namespace) -> RecallRequest:
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
    return parse_request(body)


def run(args: argparse.Namespace) -> int:
    request = build_request(args)
    if args.via_workers:
        from config.settings import get_settings
        from tempr.auth import require_local_key
        from tempr.client import recall_async

        job = recall_async(args.bank, request, api_key=require_local_key(get_settings()))
        response = RecallResponse.model_validate(job.get(timeout=request.timeout_s or 60))
    else:
        from tempr.recall.pipeline import recall
        from workers.resources import get_resources, recall_context

        response = recall(args.bank, request, recall_context(reranker=get_resources().reranker))
    if args.json:
        print(response.model_dump_json(indent=2))
    else:
        print_table(response)
    return 0


def print_table(response: RecallResponse, *, width: int = 88) -> None:
    print(
        f"bank {response.bank_id} · budget {response.budget} · reranker {response.reranker}"
        + (f" · degraded: {', '.join(response.degraded)}" if response.degraded else "")
        + (f" · cache {response.cache}" if response.cache else "")
    )
    if not response.results:
        print("  (no memories matched)")
    for rank, r in enumerate(response.results, start=1):
        when = (r.occurred_start or r.mentioned_at or "")[:10]
        text = r.text if len(r.text) <= width else r.text[: width - 1] + "…"
        arms = "".join(
            k[0].upper() for k in ("semantic", "keyword", "graph", "temporal") if getattr(r.scores, k) is not None
        )
        print(f"{rank:>3}. {r.scores.final:.3f} [{arms:<4}] {when:<10} {text}")
    if response.trace:
        print(json.dumps(response.trace.get("timings_ms", {}), indent=None))
