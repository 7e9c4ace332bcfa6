"""How the ``coderiv`` command ends on a signal (issue 25 items 6 and 8): an ignored SIGHUP
(``nohup``) stays ignored, a signal during start-up or during the interpreter's shutdown gives
one line and exit 128 + signal, never a traceback. Each case runs in its own Python process
(signal handlers are process-wide) that signals itself at a known point, so nothing is timed."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest


def run_script(body: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(body)], capture_output=True, text=True, timeout=120)


def test_an_ignored_sighup_stays_ignored() -> None:
    done = run_script(
        """
        import os, signal
        signal.signal(signal.SIGHUP, signal.SIG_IGN)  # what nohup does
        from coderiv.system.signals import stop_cleanly_on_signals
        stop_cleanly_on_signals()
        os.kill(os.getpid(), signal.SIGHUP)
        print("still running")
        """
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "still running\n", "")


def test_sigterm_and_sighup_unwind_like_ctrl_c() -> None:
    done = run_script(
        """
        import os, signal
        from coderiv.system.signals import Terminated, stop_cleanly_on_signals
        stop_cleanly_on_signals()
        try:
            os.kill(os.getpid(), signal.SIGHUP)
            for _ in range(10**7):
                pass
        except Terminated as exc:
            print("unwound", exc.signum)
        """
    )
    assert (done.returncode, done.stdout) == (0, f"unwound {int(signal.SIGHUP)}\n")


#: A script that runs the console entry point and sends itself ``SIGNUM`` while the command
#: modules are being imported (a meta-path hook sees the import of coderiv.cli.main).
DURING_START_UP = """
import os, signal, sys
class SignalOnImport:
    def find_spec(self, name, path, target=None):
        if name == "coderiv.cli.main":
            os.kill(os.getpid(), SIGNUM)
            for _ in range(10**6):  # the handler runs between bytecodes
                pass
        return None
sys.meta_path.insert(0, SignalOnImport())
sys.argv = ["coderiv", "--version"]
from coderiv.__main__ import run
run()
"""


@pytest.mark.parametrize(
    ("signum", "line"),
    [
        (signal.SIGINT, "interrupted: stopped while starting; nothing was done\n"),
        (signal.SIGTERM, "SIGTERM: stopped while starting; nothing was done\n"),
        (signal.SIGHUP, "SIGHUP: stopped while starting; nothing was done\n"),
    ],
)
def test_a_signal_during_start_up_gives_one_line_and_128_plus_signal(signum: int, line: str) -> None:
    done = run_script(DURING_START_UP.replace("SIGNUM", str(int(signum))))
    assert (done.returncode, done.stdout, done.stderr) == (128 + signum, "", line)


def test_a_signal_while_exiting_gives_one_line_not_a_traceback() -> None:
    # the atexit callback runs during the interpreter's shutdown, after the command is done
    done = run_script(
        """
        import atexit, os, signal, sys
        def late_signal():
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(10**6):
                pass
        atexit.register(late_signal)
        sys.argv = ["coderiv", "--version"]
        from coderiv.__main__ import run
        run()
        """
    )
    assert done.returncode == 130
    assert done.stdout.startswith("coderiv, version ")
    assert done.stderr == "interrupted: received while exiting; the command's work was complete\n"


def test_python_dash_m_coderiv_is_the_command() -> None:
    done = subprocess.run([sys.executable, "-m", "coderiv", "--version"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("coderiv, version ")
