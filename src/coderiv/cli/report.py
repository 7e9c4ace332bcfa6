"""``coderiv report``: the evidence report of one document (HTML or JSON)."""

from __future__ import annotations

from pathlib import Path

import click

from coderiv.cli.options import (
    friendly_errors,
    index_markup,
    index_option,
    progress_bar,
    query_markup_option,
    quiet_option,
    read_query_reporting,
)
from coderiv.errors import CoderivError
from coderiv.output import fmt_percent, printable
from coderiv.ranking.measures import DEFAULT_MEASURE, MEASURES
from coderiv.text.extract import Markup

#: Sources listed on the terminal after the report is written (all are in the report).
SHOWN_SOURCES = 10


@click.command("report")
@click.argument("query_file", type=click.Path(dir_okay=False, allow_dash=True))
@index_option
@click.option("--top", "-k", type=click.IntRange(1), default=10, show_default=True,
              help="Candidates taken from the ranking --measure (containment adds every document sharing 2+ chunks, at most 200).")
@click.option("--measure", "-m", type=click.Choice(["none", *MEASURES.names()]), default=DEFAULT_MEASURE, show_default=True,
              help="Ranking measure adding its top candidates to the containment search's ('none': containment only).")
@click.option("--format", "fmt", type=click.Choice(["html", "json", "pan"]), default="html", show_default=True,
              help="pan: PAN's text-alignment XML, one feature per counted passage of every source (source_reference = its doc id).")
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the report to this file (default: standard output).")
@click.option("--quotes/--no-quotes", default=True, show_default=True, help="Exclude quoted text and block quotes.")
@click.option("--bibliography/--no-bibliography", default=True, show_default=True, help="Exclude the bibliography.")
@click.option("--min-words", type=click.IntRange(0), default=8, show_default=True,
              help="Exclude aligned passages of fewer counted words as small matches (0: keep every match).")
@click.option("--exclude-template", "templates", multiple=True, type=click.Path(dir_okay=False),
              help="A template (assignment sheet, thesis template) whose text is not counted (repeatable).")
@click.option("--exclude-common", type=click.IntRange(1), default=None,
              help="Exclude passages found in more than this many documents of the collection (boilerplate).")
@click.option("--exclude-doc", "exclude_docs", multiple=True, help="A document of the index never taken as a source (repeatable).")
@click.option("--min-chars", type=click.IntRange(1), default=20, show_default=True,
              help="Shortest passage of a --exclude-template, characters.")
@click.option("--versions/--no-versions", default=True, show_default=True, help="Group versions of one source.")
@query_markup_option
@quiet_option
@friendly_errors
def report_command(
    query_file: str, index_dir: Path, top: int, measure: str, fmt: str, out: Path | None, quotes: bool,
    bibliography: bool, min_words: int, templates: tuple[str, ...], exclude_common: int | None,
    exclude_docs: tuple[str, ...], min_chars: int, versions: bool, markup: Markup | None, quiet: bool,
) -> None:
    """The evidence report of QUERY_FILE ('-' for stdin): its overall similarity, the sources
    with the share of the query each explains (first), the passages side by side, and the
    whole-document ranking's percentage of each source (docs/report.md)."""
    from coderiv.report import ReportOptions, render_html, render_json
    from coderiv.report.build import report_document
    from coderiv.report.exclusions import read_template

    markup = index_markup(index_dir, markup)  # the query and templates read as the index read its documents
    query = read_query_reporting(query_file, markup)
    options = ReportOptions(
        top=top,
        measure=None if measure == "none" else measure,
        min_chars=min_chars,
        min_words=min_words,
        exclude_quotes=quotes,
        exclude_bibliography=bibliography,
        templates=tuple(read_template(path, markup) for path in templates),
        common_docs=exclude_common,
        group_versions=versions,
        exclude_docs=exclude_docs,
    )
    with progress_bar(quiet, "indexing") as bar:
        report = report_document(index_dir, query, options, lambda m: click.echo(m, err=True), bar)
    from coderiv.report.render_pan import render_pan

    rendered = render_html(report) if fmt == "html" else render_json(report) if fmt == "json" else render_pan(report)
    if out is None:
        click.echo(rendered)
        return
    try:
        out.write_text(rendered, "utf-8")
    except OSError as exc:
        raise CoderivError(f"cannot write {out}: {exc.strerror}") from None
    click.echo(
        f"{out}: {fmt_percent(report.overall)} of {report.label}'s {report.total_words} words found in "
        f"{len(report.sources)} source(s)", err=True,
    )
    for source in report.sources[:SHOWN_SOURCES]:  # the evidence first: the sources by share
        passages = [p for p in source.own_passages if p.excluded is None]
        verbatim = sum(1 for p in passages if p.match == "verbatim")
        click.echo(
            f"  {source.rank}. {fmt_percent(source.share)} {printable(source.doc_id)} "
            f"({len(passages)} passages, {verbatim} verbatim)", err=True,
        )
    if len(report.sources) > SHOWN_SOURCES:
        click.echo(f"  … {len(report.sources) - SHOWN_SOURCES} more sources in the report", err=True)
    if report.warning:
        click.echo(f"warning: {report.warning}", err=True)


COMMANDS = [report_command]
