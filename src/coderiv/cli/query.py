"""``coderiv query``: rank the collection against whole documents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from coderiv.cli.options import (
    analysis_options,
    format_option,
    friendly_errors,
    index_option,
    read_query_reporting,
    settings_from,
)
from coderiv.errors import CoderivError
from coderiv.output import fmt_percent, printable, table, to_json, tsv
from coderiv.ranking.measures import DEFAULT_MEASURE, MEASURES
from coderiv.ranking.searchers import DEFAULT_QUERY_METHOD, QUERY_METHODS


@click.command("query")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--doc", "doc_ids", multiple=True, help="Use a document of the index as the query (repeatable).")
@click.option("--measure", "-m", type=click.Choice(MEASURES.names()), default=DEFAULT_MEASURE, show_default=True)
@click.option("--top", "-k", type=click.IntRange(1), default=10, show_default=True, help="How many results.")
@click.option("--min-percent", type=click.FloatRange(0), default=0.0, help="Only documents at or above this percentage (also much faster).")
@click.option("--method", type=click.Choice(QUERY_METHODS.names()), default=DEFAULT_QUERY_METHOD, show_default=True)
@click.option("--strategy", default=None, help="Fingerprint store: STRATEGY[:g=G,...] (needed if there are several).")
@click.option("--full-query", is_flag=True, help="Fingerprint the query with every phrase (full strategy).")
@index_option
@analysis_options
@format_option
@click.option("--verify", is_flag=True,
    help="Re-check the matches with exact passages (matching statistics): passages and a verified percentage."
)
@friendly_errors
def query_command(
    files: tuple[str, ...], doc_ids: tuple[str, ...], measure: str, top: int, min_percent: float, method: str,
    strategy: str | None, full_query: bool, index_dir: Path,
    stop: bool | None, stem: bool | None, language: str | None, fmt: str, verify: bool = False,
) -> None:
    """Rank the collection against each query document (FILES, '-' for stdin, or --doc ID).

    Every score is an absolute percentage: the query scored against itself is 100%. With
    --verify each match also gets the exact passages it shares with the query and the share
    of the query they cover (a term-statistics or hash false match falls to 0%).
    """
    from coderiv.index.index import Index
    from coderiv.ranking.searchers import QueryOptions, make_searcher, rank_queries

    if not files and not doc_ids:
        raise CoderivError("give a query file, '-' for standard input, or --doc ID")
    index = Index.open(index_dir)
    options = QueryOptions(measure, strategy, full_query, settings_from(stop, stem, language, index.settings))
    searcher = make_searcher(index, method, options)
    documents = [read_query_reporting(path) for path in files]
    texts = [(d.label, d.text) for d in documents]
    results = rank_queries(index, searcher, texts, list(doc_ids), top, min_percent)
    if not verify:
        _print_results(results, fmt, searcher.unit)
        return
    from coderiv.cli.overlap import print_verified
    from coderiv.overlap.verify import verify_results

    query_texts = dict(texts)
    print_verified(verify_results(results, [query_texts.get(r.query) for r in results], index.source_texts()), fmt)


def _print_results(results: list[Any], fmt: str, unit: str) -> None:
    if fmt == "json":
        click.echo(to_json([r.to_dict() for r in results]))
        return
    headers = ["query", "rank", "percent", "score", "doc_id"]
    if fmt == "tsv":
        rows = [[r.query, m.rank, f"{m.percent:.4f}", f"{m.score:.6g}", m.doc_id] for r in results for m in r.matches]
        click.echo(tsv(headers, rows))
        return
    for n, result in enumerate(results):
        if n:
            click.echo()
        click.echo(
            f"{printable(result.query)}: {result.measure}, {result.matched_terms} of {result.query_terms} distinct "
            f"{unit} in the collection, "
            f"self-score {result.self_score:.6g} = 100%"
        )
        if result.note:
            click.echo(f"note: {result.note}")
        rows = [[m.rank, fmt_percent(m.percent), f"{m.score:.6g}", m.doc_id] for m in result.matches]
        click.echo(table(headers[1:], rows, align=">>><"))



COMMANDS = [query_command]
