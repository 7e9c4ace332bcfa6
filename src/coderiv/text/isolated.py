"""Reading an untrusted document in a child process with a time and a memory budget.

A server reads documents that strangers upload. A small file can expand to a great deal of work:
a 4 MB DOCX holds 48 MB of XML, a PDF can make its parser loop. Read in the server's own process,
such a file freezes other requests and can exhaust memory. :func:`read_isolated` reads the bytes
(:func:`coderiv.text.reading.read_query_bytes`, the command line's checks) in a fresh child
process (``python -m coderiv.text.isolated``: nothing of the server's threads or state, about
0.2 s to start), with

- a memory budget: the child's address space may grow by at most ``memory_bytes`` beyond what it
  has once its readers are imported (``RLIMIT_AS``, set by the child itself before it reads a
  byte), so an allocation past it fails in the child, never in the server;
- a time budget: the child is killed (by its PID) once ``seconds`` pass without an answer;
- a size budget in words (``words``): a document longer than that is refused by the child, so
  its text never reaches the server, whose threads would rank it holding the interpreter lock
  (a 1.5 MB DOCX can hold 3.6 million words: seconds of ranking that delayed other requests).

The bytes go to the child on its standard input, the document comes back pickled on its standard
output. A budget that a document exceeds, or a reader that crashes, is answered with one line (an
:class:`~coderiv.errors.InputError`) and nothing of the child survives.
"""

from __future__ import annotations

import os
import pickle
import re
import resource
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from coderiv.errors import InputError
from coderiv.text.extract import DEFAULT_MARKUP, MAX_DOCUMENT_BYTES, Markup
from coderiv.text.reading import QueryDocument, read_query_bytes

#: Seconds one document may take to read, the child's start included (the slowest real
#: documents take a few seconds).
DEFAULT_SECONDS = 60.0
#: Memory one document's reading may add (a long PDF's text layer needs some hundred MB).
DEFAULT_MEMORY_BYTES = 1 << 30
#: Words one document may hold: a long thesis has about 100,000; this is five of them.
DEFAULT_WORDS = 500_000
#: A word, as the analysis counts them: a run of letters and digits.
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Budget:
    """What reading one document may cost: seconds of wall time and bytes of memory."""

    seconds: float = DEFAULT_SECONDS
    memory_bytes: int = DEFAULT_MEMORY_BYTES
    words: int = DEFAULT_WORDS


def _address_space() -> int:
    """This process's virtual memory size in bytes (Linux ``/proc``; 0 where unknown)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[0]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return 0


def _limit_memory(memory_bytes: int) -> None:
    limit = _address_space() + memory_bytes
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard == resource.RLIM_INFINITY or limit < hard:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def count_words(text: str, stop_after: int) -> int:
    """The words of ``text`` (runs of letters and digits), counted up to ``stop_after + 1``."""
    count = 0
    for _ in _WORD.finditer(text):
        count += 1
        if count > stop_after:
            break
    return count


def _child_main() -> None:
    """The child: ``LABEL MAX_BYTES MEMORY_BYTES MAX_WORDS MARKUP`` as arguments, the bytes on
    standard input; writes the pickled ``("ok", document)`` or ``(kind, message)``."""
    label, max_bytes, memory_bytes, max_words = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    markup = Markup(sys.argv[5])
    _limit_memory(memory_bytes)
    answer: tuple[str, object]
    try:
        data = sys.stdin.buffer.read()
        document = read_query_bytes(data, label, max_bytes, markup)
        if count_words(document.text, max_words) > max_words:
            raise InputError(f"{label} holds more than the {max_words:,} words a document may have here; not checked")
        answer = ("ok", document)
    except InputError as exc:
        answer = ("error", str(exc))
    except MemoryError:
        answer = ("memory", "")
    except RecursionError:
        answer = ("error", f"{label}: its structure is nested too deeply to read")
    try:
        out = pickle.dumps(answer)
    except MemoryError:
        out = pickle.dumps(("memory", ""))
    sys.stdout.buffer.write(out)
    sys.stdout.buffer.flush()


def _child_environment() -> dict[str, str]:
    """The server's environment, with this coderiv first on the child's import path."""
    package_root = str(Path(__file__).resolve().parents[2])
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": package_root + (os.pathsep + path if path else "")}


def read_isolated(
    data: bytes, label: str, budget: Budget = Budget(), max_bytes: int = MAX_DOCUMENT_BYTES, markup: Markup = DEFAULT_MARKUP
) -> QueryDocument:
    """The visible text of an untrusted document, read in a child process within ``budget``, its
    markup read by ``markup`` (the index's choice), or a one-line :class:`InputError` for a bad
    document or an exceeded budget."""
    if len(data) > max_bytes:  # before paying for a child
        raise InputError(f"{label}: {len(data)} bytes is larger than the {max_bytes}-byte limit")
    child = subprocess.Popen(
        [sys.executable, "-m", "coderiv.text.isolated", label, str(max_bytes), str(budget.memory_bytes), str(budget.words),
         markup.value],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_child_environment(),
    )
    try:
        out, _ = child.communicate(data, timeout=budget.seconds)
    except subprocess.TimeoutExpired:
        raise InputError(f"{label}: reading it took longer than the {budget.seconds:g}-second budget; not checked") from None
    finally:
        if child.poll() is None:
            child.kill()  # by its PID: only the child this call started
            child.communicate()
        if child.stdin is not None:  # a retried communicate() leaves a pipe cut short by the timeout open
            child.stdin.close()
    try:
        kind, value = pickle.loads(out)  # our own child's answer
    except Exception:  # noqa: BLE001 - no answer: the reader crashed or was killed
        raise InputError(f"{label}: {_ended(child.returncode)} while reading it; not checked") from None
    if kind == "ok" and isinstance(value, QueryDocument):
        return value
    if kind == "memory":
        raise InputError(f"{label}: reading it needs more than the {budget.memory_bytes >> 20} MB memory budget; not checked")
    raise InputError(str(value))


def _ended(returncode: int | None) -> str:
    """How a child that sent nothing ended, in words."""
    if returncode is not None and returncode < 0:
        return f"the reader was stopped by {signal.Signals(-returncode).name}"
    return f"the reader ended (exit {returncode})"


if __name__ == "__main__":
    _child_main()
