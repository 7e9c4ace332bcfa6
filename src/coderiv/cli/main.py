"""The ``coderiv`` command: a thin click layer over the library (every command is one library
call plus printing). Errors coderiv raises on purpose become one line and exit status 1."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from coderiv.errors import CoderivError
from coderiv.cli.output import FORMATS, fmt_percent, table, to_json, tsv
from coderiv.ranking.measures import DEFAULT_MEASURE, MEASURES

F = TypeVar("F", bound=Callable[..., Any])


def friendly_errors(func: F) -> F:
    """Turn coderiv's own errors (and unreadable files) into a one-line message, exit 1."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except CoderivError as exc:
            raise click.ClickException(str(exc)) from None
        except MemoryError:
            raise click.ClickException("out of memory; try a smaller input") from None
        except KeyboardInterrupt:
            click.echo("interrupted: any index being written was left as it was before", err=True)
            sys.exit(130)

    return wrapper  # type: ignore[return-value]


index_option = click.option(
    "--index",
    "index_dir",
    envvar="CODERIV_INDEX",
    type=click.Path(file_okay=False, path_type=Path),
    default=".coderiv",
    show_default=True,
    help="Index folder (also $CODERIV_INDEX).",
)
format_option = click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
quiet_option = click.option("--quiet", "-q", is_flag=True, help="No progress bar.")


def analysis_options(func: F) -> F:
    """--stop/--no-stop, --stem/--no-stem, --language; unset means 'as the index says'."""
    func = click.option("--language", default=None, help="Snowball stemming language (default english).")(func)
    func = click.option("--stem/--no-stem", default=None, help="Snowball stemming (default off).")(func)
    func = click.option("--stop/--no-stop", default=None, help="Drop stopwords (default on).")(func)
    return func


def settings_from(stop: bool | None, stem: bool | None, language: str | None, base: Any = None) -> Any:
    """Analysis settings from CLI flags, unset flags taken from ``base`` (or the defaults)."""
    from coderiv.text.analysis import AnalysisSettings

    if stop is None and stem is None and language is None:
        return None
    base = base or AnalysisSettings()
    use_stem = base.stem if stem is None else stem
    if language is not None and stem is None:
        use_stem = True
    return AnalysisSettings(
        stop=base.stop if stop is None else stop,
        stem=use_stem,
        language=language or (base.language if use_stem else "english"),
    )


def progress_bar(quiet: bool, desc: str) -> Any:
    """A tqdm bar on stderr counting bytes; silent with --quiet or when not on a terminal."""
    from tqdm import tqdm

    return tqdm(desc=desc, unit="B", unit_scale=True, disable=quiet or not sys.stderr.isatty(), file=sys.stderr)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="coderiv")
def main() -> None:
    """Find the coderivatives of a document: its versions, revisions, mirrors and plagiarisms."""


@main.command("index")
@click.argument("source", type=click.Path(exists=True, path_type=Path))
@index_option
@analysis_options
@click.option("--workers", type=click.IntRange(1), default=None, help="Analysis processes (default: all cores).")
@click.option(
    "--fingerprint", "fingerprints", multiple=True, metavar="STRATEGY[:g=G,r=R,...]",
    help="Also keep a fingerprint store, e.g. anchor:g=4 or first-r-sliding:g=4,r=15 (repeatable).",
)
@quiet_option
@friendly_errors
def index_command(
    source: Path, index_dir: Path, stop: bool | None, stem: bool | None, language: str | None,
    workers: int | None, fingerprints: tuple[str, ...], quiet: bool,
) -> None:
    """Build the index of SOURCE (a folder or a tar/tar.gz), or bring it up to date.

    Only added or changed files are analysed again; deleted ones are dropped.
    """
    from coderiv.keys.fingerprint import parse_fingerprint
    from coderiv.index.index import Index

    settings = settings_from(stop, stem, language)
    stores = [parse_fingerprint(f) for f in fingerprints] or None
    with progress_bar(quiet, "indexing") as bar:
        report = Index.update_from(
            source, index_dir, settings=settings, stores=stores, workers=workers, progress=bar.update
        )
    if report.rebuilt:
        click.echo(f"full rebuild: {report.rebuilt}")
    click.echo(
        f"{report.n_docs} documents in {index_dir} "
        f"(added {len(report.added)}, changed {len(report.changed)}, removed {len(report.removed)}, "
        f"unchanged {report.unchanged})"
    )
    for skipped in report.skipped:
        click.echo(f"skipped {skipped.doc_id}: {skipped.reason}", err=True)
    for doc_id in report.lossy:
        click.echo(f"warning: {doc_id}: undecodable bytes replaced (not valid UTF-8)", err=True)


def _read_query(path: str) -> tuple[str, str]:
    from coderiv.text.extract import MAX_DOCUMENT_BYTES, looks_binary, visible_text

    if path == "-":
        data = sys.stdin.buffer.read()
        label = "<stdin>"
    else:
        try:
            size = Path(path).stat().st_size
            if size > MAX_DOCUMENT_BYTES:
                raise CoderivError(f"{path}: {size} bytes is larger than the {MAX_DOCUMENT_BYTES}-byte limit")
            data = Path(path).read_bytes()
        except OSError as exc:
            raise CoderivError(f"cannot read query {path}: {exc.strerror}") from None
        label = path
    if looks_binary(data):
        raise CoderivError(f"{label} is a binary file, not a text document")
    decoded = visible_text(data, label)
    if decoded.lossy:
        click.echo(f"warning: {label}: undecodable bytes replaced (not valid UTF-8)", err=True)
    return label, decoded.text


