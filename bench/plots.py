"""PNG plots for BENCHMARKS.md (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STYLE = {"figure.dpi": 110, "font.size": 10, "axes.grid": True, "grid.alpha": 0.3}


def _save(fig: plt.Figure, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def recall_bars(series: dict[str, list[float]], ks: Sequence[int], path: Path, title: str) -> None:
    """Two panels of recall@k lines: strategies alone vs the full pipeline (left), ablations (right)."""
    left = {n: v for n, v in series.items() if "−" not in n}
    right = {n: v for n, v in series.items() if "−" in n or n.startswith("full pipeline") or n.startswith("DRAGON")}
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(1, 2, figsize=(12, 5), sharey=True)
        for ax, group, sub in ((axes[0], left, "full pipeline vs single strategies"),
                               (axes[1], right, "ablation: full pipeline minus one strategy")):
            for name, values in group.items():
                style = {"linewidth": 2.6, "marker": "o"} if name.startswith("full pipeline") else {"marker": "."}
                if name.startswith("DRAGON"):
                    style = {"linestyle": "--", "color": "black", "marker": "s", "linewidth": 1.5}
                if name == "full pipeline, through the workers":
                    style = {"linewidth": 2.6, "marker": "o", "linestyle": ":", "color": "tab:blue"}
                ax.plot(list(ks), values, label=name, **style)
            ax.set_xscale("log")
            ax.set_xticks(list(ks), [str(k) for k in ks])
            ax.minorticks_off()
            ax.set_xlabel("k (top-k results)")
            ax.set_title(sub)
            ax.set_ylim(0, 100)
            ax.legend(fontsize=8, loc="lower right")
        axes[0].set_ylabel("evidence recall@k (%)")
        fig.suptitle(title)
        _save(fig, path)


def latency_vs_size(points: dict[str, dict[int, tuple[float, float]]], path: Path, title: str,
                    extrapolated: dict[str, dict[int, tuple[float, float]]] | None = None) -> None:
    """p50 (solid) and p95 (dashed) latency against bank size, one colour per series."""
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(8, 5))
        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for i, (name, by_size) in enumerate(points.items()):
            sizes = sorted(by_size)
            c = colours[i % len(colours)]
            ax.plot(sizes, [by_size[s][0] for s in sizes], "-o", color=c, label=f"{name} p50")
            ax.plot(sizes, [by_size[s][1] for s in sizes], "--^", color=c, label=f"{name} p95")
            if extrapolated and name in extrapolated:
                ext = extrapolated[name]
                xs = [sizes[-1], *sorted(ext)]
                ax.plot(xs, [by_size[sizes[-1]][0], *[ext[s][0] for s in sorted(ext)]], ":", color=c, alpha=0.7)
                ax.plot(xs, [by_size[sizes[-1]][1], *[ext[s][1] for s in sorted(ext)]], ":", color=c, alpha=0.7)
                ax.scatter(sorted(ext), [ext[s][0] for s in sorted(ext)], marker="o", facecolors="none", edgecolors=c)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("bank size (facts)")
        ax.set_ylabel("recall latency (ms)")
        ax.set_title(title)
        ax.legend(fontsize=8, ncol=2)
        _save(fig, path)


def stage_lines(stages: dict[str, dict[int, float]], path: Path, title: str,
                extrapolated: dict[str, dict[int, float]] | None = None, ylabel: str = "median ms") -> None:
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(8, 5))
        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for i, (name, by_size) in enumerate(stages.items()):
            c = colours[i % len(colours)]
            sizes = sorted(by_size)
            ax.plot(sizes, [max(by_size[s], 1e-2) for s in sizes], "-o", color=c, label=name)
            if extrapolated and name in extrapolated:
                ext = extrapolated[name]
                xs = [sizes[-1], *sorted(ext)]
                ax.plot(xs, [max(v, 1e-2) for v in [by_size[sizes[-1]], *[ext[s] for s in sorted(ext)]]], ":", color=c)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("bank size (facts); dotted = extrapolated")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.legend(fontsize=8)
        _save(fig, path)


def throughput_bars(labels: Sequence[str], values: Sequence[float], path: Path, title: str, ylabel: str) -> None:
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(8, 4.5))
        bars = ax.bar(labels, values, color="tab:blue")
        ax.bar_label(bars, fmt="%.1f", fontsize=8)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        plt.setp(ax.get_xticklabels(), rotation=20, ha="right")
        _save(fig, path)


def scale_figure(stages: dict[str, dict[int, float]], stage_ext: dict[str, dict[int, float]],
                 storage: dict[str, dict[int, float]], storage_ext: dict[str, dict[int, float]], path: Path,
                 title: str) -> None:
    """Left: median stage latency vs bank size; right: storage (MiB) vs bank size. Dotted = extrapolated."""
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(1, 2, figsize=(13, 5))
        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for ax, data, ext, ylabel in ((axes[0], stages, stage_ext, "median ms (budget mid, 1 client)"),
                                      (axes[1], storage, storage_ext, "MiB (heap + indexes)")):
            for i, (name, by_size) in enumerate(data.items()):
                c = colours[i % len(colours)]
                sizes = sorted(by_size)
                ax.plot(sizes, [max(by_size[s], 1e-2) for s in sizes], "-o", color=c, label=name)
                if name in ext:
                    xs = [sizes[-1], *sorted(ext[name])]
                    ys = [by_size[sizes[-1]], *[ext[name][s] for s in sorted(ext[name])]]
                    ax.plot(xs, [max(y, 1e-2) for y in ys], ":", color=c)
                    ax.scatter(sorted(ext[name]), [max(ext[name][s], 1e-2) for s in sorted(ext[name])],
                               marker="o", facecolors="none", edgecolors=c)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("facts in the bank (hollow points at 1M: extrapolated)")
            ax.set_ylabel(ylabel)
            ax.legend(fontsize=8)
        axes[0].set_title("latency per stage")
        axes[1].set_title("storage per bank")
        fig.suptitle(title)
        _save(fig, path)
