"""The ``coderiv`` command: a thin click layer over the library. Each command module parses its
options, calls the library and prints; this module only gathers them into one group."""

from __future__ import annotations

import click

from coderiv.cli import align, evaluate, index, lineage, overlap, pairs, query, report, serve, users
from coderiv.signals import stop_cleanly_on_signals


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="coderiv")
def main() -> None:
    """Find the coderivatives of a document: its versions, revisions, mirrors and plagiarisms."""
    stop_cleanly_on_signals()


for _module in (index, query, overlap, align, pairs, lineage, evaluate, report, serve, users):
    for _command in _module.COMMANDS:
        main.add_command(_command)

if __name__ == "__main__":  # pragma: no cover
    main()
