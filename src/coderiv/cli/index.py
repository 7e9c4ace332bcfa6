"""``coderiv index`` and ``coderiv info``: building, updating and inspecting an index."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from coderiv.cli.options import (
    analysis_options,
    format_option,
    friendly_errors,
    index_option,
    markup_option,
    progress_bar,
    quiet_option,
)
from coderiv.errors import CoderivError
from coderiv.output import printable, table, to_json, tsv
from coderiv.text.extract import Markup


class SourceParam(click.Path):
    """A folder or archive that must exist, or an fsspec URL (read as it is given: by this
    process, or by each Dask worker of a sharded build)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from coderiv.text.remote import is_url

        return value if is_url(value) else super().convert(value, param, ctx)


@click.command("index")
@click.argument("source", type=SourceParam(exists=True, path_type=Path))
@index_option
@analysis_options
@click.option("--workers", type=click.IntRange(1), default=None, help="Analysis processes (default: all cores).")
@click.option(
    "--fingerprint", "fingerprints", multiple=True, metavar="STRATEGY[:g=G,r=R,...]",
    help="Also keep a fingerprint store, e.g. anchor:g=4 or first-r-sliding:g=4,r=15 (repeatable).",
)
@click.option(
    "--report-ready", is_flag=True,
    help="Also build the chunk store that report, containment and pairs read, in the same pass "
         "(kept by later updates; otherwise their first use reads the collection again).",
)
@click.option(
    "--rebuild", "--yes", "rebuild", is_flag=True,
    help="Go ahead with a full rebuild of a large index (changed analysis settings or added stores).",
)
@click.option(
    "--hidden/--no-hidden", default=None,
    help="Also index hidden files and folders (a leading '.'); kept by later updates. Default: skipped.",
)
@click.option(
    "--follow-symlinks/--no-follow-symlinks", default=None,
    help="Follow symlinks leading outside SOURCE (default: reported, not followed); kept by later updates.",
)
@markup_option(
    "How .rst and .md files are read: render (their visible text; default) or text (their source as plain text, "
    "markup included: many times faster to index). Recorded in the index, kept by later updates, taken by every "
    "query of it; changing it rebuilds the index (docs/formats.md)."
)
@click.option("--shards", type=click.IntRange(1), default=None, help="Build a sharded index of K shards (see docs/shards.md).")
@click.option("--dask", "dask_address", default=None, metavar="ADDRESS",
    help="With --shards: write the shards on Dask workers ('local' or tcp://host:port).")
