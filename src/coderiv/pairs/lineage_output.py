"""Lineages for people and programs: an indented text tree, Graphviz ``dot``, a PNG (matplotlib)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from coderiv.errors import CoderivError
from coderiv.extras import require
from coderiv.output import save_figure, to_json
from coderiv.pairs.lineage import DATES, TEXT, TIE, Lineage, Link

#: The most documents one picture holds legibly.
MAX_PLOTTED = 400

_BASIS_NOTE = {
    DATES: "order from dates",
    TEXT: "A GUESS: order inferred from the text alone (no dates): a later version is taken to hold most of its "
    "predecessor and add to it, which fails for pages that shrink; confidence = share of such links right on "
    "releases of known order (docs/lineage.md); give --dates for a history",
    "mixed": "order from dates where both documents have one, else inferred from the text (a guess there)",
}


def describe_link(link: Link) -> str:
    """The evidence of one link, in words."""
    date = f"; {link.date.iso} ({link.date.source})" if link.date else ""
    if link.parent is None:
        return f"[root{date}]"
    basis = link.basis
    if link.basis == TIE:
        same = link.in_parent == link.parent_in == 100.0
        basis = "tie: same text as its parent, order unknown" if same else "tie: as many chunks as its parent, order unknown"
    runner = f"; next best parent {link.runner_up[0]} ({link.runner_up[1]:.1f}% close)" if link.runner_up else ""
    return (
        f"[{link.in_parent:.1f}% of it in its parent, {link.parent_in:.1f}% of the parent in it; "
        f"+{link.words_added} -{link.words_removed} words; {basis}, confidence {link.confidence:.2f}{date}{runner}]"
    )


def lineage_text(lineages: Sequence[Lineage]) -> str:
    """Each group as an indented tree, parents above their children."""
    blocks = []
    for lineage in lineages:
        title = f"group {lineage.group}" if lineage.group is not None else "lineage"
        lines = [f"{title}: {len(lineage.links)} documents; {_BASIS_NOTE[lineage.basis]}"]
        lines += [f"{'  ' * (depth + 1)}{link.doc_id}  {describe_link(link)}" for depth, link in lineage.preorder()]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def lineage_json(lineages: Sequence[Lineage]) -> str:
    return to_json({"lineages": [lineage.to_dict() for lineage in lineages]})


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def lineage_dot(lineages: Sequence[Lineage]) -> str:
    """A Graphviz digraph, one cluster per group; edges parent → child labelled with the evidence."""
    lines = ["digraph lineage {", "  rankdir=TB;", "  node [shape=box, fontsize=10];"]
    for number, lineage in enumerate(lineages):
        lines.append(f"  subgraph cluster_{number} {{")
        lines.append(f"    label={_quote(f'group {lineage.group}: {lineage.basis}' if lineage.group else lineage.basis)};")
        for link in lineage.links:
            lines.append(f"    {_quote(link.doc_id)};")
        for link in lineage.links:
            if link.parent is None:
                continue
            style = ", style=dashed" if link.basis in (TEXT, TIE) else ""
            label = (f"{link.in_parent:.0f}% / {link.parent_in:.0f}%\\n+{link.words_added} -{link.words_removed}"
                     f"\\n{link.basis} {link.confidence:.2f}")
            lines.append(f"    {_quote(link.parent)} -> {_quote(link.doc_id)} [label=\"{label}\", fontsize=8{style}];")
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines)


def _positions(lineage: Lineage, x0: float) -> tuple[dict[str, tuple[float, float]], float]:
    """Tidy-enough layout: leaves side by side, a parent above the middle of its children."""
    kids = lineage.children()
    place: dict[str, tuple[float, float]] = {}
    next_x = x0

    def visit(doc: str, depth: int) -> float:
        nonlocal next_x
        xs = [visit(child, depth + 1) for child in kids.get(doc, [])]
        if xs:
            x = (xs[0] + xs[-1]) / 2
        else:
            x, next_x = next_x, next_x + 1
        place[doc] = (x, -depth)
        return x

    for root in kids.get(None, []):
        visit(root, 0)
    return place, next_x


def plot_lineages(lineages: Sequence[Lineage], path: str | Path) -> None:
    """Write a PNG of the trees: solid arrows rest on dates, dashed ones on the text alone."""
    matplotlib = require("matplotlib", "plot", "--plot")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    total = sum(len(lineage.links) for lineage in lineages)
    if total == 0:
        raise CoderivError("nothing to plot")
    if total > MAX_PLOTTED:
        raise CoderivError(f"{total} documents are too many for one picture (at most {MAX_PLOTTED}): plot one --group")
    place: dict[str, tuple[float, float]] = {}
    x = 0.0
    for lineage in lineages:
        more, x = _positions(lineage, x)
        place.update(more)
        x += 0.5
    depth = max(-y for _, y in place.values()) + 1
    fig, ax = plt.subplots(figsize=(min(max(6.0, 2.2 * x), 60.0), min(max(3.0, 1.3 * depth), 40.0)))
    for lineage in lineages:
        for link in lineage.links:
            cx, cy = place[link.doc_id]
            if link.parent is not None:
                px, py = place[link.parent]
                ax.annotate("", xy=(cx, cy + 0.12), xytext=(px, py - 0.12), arrowprops={
                    "arrowstyle": "->", "color": "tab:blue" if link.basis == DATES else "tab:gray",
                    "linestyle": "solid" if link.basis == DATES else "dashed",
                })
                ax.text((cx + px) / 2, (cy + py) / 2, f"{link.confidence:.2f}", fontsize=6, color="tab:gray")
            ax.text(cx, cy, link.doc_id.replace("/", "/\n", 1), ha="center", va="center", fontsize=6,
                    bbox={"boxstyle": "round", "facecolor": "white", "edgecolor": "tab:blue"})
    ax.set_xlim(-0.8, x)
    ax.set_ylim(-depth + 0.4, 0.6)
    ax.axis("off")
    fig.tight_layout()
    save_figure(fig, path)
