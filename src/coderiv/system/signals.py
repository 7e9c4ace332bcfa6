"""How the ``coderiv`` command ends on a signal: one line and exit 128 + the signal's number.

SIGTERM and SIGHUP (a closed terminal) are made to unwind like Ctrl-C (:class:`Terminated` is a
``KeyboardInterrupt``), so worker pools stop, scratch files go and an index being written is left
as it was. A SIGHUP that the parent set to be ignored (``nohup coderiv index ...``) stays ignored:
the build goes on after the terminal closes. The handlers are installed before the heavy imports
(:mod:`coderiv.__main__`), so a signal during start-up also ends with one line, and once the
command's work is done a signal during the interpreter's shutdown (joining threads, ``atexit``)
ends the process with one line instead of an ignored-exception traceback.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from types import FrameType
from typing import NoReturn

#: What the line says when a signal arrives while an index may be being written.
WHILE_WORKING = "any index being written was left as it was before"


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP: cleaned up as Ctrl-C is, then exit 128 + signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise Terminated(signum)


def signal_number(exc: KeyboardInterrupt) -> int:
    """The signal behind an interrupt: SIGTERM/SIGHUP for :class:`Terminated`, else SIGINT."""
    return exc.signum if isinstance(exc, Terminated) else int(signal.SIGINT)


def describe(signum: int) -> str:
    """``interrupted`` for Ctrl-C, else the signal's name (``SIGTERM``)."""
    return "interrupted" if signum == signal.SIGINT else signal.Signals(signum).name


def stop_cleanly_on_signals() -> None:
    """Make SIGTERM and SIGHUP unwind like Ctrl-C (only in the main thread, where Python
    delivers signals); an ignored SIGHUP (``nohup``) is left ignored."""
    if threading.current_thread() is not threading.main_thread():
        return
    signal.signal(signal.SIGTERM, _terminate)
    if signal.getsignal(signal.SIGHUP) is not signal.SIG_IGN:
        signal.signal(signal.SIGHUP, _terminate)


def say(line: str) -> None:
    """Write one line to standard error; a closed terminal (SIGHUP) cannot be written to."""
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def exit_interrupted(exc: KeyboardInterrupt, what: str = WHILE_WORKING) -> NoReturn:
    """One line naming the signal, then exit 128 + its number."""
    signum = signal_number(exc)
    say(f"{describe(signum)}: {what}")
    sys.exit(128 + signum)


def _exit_at_once(signum: int, frame: FrameType | None) -> None:
    say(f"{describe(signum)}: received while exiting; the command's work was complete")
    os._exit(128 + signum)


def exit_quietly_on_signals() -> None:
    """From now on (the command is done, the interpreter is shutting down) a signal ends the
    process at once with one line, never with a traceback from a thread join or ``atexit``."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _exit_at_once)