@main.command("query")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--doc", "doc_ids", multiple=True, help="Use a document of the index as the query (repeatable).")
@click.option("--measure", "-m", type=click.Choice(sorted(MEASURES)), default=DEFAULT_MEASURE, show_default=True)
@click.option("--top", "-k", type=click.IntRange(1), default=10, show_default=True, help="How many results.")
@click.option("--min-percent", type=click.FloatRange(0), default=0.0, help="Only documents at or above this percentage (also much faster).")
@click.option("--method", type=click.Choice(["ranking", "fingerprint"]), default="ranking", show_default=True)
@click.option("--strategy", default=None, help="Fingerprint store: STRATEGY[:g=G,...] (needed if there are several).")
@click.option("--full-query", is_flag=True, help="Fingerprint the query with every phrase (full strategy).")
@index_option
@analysis_options
@format_option
@click.option("--verify", is_flag=True, help="Re-check the matches with exact passages (matching statistics): passages and a verified percentage.")
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
    from coderiv.ranking.search import Searcher

    if not files and not doc_ids:
        raise CoderivError("give a query file, '-' for standard input, or --doc ID")
    index = Index.open(index_dir)
    settings = settings_from(stop, stem, language, index.settings)
    engine: Any
    if method == "fingerprint":
        from coderiv.ranking.fingerprint_search import FingerprintSearcher

        engine = FingerprintSearcher(index, strategy, full_query, settings)

        def rank(prepared: Any, label: str) -> Any:
            return engine.rank(prepared, top, label, min_percent=min_percent)
    else:
        if strategy is not None or full_query:
            raise CoderivError("--strategy and --full-query apply to --method fingerprint")
        engine = Searcher(index, settings)

        def rank(prepared: Any, label: str) -> Any:
            return engine.rank(prepared, measure, top, label, min_percent=min_percent)

    query_texts: dict[str, str] = {}
    results = []
    for path in files:
        label, text = _read_query(path)
        query_texts[label] = text
        prepared = engine.prepare(text)
        if prepared.length == 0:
            raise CoderivError(f"{label} has no words after analysis ({index.settings.describe()})")
        results.append(rank(prepared, label))
    results += [rank(engine.prepare_doc(doc_id), doc_id) for doc_id in doc_ids]
    _output(results, fmt, verify, query_texts, index)


def _output(results: list[Any], fmt: str, verify: bool, query_texts: dict[str, str], index: Any) -> None:
    """Print query results; with --verify, re-checked by exact passages first."""
    if not verify:
        _print_results(results, fmt)
        return
    from coderiv.cli.overlap import print_verified, verified_results

    texts = [query_texts.get(r.query) for r in results]
    verified, notes = verified_results(results, texts, index.source)
    print_verified(results, verified, notes, fmt)


def _print_results(results: list[Any], fmt: str) -> None:
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
            f"{result.query}: {result.measure}, {result.matched_terms} of {result.query_terms} distinct "
            f"{'minutiae' if result.measure.startswith('fingerprint') else 'terms'} in the collection, "
            f"self-score {result.self_score:.6g} = 100%"
        )
        if result.note:
            click.echo(f"note: {result.note}")
        rows = [[m.rank, fmt_percent(m.percent), f"{m.score:.6g}", m.doc_id] for m in result.matches]
        click.echo(table(headers[1:], rows, align=">>><"))


@main.command("info")
@index_option
@click.option("--verify", is_flag=True, help="Check every file's SHA-256 against the manifest.")
@format_option
@friendly_errors
def info_command(index_dir: Path, verify: bool, fmt: str) -> None:
    """Statistics and settings of the index."""
    from coderiv.index.index import Index

    index = Index.open(index_dir)
    info = index.info()
    from coderiv.pairs.table import describe_table, tables_info

    info["pair_tables"] = tables_info(index)
    if verify:
        problems = index.verify()
        info["verified"] = not problems
        if problems:
            raise CoderivError(f"index at {index_dir} is damaged: {'; '.join(problems)}")
    if fmt == "json":
        click.echo(to_json(info))
        return
    rows = []
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
        for s in info["skipped"]:
            click.echo(f"  skipped {s['doc_id']}: {s['reason']}")


from coderiv.cli.evaluate import evaluate_command  # noqa: E402  (registered last: it uses the decorators above)

main.add_command(evaluate_command)
from coderiv.cli.pairs import COMMANDS as PAIR_COMMANDS  # noqa: E402

for _command in PAIR_COMMANDS:
    main.add_command(_command)
from coderiv.cli.overlap import COMMANDS as OVERLAP_COMMANDS  # noqa: E402

for _command in OVERLAP_COMMANDS:
    main.add_command(_command)

if __name__ == "__main__":  # pragma: no cover
    main()
