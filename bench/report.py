"""BENCHMARKS.md writer: each benchmark owns one section between markers.

    <!-- bench:NAME:start -->
    ...generated...
    <!-- bench:NAME:end -->

``write_section`` replaces only the text between one pair of markers and keeps the
rest of the file (other benchmarks' sections, hand-written text) as it is; a section
not yet in the file is appended. The read-modify-write holds an exclusive lock on a
side file, so two benchmarks finishing at once cannot lose each other's update.
"""

from __future__ import annotations

import fcntl
import os
import platform
from collections.abc import Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_PATH = REPO / "BENCHMARKS.md"

HEADER = """# tempr benchmarks

Every table below is printed by the command that wrote it; each section says when and on what
machine it was measured. Sections sit between `<!-- bench:NAME:start/end -->` markers and are
rewritten in place by their benchmark; text outside the markers is kept.

    make bench                        # services up, then `tempr bench all`: every table and plot
    tempr bench quality               # LoCoMo evidence recall only
    tempr bench latency | scale | ingest
    tempr bench all --quick           # a small smoke run of everything; prints, writes nothing

Options: `--locomo DIR`, `--conversations 26,30`, `--questions N`, `--in-process-only` (quality),
`--sizes 10000,100000` (latency, scale), `--facts N` (ingest), `--write` / `--no-write`.
Services come from `tempr services up` in `TEMPR_STATE_DIR` (default `.tempr`); the benchmarks
start their own Celery workers (named `bench-*`) and stop them when done. Synthetic banks persist
in the database between runs, and their embeddings are cached under `bench/.cache/` (git-ignored),
so a rerun skips both. Plots are written to `bench/plots/`.

LoCoMo data: Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM Agents"
(ACL 2024), licensed CC BY-NC 4.0 by the LoCoMo authors. It is read at run time from
`../shared/bench/locomo-dev/` (configurable with `--locomo`) and is not part of this repository.
"""


def markers(name: str) -> tuple[str, str]:
    return f"<!-- bench:{name}:start -->", f"<!-- bench:{name}:end -->"


def replace_section(document: str, name: str, body: str) -> str:
    """``document`` with section ``name``'s content set to ``body`` (appended if absent)."""
    start, end = markers(name)
    block = f"{start}\n{body.strip()}\n{end}"
    i = document.find(start)
    j = document.find(end, i + len(start)) if i >= 0 else -1
    if i >= 0 and j >= 0:
        return document[:i] + block + document[j + len(end) :]
    sep = "" if not document or document.endswith("\n\n") else ("\n" if document.endswith("\n") else "\n\n")
    return f"{document}{sep}{block}\n"


def read_document(path: Path = DEFAULT_PATH) -> str:
    """BENCHMARKS.md as it stands (empty before the first run)."""
    return path.read_text(encoding="utf-8") if path.exists() else ""


def read_section(document: str, name: str) -> str | None:
    start, end = markers(name)
    i = document.find(start)
    j = document.find(end, i + len(start)) if i >= 0 else -1
    return document[i + len(start) : j].strip() if i >= 0 and j >= 0 else None


@contextmanager
def _locked(path: Path):
    lock = path.with_name(f".{path.name}.lock")
    with open(lock, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def write_section(name: str, body: str, path: Path = DEFAULT_PATH) -> None:
    with _locked(path):
        document = path.read_text(encoding="utf-8") if path.exists() else HEADER
        updated = replace_section(document, name, body)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(updated, encoding="utf-8")
        tmp.replace(path)


def ensure_sections(names: Sequence[str], path: Path = DEFAULT_PATH) -> None:
    """Append placeholders for sections not in the file yet, so sections appear in this order."""
    with _locked(path):
        document = path.read_text(encoding="utf-8") if path.exists() else HEADER
        updated = document
        for name in names:
            if read_section(updated, name) is None:
                updated = replace_section(updated, name, f"_Section `{name}`: not generated yet._")
        if updated != document or not path.exists():
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            tmp.write_text(updated, encoding="utf-8")
            tmp.replace(path)


# --- formatting ---------------------------------------------------------------------------------


def fmt(value: Any, digits: int = 1) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        if value != value:  # NaN
            return "–"
        return f"{value:,.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], align: str | None = None) -> str:
    """A GitHub-markdown table; ``align`` is one of l/r/c per column (default: first l, rest r)."""
    align = align or ("l" + "r" * (len(headers) - 1))
    rule = {"l": ":---", "r": "---:", "c": ":---:"}
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(rule[a] for a in align) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


# --- the machine ----------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    import psutil

    model = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cores": cores,
        "ram_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "cpu": model,
        "python": platform.python_version(),
        "os": f"{platform.system()} {platform.release()}",
        "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "load": round(os.getloadavg()[0], 1) if hasattr(os, "getloadavg") else None,
    }


def machine_line(info: dict[str, Any] | None = None) -> str:
    m = info or machine()
    return (
        f"Machine: {m['cores']} cores ({m['cpu']}), {m['ram_gib']} GiB RAM, Python {m['python']}, "
        f"{m['os']}; measured {m['when']}"
        + (f" (1-min load average {m['load']} at the end)" if m.get("load") is not None else "")
        + "; CPU only (no GPU)."
    )
