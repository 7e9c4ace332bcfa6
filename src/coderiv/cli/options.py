"""Options and error handling shared by every ``coderiv`` command."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from coderiv.errors import CoderivError
from coderiv.output import FORMATS, printable
from coderiv.system.signals import exit_interrupted
from coderiv.text.analysis import AnalysisSettings
from coderiv.text.extract import DEFAULT_MARKUP, Markup
from coderiv.text.reading import QueryDocument, read_query

F = TypeVar("F", bound=Callable[..., Any])


def friendly_errors(func: F) -> F:
    """Turn coderiv's own errors (and unreadable files) into a one-line message, exit 1."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except CoderivError as exc:
            raise click.ClickException(printable(str(exc))) from None
        except MemoryError:
            raise click.ClickException("out of memory; try a smaller input") from None
        except KeyboardInterrupt as exc:
            exit_interrupted(exc)

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
    func = click.option(
        "--language", default=None,
        help="Language of the stoplist and the Snowball stemmer, by name or ISO code (german, de; default english); "
        "alone it turns stemming on when Snowball has a stemmer for it.",
    )(func)
    func = click.option("--stem/--no-stem", default=None, help="Snowball stemming (default off).")(func)
    func = click.option("--stop/--no-stop", default=None, help="Drop stopwords (default on).")(func)
    return func


class TerminalBar:
    """The one progress bar of every command: a :class:`coderiv.progress.Progress` drawn with
    tqdm on standard error, only when standard error is a terminal (and not ``--quiet``), so
    that nothing but results reaches a file or a pipe. The unit and total come from the work
    itself (:meth:`start`): bytes are scaled (kB, MB), counts are not."""

    def __init__(self, quiet: bool, desc: str) -> None:
        self.desc = desc
        self.enabled = not quiet and sys.stderr.isatty()
        self._bar: Any = None

    def start(self, total: int | None, unit: str) -> None:
        if not self.enabled:
            return
        from tqdm import tqdm

        if self._bar is not None:
            self._bar.close()
        scale = unit == "B"  # bytes: scaled (kB, MB) with a rate; counts: "12/40 queries"
        if scale:
            form = None
        elif total is None:
            form = "{desc}: {n_fmt} " + unit + " [{elapsed}]"
        else:
            form = "{l_bar}{bar}| {n_fmt}/{total_fmt} " + unit + " [{elapsed}<{remaining}]"
        self._bar = tqdm(
            desc=self.desc, total=total, unit=unit, unit_scale=scale, bar_format=form, file=sys.stderr, dynamic_ncols=True,
        )

    def advance(self, n: int = 1) -> None:
        if self._bar is not None:
            self._bar.update(n)

    def echo(self, text: str = "", err: bool = False) -> None:
        """Print a line of results while the bar runs: the bar is cleared first and drawn again
        after, so that results and bar do not mix on one terminal."""
        if self._bar is not None:
            self._bar.clear()
        click.echo(text, err=err)
        if self._bar is not None:
            self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> TerminalBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def progress_bar(quiet: bool, desc: str) -> TerminalBar:
    """The progress of one piece of work (see :class:`TerminalBar`); use as a context manager."""
    return TerminalBar(quiet, desc)


def markup_option(help: str) -> Callable[[F], F]:
    """``--markup render|text`` (:class:`Markup`; None when not given)."""
    return click.option(
        "--markup", type=click.Choice([m.value for m in Markup]), default=None,
        callback=lambda ctx, param, value: None if value is None else Markup(value), help=help,
    )


#: ``--markup`` of the commands that read queries against an index: the index's choice is taken.
query_markup_option = markup_option(
    "How .rst and .md queries are read: render or text. Default: as the index read its documents "
    "(another choice is refused: the two sides would be read differently)."
)


def index_markup(index_dir: Path, given: Markup | None) -> Markup:
    """The markup reading recorded by the index at ``index_dir`` (a ``--markup`` given that
    differs is a one-line error), for a command that reads its query before opening the index."""
    from coderiv.index.reader import open_index

    return open_index(index_dir).markup.agree(given)


def read_query_reporting(path: str, markup: Markup = DEFAULT_MARKUP) -> QueryDocument:
    """:func:`read_query` (markup read by ``markup``), with undecodable bytes and a content that
    is not what its extension declares reported on standard error."""
    document = read_query(path, markup)
    if document.note:
        click.echo(f"note: {printable(document.label)}: {printable(document.note)}", err=True)
    if document.lossy:
        click.echo(f"warning: {printable(document.label)}: undecodable bytes replaced (not valid UTF-8)", err=True)
    return document


def settings_from(
    stop: bool | None, stem: bool | None, language: str | None, base: AnalysisSettings | None = None
) -> AnalysisSettings | None:
    """Analysis settings from the CLI flags (see :meth:`AnalysisSettings.from_flags`)."""
    return AnalysisSettings.from_flags(stop, stem, language, base)
