"""A picture of separation: per query, where the relevant documents and the highest false
match fall, one panel per method, so two methods' separations can be compared at a glance."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from coderiv.errors import CoderivError
from coderiv.evaluation.evaluate import MethodResult
from coderiv.extras import require
from coderiv.output import fmt_percent, save_figure

MAX_LABELS = 170


def plot_separation(results: Sequence[MethodResult], path: str | Path) -> None:
    """Write a PNG: green dots = relevant documents' percentages, red bar = HFM, and a line
    from the HFM to the lowest relevant document (green when separated, red when not)."""
    matplotlib = require("matplotlib", "plot", "--plot")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not results:
        raise CoderivError("nothing to plot")
    n_queries = max(len(r.queries) for r in results)
    top = max(
        [100.0] + [p for r in results for q in r.queries for p in (q.hfm, *q.relevant_percents)]
    )
    fig, axes = plt.subplots(
        len(results), 1, figsize=(min(max(6.0, 0.22 * n_queries + 2), 40.0), 2.6 * len(results) + 0.6),
        sharey=True, squeeze=False,
    )
    for ax, result in zip(axes[:, 0], results):
        for x, q in enumerate(result.queries):
            ax.plot([x, x], [q.hfm, q.lowest_relevant], color="tab:green" if q.sep > 0 else "tab:red", lw=1.2)
            ax.scatter([x] * len(q.relevant_percents), q.relevant_percents, s=14, color="tab:green", zorder=3)
            ax.scatter([x], [q.hfm], marker="_", s=120, color="tab:red", zorder=4)
        ratio = "n/a" if result.ratio is None else f"{result.ratio:.2f}"
        ax.set_title(
            f"{result.method}: P(s) {result.precision:.2f}, R(20) {result.recall:.2f}, "
            f"HFM {fmt_percent(result.hfm, 2)}, Sep. {fmt_percent(result.sep, 2)}, Sep./HFM {ratio}",
            fontsize=9,
        )
        step = max(1, len(result.queries) // MAX_LABELS)  # label every query while they fit
        ax.set_xticks(range(0, len(result.queries), step))
        ax.set_xticklabels([q.query_id for q in result.queries[::step]], rotation=90, fontsize=6)
        ax.set_xlim(-1, n_queries)
        ax.set_ylim(-2, top * 1.05)
        ax.set_ylabel("percent of self-score", fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    axes[0, 0].scatter([], [], s=14, color="tab:green", label="relevant document")
    axes[0, 0].scatter([], [], marker="_", s=120, color="tab:red", label="highest false match")
    axes[0, 0].legend(loc="lower left", fontsize=7, ncol=2)
    fig.tight_layout()
    save_figure(fig, path)
