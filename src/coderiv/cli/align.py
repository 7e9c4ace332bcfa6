"""``coderiv align``: PAN's text-alignment interface (one detection XML per pair of a pairs
file), and the PAN evaluation command to attach as ``coderiv evaluate --pan`` (issue 24)."""

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
    from coderiv.overlap.pan_align import align_pairs
    from coderiv.overlap.pan_format import read_pairs

    count = len(read_pairs(pairs_file))
    with progress_bar(quiet, "align") as bar:
        bar.start(count, "pairs")
        found = align_pairs(pairs_file, susp_dir, src_dir, out_dir, advance=bar.advance)
    click.echo(f"{count} pairs, {found} detections written to {out_dir}", err=True)


@click.command("evaluate-pan")
@click.argument("truth_dir", type=_DIR)
@click.argument("detections_dir", type=_DIR)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@friendly_errors
def evaluate_pan_command(truth_dir: Path, detections_dir: Path, fmt: str) -> None:
    """PAN's micro-averaged precision, recall, granularity and plagdet of DETECTIONS_DIR's XMLs
    against TRUTH_DIR's, overall and per obfuscation type."""
    from coderiv.evaluation.pan import evaluate_folders, evaluation_table
    from coderiv.output import to_json

    result = evaluate_folders(truth_dir, detections_dir)
    click.echo(to_json(result.to_dict()) if fmt == "json" else evaluation_table(result))


#: Registered by cli/main.py. ``evaluate_pan_command`` is attached as ``evaluate --pan`` once the
#: evaluate command's refactor lands (issue 23).
COMMANDS = (align_command,)
