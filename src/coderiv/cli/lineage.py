"""``coderiv lineage``: which version of a group came first and which derives from which."""

from __future__ import annotations

from pathlib import Path

import click

from coderiv.cli.options import friendly_errors, index_option
from coderiv.pairs.lineage import DEFAULT_MIN_PERCENT


@click.command("lineage")
@click.argument("doc_id", required=False)
@click.option("--group", "group", type=click.IntRange(1), default=None, help="The group numbered N by 'coderiv groups'.")
@click.option("--all", "everything", is_flag=True, help="Every group.")
@click.option("--dates", "dates_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="TSV of doc_id and ISO date: a parent is then always an earlier document.")
@click.option("--file-times", is_flag=True,
              help="Use the file modification times recorded at indexing as dates (a --dates file wins over them).")
@click.option("--document-dates", is_flag=True,
              help="Use the creation dates written inside DOCX, ODT and PDF files (re-reads them; --dates wins).")
@click.option("--min", "min_percent", type=float, default=DEFAULT_MIN_PERCENT, show_default=True,
              help="Groups link documents similar at PERCENT or more (as 'coderiv groups --min').")
@click.option("--mutual/--one-way", default=True, show_default=True,
              help="Groups link only when both directions reach --min (as 'coderiv groups'), or when either does.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "dot"]), default="text", show_default=True)
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also draw the trees as a PNG (needs coderiv[plot]).")
@index_option
@friendly_errors
def lineage_command(
    doc_id: str | None, group: int | None, everything: bool, dates_file: Path | None, file_times: bool,
    document_dates: bool, min_percent: float, mutual: bool, fmt: str, plot_file: Path | None, index_dir: Path,
) -> None:
    """The derivation tree of DOC_ID's group (or --group N, or --all): each document's most likely
    parent, the evidence (chunk containment both ways, words added and removed) and a confidence.

    Needs the chunks pair table ('coderiv pairs'). A parent is an earlier document when both have
    dates (--dates; with --document-dates the creation dates inside DOCX/ODT/PDF files; with
    --file-times the modification times recorded at indexing); otherwise the order is inferred
    from the text alone: a guess, said so, with a confidence measured on releases of known order
    (docs/lineage.md); same texts are ties.
    """
    from coderiv.index.index import Index
    from coderiv.pairs.dates import read_dates_file
    from coderiv.pairs.lineage import index_lineages
    from coderiv.pairs.lineage_output import lineage_dot, lineage_json, lineage_text, plot_lineages

    index = Index.open(index_dir)
    dates = read_dates_file(dates_file) if dates_file is not None else None
    if dates:
        unknown = [d for d in dates if d not in index.doc_numbers]
        if unknown:
            click.echo(f"warning: the dates file names {len(unknown)} documents not in the index, e.g. {unknown[0]}", err=True)
    if file_times and index.doc_modified is None:
        click.echo("warning: this index records no modification times (built before coderiv recorded them); "
                   "build it again in a new --index folder to record them", err=True)
    lineages = index_lineages(
        index, doc_id, group, everything, min_percent, mutual, dates, file_times, inside_dates=document_dates
    )
    render = {"text": lineage_text, "json": lineage_json, "dot": lineage_dot}[fmt]
    click.echo(render(lineages))
    if plot_file is not None:
        plot_lineages(lineages, plot_file)
        click.echo(f"wrote {plot_file}", err=True)


COMMANDS = (lineage_command,)
