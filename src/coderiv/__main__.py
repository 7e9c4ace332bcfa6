"""The ``coderiv`` console script (and ``python -m coderiv``): signal handling first, then the
command line.

The handlers of :mod:`coderiv.signals` are installed before the command modules (and numpy,
scipy, click) are imported, so a Ctrl-C or SIGTERM during start-up ends with one line and exit
130/143 like one during the work, never a traceback or a silent -15.
"""

from __future__ import annotations


def run() -> None:
    """Run the ``coderiv`` command line."""
    from coderiv import signals

    signals.stop_cleanly_on_signals()
    try:
        from coderiv.cli import main
    except KeyboardInterrupt as exc:
        signals.exit_interrupted(exc, "stopped while starting; nothing was done")
    try:
        main(prog_name="coderiv")
    finally:
        signals.exit_quietly_on_signals()


if __name__ == "__main__":
    run()
