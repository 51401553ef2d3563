"""The analyse worker's CPU per recall after the strategies, stage by stage (timing only).

    .venv/bin/python -m bench.answer_cost [--conv /tmp/conv] [--questions 60] [--repeats 5]

At saturation the analyse pool's children are the largest CPU share of a recall (BENCHMARKS.md,
"CPU per recall at saturation"). This replays what ``tempr.fuse.collect`` does with a recall's
strategy reports, in this process, on the running stack (``tempr services up``, LoCoMo banks
ingested as ``locomo-XX`` from ``locomo_convert.py``'s output): fusion, the learned ranker (its SQL
included), finish, and ending the job as the task does (``succeed_job`` on the real Redis cache and
job store, then the Celery result encoded by this process's ``json`` serializer, as Celery's
tracer does with the task's return value). The strategies run once per question, beforehand, and
are not timed. CPU is this thread's (``time.thread_time``): PostgreSQL's and Redis's work is not in
it. Wired into nothing; compare code versions by running it from each tree (``PYTHONPATH``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

STAGES = ("fuse", "rerank", "finish", "end_job", "celery_result")


def _prepare(conv: Path, n: int) -> list[tuple[Any, Any]]:
    from tempr.recall.models import RecallRequest
    from tempr.recall.pipeline import run_strategies
    from tempr.recall.plan import analyse
    from tempr.store import banks_repo
    from workers.resources import recall_context

    ctx = recall_context()
    lines = (conv / "questions.jsonl").read_text().splitlines()
    qs = [json.loads(line) for line in lines if line.strip()]
    step = max(1, len(qs) // n)
    out = []
    for q in qs[::step][:n]:
        body = {"query": q["question"], "budget": "mid", "max_tokens": 4096, "query_timestamp": q["query_timestamp"]}
        with ctx.engine.connect() as conn:
            _, space = banks_repo.bank_state(conn, q["bank"])
        plan = analyse(q["bank"], RecallRequest.model_validate(body), ctx.for_space(space))
        out.append((plan, run_strategies(plan, ctx)))
    return out


def _one(plan: Any, results: Any, totals: dict[str, list[float]]) -> None:
    from kombu.serialization import dumps

    from tasks.common import job_ends
    from tempr.jobs.envelope import JobEnvelope
    from tempr.jobs.outcome import succeed_job
    from tempr.recall.finish import finish
    from tempr.recall.scoring import fuse, rerank
    from workers.resources import recall_context

    ctx = recall_context(embedder=False)
    now = time.time()
    env = JobEnvelope.model_validate(
        {"job_id": str(uuid.uuid4()), "bank_id": plan.bank_id, "deadline": now + 60, "enqueued_at": now}
    )

    def timed(stage: str, fn: Callable[[], Any]) -> Any:
        started = time.thread_time()
        value = fn()
        totals[stage].append(1000 * (time.thread_time() - started))
        return value

    candidates = timed("fuse", lambda: fuse(plan, results, ctx.settings))
    outcome = timed("rerank", lambda: rerank(plan, candidates, ctx))
    response = timed("finish", lambda: finish(plan, results, candidates, outcome, ctx, {}))
    answer = timed("end_job", lambda: succeed_job(job_ends(), env, response))
    meta = {"status": "SUCCESS", "result": answer, "traceback": None, "children": [], "date_done": "x"}
    timed("celery_result", lambda: dumps(meta, serializer="json"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conv", type=Path, default=Path(os.environ.get("CONV", "/tmp/conv")))
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    from workers.app import app

    assert app.conf.result_serializer == "json"  # reading the config builds it, installing this tree's codec
    prepared = _prepare(args.conv, args.questions)
    for plan, results in prepared[:5]:  # warm: connections, token counts
        _one(plan, results, {s: [] for s in STAGES})
    per_round: list[dict[str, float]] = []
    for _ in range(args.repeats):
        totals: dict[str, list[float]] = {s: [] for s in STAGES}
        for plan, results in prepared:
            _one(plan, results, totals)
        per_round.append({s: statistics.fmean(v) for s, v in totals.items()})
    median = {s: statistics.median(r[s] for r in per_round) for s in STAGES}
    print(
        json.dumps(
            {
                "questions": len(prepared),
                "repeats": args.repeats,
                "cpu_ms_per_recall": {
                    **{s: round(v, 3) for s, v in median.items()},
                    "total": round(sum(median.values()), 3),
                },
            }
        )
    )


if __name__ == "__main__":
    main()
