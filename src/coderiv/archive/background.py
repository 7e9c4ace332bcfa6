"""One daemon thread of the archive server that works until it is stopped: the webhook sender
and the LTI score return share its start and stop (the writer, which also wakes, keeps its own)."""

from __future__ import annotations

import threading


class BackgroundThread:
    """Runs :meth:`_loop` in a daemon thread named :attr:`thread_name` from :meth:`start` until
    :meth:`stop` sets ``_stop`` and joins it; a subclass's loop ends when ``_stop`` is set."""

    thread_name = "coderiv-archive-background"

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name=self.thread_name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _loop(self) -> None:
        raise NotImplementedError
