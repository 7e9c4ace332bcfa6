"""``coderiv pairs``, ``coderiv similar`` and ``coderiv groups``: the n-to-n commands (SPEC §8)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from coderiv.cli.options import format_option, friendly_errors, index_option, progress_bar, quiet_option
from coderiv.errors import CoderivError
from coderiv.output import fmt_percent, json_percent, printable, table, to_json, tsv
from coderiv.pairs.methods import DEFAULT_METHOD, DEFAULT_TOP, METHODS

method_option = click.option(
    "--method", "-m", type=click.Choice(sorted(METHODS)), default=DEFAULT_METHOD, show_default=True,
    help="chunks: 5-word chunk similarity (asymmetric); identity5: the identity5 measure; resemblance: 4-shingle resemblance.",
)

if TYPE_CHECKING:
    from coderiv.index.index import Index


def _ensure_store(index_dir: Path, method: str, quiet: bool) -> Index:
    """Open the index, adding the store ``method`` needs, with a notice and a progress bar."""
    from coderiv.pairs.run import open_for_pairs

    with progress_bar(quiet, "indexing") as bar:
        return open_for_pairs(index_dir, method, bar, lambda message: click.echo(message, err=True))


@click.command("pairs")
@method_option
@click.option("--top", "-k", type=click.IntRange(1), default=DEFAULT_TOP, show_default=True,
              help="Similar documents kept per document.")
@click.option("--max-df", type=click.IntRange(2), default=None,
              help="Skip keys in more than this many documents as boilerplate [default: max(100, 1% of N)].")
@click.option("--full", is_flag=True, help="Recompute everything instead of only what the index changes touch.")
@click.option("--dask", "dask_address", default=None, metavar="local|ADDRESS",
              help="Run on Dask: 'local' starts a LocalCluster here; an address uses that scheduler.")
@click.option("--workers", type=click.IntRange(1), default=None, help="LocalCluster workers (default: all cores).")
@click.option("--memory", "memory_gb", type=click.FloatRange(0.01), default=None, metavar="GB",
              help="Memory for the shared pairs (default 4); past it, rows are computed by document range.")
@index_option
@quiet_option
@friendly_errors
def pairs_command(
    method: str, top: int, max_df: int | None, full: bool, dask_address: str | None, workers: int | None,
    memory_gb: float | None, index_dir: Path, quiet: bool,
) -> None:
    """Every document's top-k most similar documents, stored in the index.

    After 'coderiv index' added, changed or deleted documents, only what they touch is
    recomputed. Look rows up with 'coderiv similar', groups with 'coderiv groups'.
    """
    from coderiv.pairs.counting import serial_engine
    from coderiv.pairs.run import run_pairs

    if workers is not None and dask_address != "local":
        raise CoderivError("--workers sets the size of a local cluster: use it with --dask local")
    index = _ensure_store(index_dir, method, quiet)
    memory = None if memory_gb is None else int(memory_gb * (1 << 30))
    with progress_bar(quiet, f"pairs ({method})") as bar:
        if dask_address:
            from coderiv.pairs.dask_backend import dask_client, dask_engine

            with dask_client(dask_address, workers) as client:
                report = run_pairs(index, method, top, max_df, full, dask_engine(client), bar, memory)
        else:
            report = run_pairs(index, method, top, max_df, full, serial_engine, bar, memory)
    if report.mode == "unchanged":
        click.echo(f"{method} pair table of {index_dir} is up to date ({report.documents} documents)")
        return
    detail = f"; {report.reason}" if report.mode == "incremental" else ""
    click.echo(
        f"{method}: {report.mode} run, {report.recomputed_rows} of {report.documents} rows computed{detail}; "
        f"{report.shared_pairs} document pairs share keys; top {top} kept per document"
    )
    click.echo(
        f"boilerplate: {report.skipped_keys} keys in more than {report.max_df} documents skipped "
        f"({report.skipped_postings} postings)"
    )


@click.command("similar")
@click.argument("doc_ids", nargs=-1)
@click.option("--all", "everything", is_flag=True, help="Every document's row (export the whole table).")
@method_option
@click.option("--top", "-k", type=click.IntRange(1), default=None, help="Show at most this many per document.")
@index_option
@format_option
@friendly_errors
def similar_command(doc_ids: tuple[str, ...], everything: bool, method: str, top: int | None, index_dir: Path, fmt: str) -> None:
    """The stored most similar documents of each DOC_ID (from 'coderiv pairs'), or of all (--all)."""
    from coderiv.index.reader import open_index
    from coderiv.pairs.table import PairTable

    if not doc_ids and not everything:
        raise CoderivError("give a document id, or --all for the whole table")
    from coderiv.pairs.methods import get_method

    pairs = PairTable.open(open_index(index_dir).pairs_index(), method)
    ids = pairs.doc_ids if everything else list(doc_ids)
    rows = [(doc_id, match) for doc_id in ids for match in pairs.similar(doc_id)[:top]]
    reading = get_method(method).reading
    if fmt == "json":
        by_doc: dict[str, list[dict[str, Any]]] = {doc_id: [] for doc_id in ids}
        for doc_id, (rank, pct, other) in rows:
            by_doc[doc_id].append({"rank": rank, "percent": json_percent(pct), "doc_id": other})
        results = [{"doc_id": d, "similar": m} for d, m in by_doc.items()]
        click.echo(to_json({"method": method, "reading": reading, "results": results}))
    elif fmt == "tsv":
        click.echo(tsv(["doc_id", "rank", "percent", "similar_id"], [[d, r, f"{p:.4f}", o] for d, (r, p, o) in rows]))
    else:
        click.echo(f"{method}: {reading}")
        if rows:
            click.echo(table(
                ["doc_id", "rank", "percent", "similar_id"], [[d, r, fmt_percent(p), o] for d, (r, p, o) in rows],
                align="<>><",
            ))
        found = {d for d, _ in rows}
        empty = [d for d in ids if d not in found]
        if everything and not rows:
            click.echo(f"the {method} pair table is empty: no two documents share a key outside boilerplate")
        elif not everything:
            for doc_id in empty:
                click.echo(f"{printable(doc_id)}: no similar document in the {method} pair table "
                           "(it shares no key with another document outside boilerplate)")


@click.command("groups")
@click.option("--min", "min_percent", type=float, required=True, help="Link documents similar at PERCENT or more.")
@click.option("--mutual/--one-way", default=True, show_default=True,
    help="Link only when both directions reach --min (versions, not excerpts: the default), or when either does "
    "(--one-way: a page quoted inside a long one joins its group, which chains unrelated documents).",
)
@method_option
@index_option
@format_option
@friendly_errors
def groups_command(min_percent: float, mutual: bool, method: str, index_dir: Path, fmt: str) -> None:
    """Groups of coderivative documents (connected components of the pair table), largest first."""
    from coderiv.index.reader import open_index
    from coderiv.pairs.groups import find_groups
    from coderiv.pairs.table import PairTable

    groups = find_groups(PairTable.open(open_index(index_dir).pairs_index(), method), min_percent, mutual)
    if fmt == "json":
        click.echo(to_json([g.to_dict() for g in groups]))
    elif fmt == "tsv":
        click.echo(tsv(["group", "size", "doc_id"], [[g.number, len(g.doc_ids), d] for g in groups for d in g.doc_ids]))
    else:
        how = "both ways" if mutual else "one way or the other"
        click.echo(f"{len(groups)} groups of documents similar at {min_percent:g}% or more, {how} ({method})")
        click.echo(table(["group", "size", "doc_id"], [[g.number, len(g.doc_ids), d] for g in groups for d in g.doc_ids], align=">><"))


COMMANDS = (pairs_command, similar_command, groups_command)
