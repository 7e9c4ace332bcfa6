"""``coderiv query``: rank the collection against whole documents."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from coderiv.cli.options import (
    TerminalBar,
    analysis_options,
    friendly_errors,
    index_option,
    progress_bar,
    query_markup_option,
    quiet_option,
    settings_from,
)
from coderiv.errors import CoderivError
from coderiv.output import FORMATS, fmt_percent, json_line, over_100_note, printable, table, to_json, tsv
from coderiv.ranking.batch import DEFAULT_TOP, BatchItem
from coderiv.ranking.measures import DEFAULT_MEASURE, MEASURES, over_100_reason
from coderiv.ranking.searchers import DEFAULT_QUERY_METHOD, QUERY_METHODS

#: ``--exclude-versions``: the percentage at which two documents are versions of each other
#: (``coderiv.pairs.groups.VERSIONS_MIN_PERCENT``; the pairs package is imported only when used,
#: test_cli checks the two agree)
VERSIONS_MIN_PERCENT = 50.0

if TYPE_CHECKING:
    from coderiv.index.reader import IndexReader
    from coderiv.ranking.protocol import DocumentSearcher
    from coderiv.text.extract import Markup

QUERY_FORMATS = (*FORMATS, "jsonl")


@click.command("query")
@click.argument("files", nargs=-1, type=click.Path(allow_dash=True))
@click.option("--doc", "doc_ids", multiple=True, help="Use a document of the index as the query (repeatable).")
@click.option("--measure", "-m", type=click.Choice(MEASURES.names()), default=DEFAULT_MEASURE, show_default=True)
@click.option(
    "--top", "-k", type=click.IntRange(1), default=None,
    help=f"How many results per query [default: {DEFAULT_TOP}, or all with --min-percent].",
)
@click.option(
    "--min-percent", type=click.FloatRange(0), default=None,
    help="Every document at or above this percentage (capped by --top only if given; also much faster).",
)
@click.option("--method", type=click.Choice(QUERY_METHODS.names()), default=DEFAULT_QUERY_METHOD, show_default=True)
@click.option("--strategy", default=None, help="Fingerprint store: STRATEGY[:g=G,...] (needed if there are several).")
@click.option("--full-query", is_flag=True, help="Fingerprint the query with every phrase (full strategy).")
@click.option("--exclude-self", is_flag=True, help="Leave out the query's own document (--doc ID, or the same id in a checked folder).")
@click.option(
    "--exclude-versions", is_flag=True,
    help=f"Also leave out its versions: its group in 'coderiv groups --min {VERSIONS_MIN_PERCENT:g} --mutual' (needs 'coderiv pairs').",
)
@index_option
@analysis_options
@query_markup_option
@click.option("--format", "fmt", type=click.Choice(QUERY_FORMATS), default="table", show_default=True,
              help="jsonl: one JSON object per query and line, written as each is ranked.")
@quiet_option
@click.option(
    "--dask", "dask_address", default=None, metavar="ADDRESS",
    help="Sharded index: score the shards on the workers of this Dask scheduler (tcp://host:8786; they keep them open).",
)
@click.option("--verify", is_flag=True,
    help="Re-check the matches with exact passages (matching statistics): passages and a verified percentage."
)
@friendly_errors
def query_command(
    files: tuple[str, ...], doc_ids: tuple[str, ...], measure: str, top: int | None, min_percent: float | None,
    method: str, strategy: str | None, full_query: bool, exclude_self: bool, exclude_versions: bool, index_dir: Path,
    stop: bool | None, stem: bool | None, language: str | None, markup: Markup | None, fmt: str,
    dask_address: str | None = None, quiet: bool = False, verify: bool = False,
) -> None:
    """Rank the collection against each query document: FILES ('-' for stdin), every document
    of a FOLDER or tar archive, files matching a glob pattern ('subs/**/*.md'), or --doc ID.

    Every score is an absolute percentage: the query scored against itself is 100%. Several
    queries are ranked in one process and end with a summary (document, best match, its
    percentage). With --verify each match also gets the exact passages it shares with the query
    and the share of the query they cover (a term-statistics or hash false match falls to 0%).
    """
    from coderiv.ranking.searchers import QueryOptions, dask_fanout, open_for_method, searcher_for

    if not files and not doc_ids:
        raise CoderivError("give a query file, a folder or archive of them, '-' for standard input, or --doc ID")
    explain = not verify and _wants_explainer(method, files, doc_ids, fmt)
    with contextlib.ExitStack() as stack:
        with progress_bar(quiet, "indexing") as bar:  # adding a store re-reads the whole source
            if explain:  # the chunk store first, so that one generation serves both searchers
                open_for_method(index_dir, "containment", announce=lambda line: click.echo(line, err=True), progress=bar,
                                markup=markup)
            index = open_for_method(  # queries are read as the index read its documents (another --markup is refused)
                index_dir, method, announce=lambda line: click.echo(line, err=True), progress=bar, markup=markup
            )
        fanout = None
        if dask_address is not None:
            from coderiv.system.cluster import dask_client

            fanout = dask_fanout(index, lambda: stack.enter_context(dask_client(dask_address)))
        options = QueryOptions(measure, strategy, full_query, settings_from(stop, stem, language, index.settings), fanout)
        searcher = searcher_for(index, method, options)
        # the containment search takes the query's analysis and fan-out, not a fingerprint's options
        explainer = searcher_for(index, "containment", replace(options, strategy=None, full_query=False)) if explain else None
        _run_queries(index, searcher, files, doc_ids, top, min_percent, exclude_self, exclude_versions, fmt, quiet, verify,
                     explainer)


def _run_queries(
    index: IndexReader, searcher: DocumentSearcher[Any], files: tuple[str, ...], doc_ids: tuple[str, ...], top: int | None,
    min_percent: float | None, exclude_self: bool, exclude_versions: bool, fmt: str, quiet: bool, verify: bool,
    explainer: DocumentSearcher[Any] | None = None,
) -> None:
    """Rank every query with ``searcher`` and print the lists as they come (``explainer``: the
    search naming each query's best match, see :func:`coderiv.ranking.batch.check_batch`)."""
    from coderiv.ranking.batch import Limits, query_documents

    versions = None
    if exclude_versions:
        from coderiv.pairs.groups import version_sets
        from coderiv.pairs.table import PairTable

        # a sharded index's pair table is its one-index view's (docs/shards.md, "Pairs")
        versions = version_sets(PairTable.open(index.pairs_index(), "chunks"))
    limits = Limits.from_options(top, min_percent)
    with progress_bar(quiet, "queries") as bar:
        items = query_documents(
            index, searcher, list(files), list(doc_ids), limits, exclude_self or exclude_versions, versions, bar, explainer
        )
        if verify:
            _print_verified(list(items), fmt, index, bar)
        else:
            _print_items(items, fmt, searcher.unit, bar.echo)


Echo = Callable[..., None]

#: Methods whose percentage is already a share of the query a document holds: their ranked
#: list's top is the best match as it is.
SHARE_METHODS = ("containment",)


def _wants_explainer(method: str, files: tuple[str, ...], doc_ids: tuple[str, ...], fmt: str) -> bool:
    """Whether a batch's summary or JSON lines name a best match by the containment search,
    the document holding the most of each query (issue 43): for several queries, in a table or
    JSON lines, unless the method already measures that share."""
    from coderiv.text.reading import is_batch

    if fmt not in ("table", "jsonl") or method in SHARE_METHODS:
        return False
    return is_batch(list(files)) or len(files) + len(doc_ids) > 1


def _warn(item: BatchItem, echo: Echo) -> None:
    """What reading the query found, on standard error (as read_query_reporting says it)."""
    if item.document is not None and item.document.note:
        echo(f"note: {printable(item.label)}: {item.document.note}", err=True)
    if item.document is not None and item.document.lossy:
        echo(f"warning: {printable(item.label)}: undecodable bytes replaced (not valid UTF-8)", err=True)
    if item.skipped is not None:
        echo(f"skipped {printable(item.label)}: {printable(item.skipped)}", err=True)


def _print_items(items: Iterable[BatchItem], fmt: str, unit: str, echo: Echo) -> None:
    """Each ranked list as it comes (table, jsonl, tsv) or all at the end (json); after several
    queries, a table of each one's best match. ``echo`` prints around the progress bar."""
    done: list[BatchItem] = []
    for n, item in enumerate(items):
        _warn(item, echo)
        done.append(replace(item, document=None))  # the summary needs no text
        if fmt == "jsonl":
            echo(json_line(item.to_dict()))
        elif fmt == "tsv":
            if n == 0:
                echo(tsv(TSV_HEADERS, []))
            if item.result is not None:
                rows = [[item.label, m.rank, f"{m.percent:.4f}", f"{m.score:.6g}", m.doc_id] for m in item.result.matches]
                if rows:
                    echo(tsv(TSV_HEADERS, rows).split("\n", 1)[1])
        elif fmt == "table" and item.result is not None:
            if n:
                echo()
            _print_table(item, unit, echo)
    if fmt == "json":
        echo(to_json([_json_record(item) for item in done]))
    elif fmt == "table" and len(done) > 1:
        echo()
        _print_summary(done, echo)


TSV_HEADERS = ["query", "rank", "percent", "score", "doc_id"]


def _json_record(item: BatchItem) -> dict[str, Any]:
    record: dict[str, Any] = item.result.to_dict() if item.result is not None else {"query": item.label, "matches": []}
    record.update(own_document=item.own, excluded=list(item.excluded), skipped=item.skipped)
    return record


def _print_table(item: BatchItem, unit: str, echo: Echo) -> None:
    result = item.result
    assert result is not None
    echo(
        f"{printable(result.query)}: {result.measure}, {result.matched_terms} of {result.query_terms} distinct "
        f"{unit} in the collection, self-score {result.self_score:.6g} = 100%"
    )
    if item.excluded:
        echo(f"excluded: {printable(', '.join(item.excluded))}")
    if result.note:
        echo(f"note: {result.note}")
    rows = [[m.rank, fmt_percent(m.percent), f"{m.score:.6g}", m.doc_id] for m in result.matches]
    echo(table(TSV_HEADERS[1:], rows, align=">>><"))
    over = over_100_note([m.percent for m in result.matches], [over_100_reason(result.measure)])
    if over:
        echo(over)


def _print_summary(items: list[BatchItem], echo: Echo) -> None:
    """One row per query: its best match (after exclusions: the document holding the most of
    it, when the batch had an explainer) with that document's percentage by each measure, the
    columns named by their measures."""
    rows, skipped = [], 0
    explainer = next((i.explainer for i in items if i.explainer is not None), None)
    measure = next((i.result.measure for i in items if i.result is not None), "percent")
    whole: list[float] = []
    for item in items:
        if item.result is None:
            skipped += 1
            continue
        source = item.best_source
        if source is None:
            rows.append([item.label, "-", "-"] + (["-"] if explainer else []))
            continue
        doc_id, percent, whole_percent = source
        if explainer is None:
            rows.append([item.label, doc_id, fmt_percent(percent)])
            whole.append(percent)
        elif item.explained is None:  # no document shares a chunk with it: the ranked list's top
            rows.append([item.label, doc_id, fmt_percent(0.0), fmt_percent(percent)])
            whole.append(percent)
        else:
            rows.append([item.label, doc_id, fmt_percent(percent), fmt_percent(whole_percent or 0.0)])
            whole.append(whole_percent or 0.0)
    checked = len(items) - skipped
    echo(f"summary: {checked} documents checked" + (f", {skipped} skipped" if skipped else ""))
    if explainer is None:
        echo(table(["query", "best match", measure], rows, align="<<>"))
    else:
        echo(table(["query", "best match (most of the query in it)", explainer, measure], rows, align="<<>>"))
        echo(f"{explainer}: share of the query's 5-word chunks in the document; "
             f"{measure}: the whole-document measure of the ranked lists")
    over = over_100_note(whole, [over_100_reason(i.result.measure) for i in items if i.result is not None])
    if over:
        echo(over)


def _print_verified(items: list[BatchItem], fmt: str, index: IndexReader, bar: TerminalBar) -> None:
    from coderiv.cli.overlap import print_verified
    from coderiv.overlap.verify import verify_results

    for item in items:
        _warn(item, bar.echo)
    bar.close()  # the ranking is done; verification prints everything at the end
    ranked = [i for i in items if i.result is not None]
    results = [i.result for i in ranked if i.result is not None]
    texts = [None if i.document is None else i.document.text for i in ranked]
    print_verified(verify_results(results, texts, index.source_texts()), "json" if fmt == "jsonl" else fmt)


COMMANDS = [query_command]
