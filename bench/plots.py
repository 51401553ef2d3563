"""PNG plots for BENCHMARKS.md (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

STYLE = {"figure.dpi": 110, "font.size": 10, "axes.grid": True, "grid.alpha": 0.3}


def _save(fig: plt.Figure, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def recall_bars(series: dict[str, list[float]], ks: Sequence[int], path: Path, title: str) -> None:
    """Recall@k lines: the default pipeline (bold) against the seed profile and the baselines."""
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(1, 1, figsize=(8, 5))
        for name, values in series.items():
            style: dict[str, object] = {"marker": "."}
            if name.startswith("default"):
                style = {"linewidth": 2.6, "marker": "o", "color": "tab:blue"}
                if "workers" in name:
                    style["linestyle"] = ":"
            if name.startswith("DRAGON"):
                style = {"linestyle": "--", "color": "black", "marker": "s", "linewidth": 1.5}
            ax.plot(list(ks), values, label=name, **style)
        ax.set_xscale("log")
        ax.set_xticks(list(ks), [str(k) for k in ks])
        ax.minorticks_off()
        ax.set_xlabel("k (top-k results)")
        ax.set_ylabel("evidence recall@k (%)")
        ax.set_ylim(0, 100)
        ax.legend(fontsize=8, loc="best")
        fig.suptitle(title)
        _save(fig, path)


def _size_label(n: float) -> str:
    return f"{n / 1e6:g}M" if n >= 1e6 else (f"{n / 1e3:g}k" if n >= 1e3 else f"{n:g}")


def _plain_log_axes(ax: plt.Axes, sizes: Sequence[int]) -> None:
    from matplotlib.ticker import FuncFormatter, NullFormatter

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(list(sizes), [_size_label(n) for n in sizes])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if str(round(v))[0] in "25" else ""))


def latency_vs_size(panels: dict[str, dict[str, dict[int, tuple[float, float]]]], path: Path, title: str) -> None:
    """One panel per client count: p50 (solid) and p95 (dashed) against bank size, one colour per budget."""
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 5), squeeze=False, sharey=True)
        colours = {"low": "tab:green", "mid": "tab:blue", "high": "tab:red"}
        for ax, (panel, series) in zip(axes[0], panels.items(), strict=True):
            sizes_all: set[int] = set()
            for name, by_size in series.items():
                sizes = sorted(by_size)
                sizes_all.update(sizes)
                c = colours.get(name)
                ax.plot(sizes, [by_size[s][0] for s in sizes], "-o", color=c, label=f"{name} p50")
                ax.plot(sizes, [by_size[s][1] for s in sizes], "--^", color=c, label=f"{name} p95")
            _plain_log_axes(ax, sorted(sizes_all))
            ax.set_xlabel("bank size (facts)")
            ax.set_title(panel)
            ax.legend(fontsize=8, ncol=2)
        axes[0][0].set_ylabel("recall latency, client wall time (ms)")
        fig.suptitle(title)
        _save(fig, path)


def scale_figure(
    stages: dict[str, dict[int, float]],
    stage_ext: dict[str, dict[int, float]],
    storage: dict[str, dict[int, float]],
    storage_ext: dict[str, dict[int, float]],
    path: Path,
    title: str,
) -> None:
    """Left: median stage latency vs bank size; right: storage (MiB) vs bank size. Dotted = extrapolated."""
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(1, 2, figsize=(13, 5))
        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for ax, data, ext, ylabel in (
            (axes[0], stages, stage_ext, "median ms (budget mid, 1 client)"),
            (axes[1], storage, storage_ext, "MiB (heap + indexes)"),
        ):
            for i, (name, by_size) in enumerate(data.items()):
                c = colours[i % len(colours)]
                sizes = sorted(by_size)
                ax.plot(sizes, [max(by_size[s], 1e-2) for s in sizes], "-o", color=c, label=name)
                if name in ext:
                    xs = [sizes[-1], *sorted(ext[name])]
                    ys = [by_size[sizes[-1]], *[ext[name][s] for s in sorted(ext[name])]]
                    ax.plot(xs, [max(y, 1e-2) for y in ys], ":", color=c)
                    ax.scatter(
                        sorted(ext[name]),
                        [max(ext[name][s], 1e-2) for s in sorted(ext[name])],
                        marker="o",
                        facecolors="none",
                        edgecolors=c,
                    )
            _plain_log_axes(ax, sorted({n for v in data.values() for n in v} | {n for v in ext.values() for n in v}))
            ax.set_xlabel("facts in the bank (hollow points at 1M: extrapolated)")
            ax.set_ylabel(ylabel)
            ax.legend(fontsize=8)
        axes[0].set_title("latency per stage")
        axes[1].set_title("storage per bank")
        fig.suptitle(title)
        _save(fig, path)
