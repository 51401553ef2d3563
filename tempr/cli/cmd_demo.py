"""`tempr demo`: a handful of recalls over the sample bank, through the Celery workers.

`make demo` runs `tempr services up` (PostgreSQL, Redis, a worker), `tempr keys local` (a local
admin key in <state_dir>/api_key, mode 0600, which this command sends) and ingests
`tempr/data/sample_bank.jsonl` first; this command only asks.
"""

from __future__ import annotations

import argparse

from tempr.cli.cmd_recall import print_table
from tempr.recall.models import RecallRequest, RecallResponse

REFERENCE_TIME = "2024-09-15T12:00:00+00:00"
QUERIES: list[tuple[str, dict[str, object]]] = [
    ("Alice works at Google", {"budget": "low"}),
    ("Where does Alice work?", {}),
    ("What did Alice do last spring?", {}),
    ("Why did Alice leave Google?", {}),
    ("What did Alice's manager's team work on?", {"budget": "high"}),
    ("What happened before Alice joined Google?", {}),
    ("What did Bob work on last year?", {"max_tokens": 120}),
]


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="run example recalls over the sample bank through the workers")
    p.add_argument("--bank", default="demo", help="the bank to ask (default demo, which `make demo` fills)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for each recall")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from config.settings import get_settings
    from tempr.auth import require_local_key
    from tempr.client import recall_async

    api_key = require_local_key(get_settings())
    print(f"Recalls over bank '{args.bank}' as of {REFERENCE_TIME}, run by the Celery workers\n")
    last: RecallResponse | None = None
    for query, extra in QUERIES:
        request = RecallRequest.model_validate(
            {"query": query, "query_timestamp": REFERENCE_TIME, "max_tokens": 300, **extra}
        )
        response = RecallResponse.model_validate(
            recall_async(args.bank, request, api_key=api_key).get(timeout=args.timeout)
        )
        print(f"» {query}   (budget {request.budget}, max_tokens {request.max_tokens})")
        print_table(response.model_dump(mode="json"))
        print()
        last = response
    if last is not None:
        print("Per-stage timings of the last recall (ms):")
        for stage, ms in sorted(last.timings_ms.items(), key=lambda kv: kv[0]):
            print(f"  {stage:<24} {ms:>9.1f}")
    return 0