@quiet_option
@friendly_errors
def index_command(
    source: Path | str, index_dir: Path, stop: bool | None, stem: bool | None, language: str | None,
    workers: int | None, fingerprints: tuple[str, ...], report_ready: bool, rebuild: bool,
    hidden: bool | None, follow_symlinks: bool | None, markup: Markup | None, shards: int | None, dask_address: str | None,
    quiet: bool,
) -> None:
    """Build the index of SOURCE (a folder or a tar/tar.gz, a path or an fsspec URL such as
    s3://bucket/prefix with coderiv[remote]), or bring it up to date.

    Only added or changed files are analysed again; deleted ones are dropped. An analysis flag
    not given keeps the index's setting; a change of settings (or a new fingerprint store)
    rebuilds the whole index, which is said first, and for a large index needs --rebuild.
    With --shards K the index is K shards (docs/shards.md); a later run (with or without
    --shards K) updates only what changed in each shard. With --report-ready the one reading
    of SOURCE also writes the chunk store (docs/report.md), so that the first report,
    containment query or chunk pairs do not read SOURCE again.
    """
    from coderiv.index.builder.entrance import build_index
    from coderiv.index.builder.sharded import ShardedReport
    from coderiv.keys.fingerprint import parse_fingerprint

    stores = [parse_fingerprint(f) for f in fingerprints]
    if report_ready:
        from coderiv.ranking.containment import chunk_store_spec

        stores.append(chunk_store_spec())
    with progress_bar(quiet, "indexing") as bar:
        report = build_index(
            source, index_dir, stop=stop, stem=stem, language=language, stores=stores or None, workers=workers,
            shards=shards, dask_address=dask_address, hidden=hidden, follow_symlinks=follow_symlinks, markup=markup,
            rebuild=rebuild, progress=bar, announce=lambda line: click.echo(line, err=True),
        )
    if isinstance(report, ShardedReport):
        click.echo(f"{report.n_docs} documents in {index_dir}, {report.shards} shards: {report.shard_documents}"
                   f"{terms_only_note(index_dir)}")
        if report.updated:
            click.echo(f"  updated: added {report.added}, changed {report.changed}, removed {report.removed}, "
                       f"unchanged {report.unchanged}")
        for skipped in report.skipped:
            click.echo(f"skipped {printable(skipped.doc_id)}: {printable(skipped.reason)}", err=True)
        return
    click.echo(
        f"{report.n_docs} documents in {index_dir} "
        f"(added {len(report.added)}, changed {len(report.changed)}, removed {len(report.removed)}, "
        f"unchanged {report.unchanged}){terms_only_note(index_dir)}"
    )
    for fmt, (read, reasons) in report.by_format().items():
        why = "".join(f", {n} {reason}" for reason, n in reasons.items())
        click.echo(f"  {fmt}: {read} read, {sum(reasons.values())} skipped{why}")
    for skipped in report.skipped:
        click.echo(f"skipped {printable(skipped.doc_id)}: {printable(skipped.reason)}", err=True)
    for doc_id, note in report.notes:
        click.echo(f"note: {printable(doc_id)}: {printable(note)}", err=True)
    for doc_id in report.escaped:
        click.echo(f"warning: {printable(doc_id)}: file name is not UTF-8; its bad bytes are spelled \\xNN in the id", err=True)
    for doc_id in report.lossy:
        click.echo(f"warning: {printable(doc_id)}: undecodable bytes replaced (not valid UTF-8)", err=True)


def terms_only_note(index_dir: Path) -> str:
    """The summary line's tail for an index without the chunk store: its first report,
    containment query or chunk pairs will read the collection again, which ``--report-ready``
    avoids (issue 43)."""
    from coderiv.index.reader import open_index

    specs = open_index(index_dir).specs
    if any(spec.kind == "chunks" for spec in specs.values()):
        return ""
    return "; terms only: the first report reads the collection again (index with --report-ready to avoid it)"


@click.command("info")
@index_option
@click.option(
    "--checksums", "--verify", "verify", is_flag=True,
    help="Check every byte of every file against its checksums (--verify is the older name).",
)
@format_option
@friendly_errors
def info_command(index_dir: Path, verify: bool, fmt: str) -> None:
    """Statistics and settings of the index."""
    from coderiv.index.reader import open_index
    from coderiv.pairs.table import describe_table, tables_info

    index = open_index(index_dir)
    info = index.info()
    pairs = index.stored_pairs_index()
    if pairs is not None:
        info["pair_tables"] = tables_info(pairs)
    if verify:
        problems = index.verify()
        info["verified"] = not problems
        if problems:
            raise CoderivError(f"index at {index_dir} is damaged: {'; '.join(problems)}")
    if fmt == "json":
        click.echo(to_json(info))
        return
    rows: list[list[Any]] = []
    for key, value in info.items():
        if key == "stores":
            for name, meta in value.items():
                rows.append([f"store {name}", f"{meta['keys']} keys, {meta['postings']} postings"])
        elif key == "skipped":
            rows.append(["skipped", len(value)])
        elif key == "pair_tables":
            rows.extend([f"pairs {t['method']}", describe_table(t)] for t in value)
        else:
            rows.append([key, value])
    if info.get("source_bytes"):
        rows.append(["index / source", f"{100 * info['index_bytes'] / info['source_bytes']:.1f}%"])
    if fmt == "tsv":
        click.echo(tsv(["key", "value"], rows))
    else:
        click.echo(table(["key", "value"], rows))
        for s in info.get("skipped", []):
            click.echo(f"  skipped {printable(s['doc_id'])}: {printable(s['reason'])}")



COMMANDS = [index_command, info_command]
