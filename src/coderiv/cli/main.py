"""The ``coderiv`` command: a thin click layer over the library. Each command module parses its
options, calls the library and prints; this module only gathers them into one group.

The group imports a command's module only when that command runs (click's lazy subcommands):
``coderiv query`` loads the query module and what it needs, not the web server, the evaluation
and the pairs engine, so a one-query process starts quickly. ``coderiv --help`` loads them all.
"""

from __future__ import annotations

import importlib

import click

from coderiv.system.signals import stop_cleanly_on_signals

#: command name -> the module of coderiv.cli whose ``COMMANDS`` define it (the help lists them sorted)
COMMAND_MODULES = {
    "index": "index",
    "info": "index",
    "query": "query",
    "compare": "overlap",
    "generate": "overlap",
    "align": "align",
    "pairs": "pairs",
    "similar": "pairs",
    "groups": "pairs",
    "lineage": "lineage",
    "evaluate": "evaluate",
    "report": "report",
    "serve": "serve",
    "users": "users",
    "lti": "lti",
}


def command_of(name: str) -> click.Command:
    """The command ``name``, importing its module (``COMMAND_MODULES``)."""
    module = importlib.import_module(f"coderiv.cli.{COMMAND_MODULES[name]}")
    for command in module.COMMANDS:
        if command.name == name:
            return command  # type: ignore[no-any-return]
    raise LookupError(f"coderiv.cli.{COMMAND_MODULES[name]} defines no command {name!r}")


class LazyGroup(click.Group):
    """A group whose commands are imported when asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMAND_MODULES)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return command_of(cmd_name) if cmd_name in COMMAND_MODULES else None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="coderiv")
def main() -> None:
    """Find the coderivatives of a document: its versions, revisions, mirrors and plagiarisms."""
    stop_cleanly_on_signals()


if __name__ == "__main__":  # pragma: no cover
    main()
