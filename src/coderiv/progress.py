"""How long work reports how far it is: one small protocol every library function shares.

A function that can take a while (indexing, pairs, evaluations, batch queries) accepts
``progress: Progress | None``, calls :meth:`Progress.start` once with the total and its unit
(``"B"`` for bytes of the source, else a plural noun such as ``"documents"``, ``"blocks"``,
``"cases"``, ``"queries"``) as soon as it knows them, then :meth:`Progress.advance` as work is
done. The command line gives one terminal bar (``coderiv.cli.options.progress_bar``); a library
user gives anything with these two methods, or nothing.
"""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    """Receives the size of a piece of work, then its advance."""

    def start(self, total: int | None, unit: str) -> None:
        """The work is ``total`` units of ``unit`` (None: not known in advance)."""

    def advance(self, n: int = 1) -> None:
        """``n`` more units are done."""


class Counter:
    """A :class:`Progress` that only remembers: for tests and for callers that poll. ``total``,
    ``unit`` and ``done`` are the current stage's; :meth:`stage` gives an earlier one's (a build
    reads the source's bytes, then counts the stores it writes)."""

    def __init__(self) -> None:
        self.total: int | None = None
        self.unit = ""
        self.done = 0
        self.starts = 0
        self.stages: list[tuple[int | None, str, int]] = []

    def start(self, total: int | None, unit: str) -> None:
        if self.starts:
            self.stages.append((self.total, self.unit, self.done))
        self.total, self.unit, self.done = total, unit, 0
        self.starts += 1

    def advance(self, n: int = 1) -> None:
        self.done += n

    def stage(self, unit: str) -> tuple[int | None, int]:
        """(total, done) of the last stage counted in ``unit``; a one-line error if none was."""
        for total, name, done in [*self.stages, (self.total, self.unit, self.done)][::-1]:
            if name == unit:
                return total, done
        raise KeyError(f"no stage counted in {unit!r}")
