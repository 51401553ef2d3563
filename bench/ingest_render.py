"""BENCHMARKS.md's ingest section from an ``IngestResult`` (bench/ingest.py)."""

from __future__ import annotations

from typing import Any

from bench import report

STAGES = (
    "embed",
    "entities",
    "write_units",
    "link_semantic",
    "link_temporal",
    "write_entities",
    "write_links",
    "commit",
)


def _share(rate: float, embed_rate: float) -> str:
    return f"{100 * rate / embed_rate:.0f} %" if embed_rate else "–"


def _database_lines(db: dict[str, Any]) -> list[str]:
    """What the database held: the same facts write their index entries slower beside a large bank."""
    if not db:
        return []
    return [
        f"The database held {db['memories']:,} memories ({db['bytes'] / 2**30:.1f} GiB; shared_buffers "
        f"{db['shared_buffers']}) before the run. Each run writes a new bank, whose rows keep to their own "
        "stretch of every index keyed by memory id (ids are led by their bank: `ingest_repo.unit_uuid`); "
        "other banks' rows still share the indexes' upper levels and the buffers (see below).",
        "",
    ]


def _rates(embedder: dict[str, Any]) -> str:
    rates = embedder.get("rates") or [embedder.get("before"), embedder.get("after")]
    return ", ".join(str(r) for r in rates)


def render(result: Any) -> str:
    emb = result.embedder.get("texts_per_s", 0.0)
    peer = result.peer.get("facts_per_s", 0.0) if result.peer else 0.0
    rows = []
    for label, rep in result.runs.items():
        rate = float(rep["facts_per_s"])
        rows.append(
            [
                label,
                f"{rep['inserted']:,}",
                report.fmt(rep["elapsed_s"], 1),
                report.fmt(rate, 0),
                report.fmt(rep.get("cpu_ms_per_fact"), 1),
                _share(rate, float(rep.get("embedder_texts_per_s") or emb)),
                f"{rate / peer:.1f}×" if peer else "–",
            ]
        )
    if result.peer.get("facts_per_s"):
        p = result.peer
        rows.append(["Hindsight 1.1 peer (document-transfer import)", f"{p['facts']:,}", report.fmt(p["seconds"], 1)])
        rows[-1] += [report.fmt(p["facts_per_s"], 0), "–", _share(p["facts_per_s"], emb), "1.0×"]
    rows.append(
        ["embedder alone (same texts, mean of every measurement)", f"{result.facts:,}", "–", report.fmt(emb, 0)]
    )
    rows[-1] += ["–", "100 %", f"{emb / peer:.1f}×" if peer else "–"]
    lines = [
        "## Ingest throughput",
        "",
        f"{result.facts:,} facts from {result.source}, imported into fresh banks side by side in one run "
        f"(`tempr bench ingest`). Embedder: `{result.embedder.get('kind')}` "
        f"(texts/s, measured before the first tempr run and after each: {_rates(result.embedder)}). "
        "*% of embedder*: ingest rate over the embedder's own rate on the same texts, the mean of the two "
        "measurements around that run (everything but embedding costs the rest). CPU per fact: the ingesting process(es), PostgreSQL's CPU not included. "
        "Via workers: chunks of "
        f"{result.cfg.chunk_facts} facts on the `ingest` queue, one prefork worker of 1 or 2 processes, models warm; "
        "the time runs from validation to the publishing commit.",
        "",
        report.machine_line(result.machine),
        "",
        *_database_lines(result.database),
        report.table(["what", "facts", "s", "facts/s", "CPU ms/fact", "% of embedder", "vs Hindsight"], rows),
        "",
    ]
    if not result.peer:
        lines += ["Hindsight peer: not run (no LoCoMo data or peer venv beside the repository).", ""]
    elif "error" in result.peer:
        lines += [f"Hindsight peer: failed ({result.peer['error']}).", ""]
    else:
        lines += [
            f"Hindsight per bank (s, rounded up by the runner's 1 s polling): {result.peer['banks']}.",
            "",
        ]
    lines += _stage_table(result), ""
    lines += _chunk_lines(result)
    if result.cli_250:
        lines += _cli_lines(result.cli_250), ""
    lines.append("No GPU was available to this run: GPU figures (≥ 10× Hindsight, 4/8 workers) were not measured.")
    return "\n".join(lines)


def _cli_lines(c: dict[str, Any]) -> str:
    """The 250-fact command, through the local gateway and without one."""
    if "gateway" not in c:  # a result file from before both paths were timed
        return f"`tempr ingest --via-workers` of a 250-fact file on the warm fleet: **{c['wall_s']:.2f} s** wall."
    g, k = c["gateway"], c["celery"]
    return (
        f"`tempr ingest --via-workers` of a 250-fact file on the warm fleet, wall time of the command "
        f"(interpreter start to exit; the command loads no model), {len(g['wall_s'])} runs of each, interleaved: "
        f"through the local gateway that `tempr services up` starts (the CLI on the standard library alone) "
        f"**{g['median_wall_s']:.2f} s** median ({', '.join(f'{w:.2f}' for w in g['wall_s'])}; last run's timeline "
        f"{g['timeline']}); without a gateway (the CLI imports Celery and SQLAlchemy, probes for an ingest "
        f"worker and enqueues itself) {k['median_wall_s']:.2f} s ({', '.join(f'{w:.2f}' for w in k['wall_s'])}; "
        f"timeline {k['timeline']})."
    )


def _chunk_lines(result: Any) -> list[str]:
    """The chunk vectors each run's facts were followed by (the ``embed_chunks`` work), and the rate with them."""
    rows = []
    for label, rep in result.runs.items():
        cv = rep.get("chunk_vectors") or {}
        if not cv.get("chunks"):
            continue
        with_chunks = float(rep["received"]) / (float(rep["elapsed_s"]) + float(cv["seconds"]))
        rows.append([label, f"{cv['chunks']:,}", report.fmt(cv["seconds"], 1), report.fmt(with_chunks, 0)])
    if not rows:
        return ["Chunk vectors: off (`TEMPR_CHUNK_VECTORS=false`) or no chunks in these facts.", ""]
    return [
        "Chunk vectors, embedded after the facts were visible (the `embed_chunks` task; in the single-process "
        "runs, the same call in the bench process). *facts/s with chunk vectors* counts both:",
        "",
        report.table(["what", "chunks", "s after the facts", "facts/s with chunk vectors"], rows),
        "",
    ]


def _stage_table(result: Any) -> str:
    rows = []
    for label, rep in result.runs.items():
        stages = rep.get("stages") or {}
        total = float(rep["elapsed_s"]) or 1.0
        if "single" not in label:
            continue
        other = total - sum(stages.values())
        cells = [f"{stages.get(s, 0.0):.2f} ({100 * stages.get(s, 0.0) / total:.0f} %)" for s in STAGES]
        rows.append([label.replace("tempr single process, ", ""), *cells, f"{other:.2f}"])
    return "Stage breakdown of the single-process runs, seconds (share of the run):\n\n" + report.table(
        ["entities", *STAGES, "other"], rows
    )
