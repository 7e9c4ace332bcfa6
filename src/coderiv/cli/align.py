"""``coderiv align``: PAN's text-alignment interface (one detection XML per pair of a pairs
file), and the report of ``coderiv evaluate --pan`` (issue 24)."""

from __future__ import annotations

from pathlib import Path

import click

from coderiv.cli.options import friendly_errors, progress_bar, quiet_option

_DIR = click.Path(exists=True, file_okay=False, path_type=Path)


@click.command("align")
@click.option("--pairs", "pairs_file", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="PAN's pairs file: 'SUSPICIOUS SOURCE' a line, names relative to --susp and --src.")
@click.option("--susp", "susp_dir", required=True, type=_DIR, help="Folder of the suspicious documents.")
@click.option("--src", "src_dir", required=True, type=_DIR, help="Folder of the source documents.")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder for the detections (created): one PAN XML per pair.")
@quiet_option
@friendly_errors
def align_command(pairs_file: Path, susp_dir: Path, src_dir: Path, out_dir: Path, quiet: bool) -> None:
    """Align every pair of PAIRS and write suspicious-documentX-source-documentY.xml per pair,
    with offsets in characters of the raw UTF-8 files (docs/alignment.md)."""
    from coderiv.overlap.align.pan import align_pairs
    from coderiv.overlap.align.pan_format import read_pairs

    count = len(read_pairs(pairs_file))
    with progress_bar(quiet, "align") as bar:
        bar.start(count, "pairs")
        found = align_pairs(pairs_file, susp_dir, src_dir, out_dir, advance=bar.advance)
    click.echo(f"{count} pairs, {found} detections written to {out_dir}", err=True)


def pan_report(truth_dir: Path, detections_dir: Path, fmt: str) -> None:
    """``coderiv evaluate --pan TRUTH_DIR DETECTIONS_DIR``: PAN's micro-averaged precision,
    recall, granularity and plagdet, overall and per obfuscation type, as a table, JSON or TSV."""
    from coderiv.evaluation.pan import PAN_HEADERS, evaluate_folders, evaluation_rows, evaluation_table
    from coderiv.output import to_json, tsv

    result = evaluate_folders(truth_dir, detections_dir)
    if fmt == "json":
        click.echo(to_json(result.to_dict()))
    elif fmt == "tsv":
        click.echo(tsv(PAN_HEADERS, evaluation_rows(result)))
    else:
        click.echo(evaluation_table(result))


#: Registered by cli/main.py; ``evaluate --pan`` calls :func:`pan_report`.
COMMANDS = (align_command,)
