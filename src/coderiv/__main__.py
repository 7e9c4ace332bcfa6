"""The ``coderiv`` console script (and ``python -m coderiv``): signal handling first, then the
command line.

The handlers of :mod:`coderiv.system.signals` are installed before the command modules (and numpy,
scipy, click) are imported, so a Ctrl-C or SIGTERM during start-up ends with one line and exit
130/143 like one during the work, never a traceback or a silent -15.
"""

from __future__ import annotations

import os

#: Environment variables that keep numpy's BLAS (OpenBLAS) to the calling thread. Nothing the
#: command line runs calls BLAS on large arrays, but OpenBLAS starts a thread per core when numpy
#: is imported and each spins for a while before sleeping: CPU in every process that imports
#: numpy, and the same again in every worker process (measured: docs/performance-history.md).
SINGLE_THREADED_BLAS = {"OPENBLAS_NUM_THREADS": "1"}


def single_threaded_blas() -> None:
    """Set :data:`SINGLE_THREADED_BLAS` before numpy is imported, unless the user set them."""
    for name, value in SINGLE_THREADED_BLAS.items():
        os.environ.setdefault(name, value)


def run() -> None:
    """Run the ``coderiv`` command line."""
    single_threaded_blas()
    from coderiv.system import signals

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
