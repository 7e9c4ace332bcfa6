"""``coderiv evaluate``: SPEC §4's effectiveness metrics for registered methods over an index
(or for TREC run files), as a table, JSON or TSV, with optional run files and a plot.

The command is three steps other commands can extend: collect :class:`MethodResult` objects
(:func:`collect_results`), report them (:func:`print_results`), write the extras (runs, plot).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from coderiv.cli.options import format_option, friendly_errors, index_option, progress_bar, quiet_option
from coderiv.errors import CoderivError
from coderiv.evaluation.evaluate import (
    MethodResult,
    Topics,
    evaluate_run,
    read_run,
    run_coverage_warning,
    write_qrels,
    write_run,
)
from coderiv.evaluation.methods import METHOD_GROUPS, expand_methods
from coderiv.output import above_100, fmt_percent, over_100_note, table, to_json, tsv
from coderiv.ranking.measures import DEFAULT_MEASURE, over_100_reason

SUMMARY_HEADERS = ["method", "queries", "P(s)", "R(20)", "HFM", "Sep.", "Sep./HFM"]
QUERY_HEADERS = ["method", "query", "s", "returned", "P(s)", "R(20)", "HFM", "lowest rel.", "Sep."]
#: One line per column under a table (SPEC §4), so that the figures can be read without the docs.
LEGEND = {
    "s": "s: the query's relevant documents (its other versions)",
    "returned": "returned: documents ranked above 0%",
    "P(s)": "P(s): share of the top s that are relevant (R-precision)",
    "R(20)": "R(20): share of the relevant documents in the top 20",
    "HFM": "HFM: highest false match, the highest percentage of a non-relevant document",
    "lowest rel.": "lowest rel.: the lowest percentage of a relevant document",
    "Sep.": "Sep.: separation, lowest relevant percentage - HFM (negative: they interleave)",
    "Sep./HFM": "Sep./HFM: mean Sep. / mean HFM (higher is better)",
}


def collect_results(
    index_dir: Path, methods: str, analysis: str | None, topics: Topics, keep_rankings: bool, quiet: bool,
) -> list[MethodResult]:
    """Evaluate every method (× every analysis variant, if asked) over the index, with a
    progress bar for each variant index built."""
    from coderiv.evaluation.variants import evaluate_variants, expand_variants
    from coderiv.index.reader import open_index

    bars: list[Any] = []

    def progress(stage: str) -> Any:
        if bars:
            bars[-1].close()  # one bar per stage, each finished before the next begins
        bars.append(progress_bar(quiet, stage))
        return bars[-1]

    variants: list[str | None] = list(expand_variants(analysis)) if analysis else [None]
    try:
        return evaluate_variants(
            open_index(index_dir), expand_methods(methods), variants, topics, keep_rankings, progress,
            lambda warning: click.echo(f"warning: {warning}", err=True),
        )
    finally:
        for bar in bars:
            bar.close()


def print_results(results: list[MethodResult], fmt: str, per_query: bool) -> None:
    """The averages (one row per method) or, with ``per_query``, one row per query."""
    if fmt == "json":
        click.echo(to_json([r.to_dict(per_query) for r in results]))
        return
    if per_query:
        rows: list[list[Any]] = [
            [r.method, q.query_id, q.relevant, q.returned, f"{q.precision:.2f}", f"{q.recall:.2f}",
             _pct(q.hfm, fmt), _pct(q.lowest_relevant, fmt), _pct(q.sep, fmt)]
            for r in results for q in r.queries
        ]
        headers, align = QUERY_HEADERS, "<<>>>>>>>"
    else:
        rows = [
            [r.method, len(r.queries), f"{r.precision:.2f}", f"{r.recall:.2f}", _pct(r.hfm, fmt), _pct(r.sep, fmt),
             "n/a" if r.ratio is None else f"{r.ratio:.2f}"]
            for r in results
        ]
        headers, align = SUMMARY_HEADERS, "<>>>>>>"
    if fmt == "tsv":
        click.echo(tsv(headers, rows))
        return
    click.echo(table(headers, rows, align=align))
    for header in headers:
        if header in LEGEND:
            click.echo(LEGEND[header])
    over = over_100_note(*_marked(results, per_query), digits=2)
    if over:
        click.echo(over)


def _marked(results: list[MethodResult], per_query: bool) -> tuple[list[float], list[str]]:
    """The percentages the table prints (HFM, Sep., per query also the lowest relevant) of the
    methods with one above 100%, and those methods' reasons: the note under the table explains
    only marks that a figure carries."""
    values: list[float] = []
    reasons: list[str] = []
    for r in results:
        shown = [v for q in (r.queries if per_query else [r]) for v in (q.hfm, q.sep)]
        if per_query:
            shown += [q.lowest_relevant for q in r.queries]
        if any(above_100(v, 2) for v in shown):
            values += shown
            reasons.append(over_100_reason(r.method))
    return values, reasons


def _pct(value: float, fmt: str) -> str:
    return f"{value:.4f}" if fmt == "tsv" else fmt_percent(value, 2)


def _file_name(label: str) -> str:
    return label.replace("/", "_") + ".run"


@click.command("evaluate")
@click.option("--queries", type=click.Path(exists=True, dir_okay=False, path_type=Path), help="query_id<TAB>doc_id lines (queries.tsv).")
@click.option("--qrels", type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Relevance: 'qid docid rel' or TREC 'qid 0 docid rel'."
)
@click.option(
    "--measure", "--method", "-m", "methods", default=None, show_default=DEFAULT_MEASURE,
    help=f"Comma-separated methods (ranking measures, registered methods) or a group ({', '.join(sorted(METHOD_GROUPS))}).",
)
@click.option(
    "--analysis", default=None,
    help="Evaluate with analysis variants: none, stop, stem, stop+stem (comma-separated) or all; "
    "variant indexes are kept under INDEX/variants/ and updated as needed.",
)
@click.option("--per-query", is_flag=True, help="One row per query instead of averages (with --plagiarism: per case and donor).")
@click.option("--runs", "runs_dir", type=click.Path(file_okay=False, path_type=Path),
    help="Write a TREC run per method (and qrels.trec) into this folder."
)
@click.option("--from-run", "run_files", multiple=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Evaluate a TREC run file instead of a method (repeatable; no index needed)."
)
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False, path_type=Path),
    help="Draw per-query relevant percentages and HFM into this PNG."
)
@click.option("--plagiarism", type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Instead: plagiarism cases (JSONL, SPEC §9); mean |expected - obtained| per overlap method."
)
@click.option("--collection", type=click.Path(exists=True, path_type=Path),
    help="With --plagiarism: where the donors are (default: the index's source)."
)
@click.option("--pan", "pan_dirs", nargs=2, type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
    metavar="TRUTH_DIR DETECTIONS_DIR", help="Instead: PAN's text-alignment measures of detection XMLs (docs/alignment.md)."
)
@index_option
@format_option
@quiet_option
@friendly_errors
def evaluate_command(
    queries: Path | None, qrels: Path | None, methods: str | None, analysis: str | None, per_query: bool,
    runs_dir: Path | None, run_files: tuple[Path, ...], plot_file: Path | None, index_dir: Path, fmt: str, quiet: bool,
    plagiarism: Path | None = None, collection: Path | None = None, pan_dirs: tuple[Path, Path] | None = None,
) -> None:
    """Measure how well methods separate each query's coderivatives from everything else.

    Each query is a document of the index; every document of the collection is ranked by its
    percentage of the query's self-score. Reports P(s), R(20), the highest false match (HFM),
    separation (lowest relevant − HFM) and mean Sep. / mean HFM (SPEC §4).
    """
    if pan_dirs:
        from coderiv.cli.align import pan_report

        pan_report(*pan_dirs, fmt)
        return
    if plagiarism is not None:
        from coderiv.cli.overlap import plagiarism_report

        plagiarism_report(
            plagiarism, collection, index_dir, methods if methods != DEFAULT_MEASURE else None, fmt, per_query, quiet
        )
        return
    if queries is None or qrels is None:
        raise CoderivError("give --queries FILE and --qrels FILE")
    topics = Topics.read(queries, qrels)
    for warning in topics.warnings:
        click.echo(f"warning: {warning}", err=True)
    if run_files:
        if methods or analysis or runs_dir:
            raise CoderivError("--from-run evaluates run files: it cannot be combined with --measure, --analysis or --runs")
        results = []
        for path in run_files:
            tag, run = read_run(path)
            coverage = run_coverage_warning(run, topics, tag)
            if coverage:
                click.echo(f"warning: {coverage}", err=True)
            results.append(evaluate_run(run, topics, tag))
    else:
        results = collect_results(index_dir, methods or DEFAULT_MEASURE, analysis, topics, runs_dir is not None, quiet)
    if runs_dir is not None:
        runs_dir.mkdir(parents=True, exist_ok=True)
        write_qrels(runs_dir / "qrels.trec", topics.qrels)
        for result in results:
            write_run(runs_dir / _file_name(result.method), result.rankings, result.method)
    print_results(results, fmt, per_query)
    if plot_file is not None:
        from coderiv.evaluation.plot import plot_separation

        plot_separation(results, plot_file)

COMMANDS = [evaluate_command]
