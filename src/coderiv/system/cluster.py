"""A Dask client for work spread over a cluster: a new LocalCluster on this machine (``local``)
or an existing scheduler (``tcp://host:8786``), whose workers need coderiv installed and must
see the paths they are given (a shared file system). Used by sharded index builds and by
``pairs --dask``. :func:`process_cluster` starts a real scheduler and workers as processes of
Dask's own command-line tools on 127.0.0.1 (the tests' and the benchmarks' cluster)."""

from __future__ import annotations

import contextlib
import importlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coderiv._version import __version__
from coderiv.errors import CoderivError
from coderiv.extras import require


@contextlib.contextmanager
def dask_client(address: str, workers: int | None = None, processes: bool = True) -> Iterator[Any]:
    """A client of a new local cluster (``local``) or of the scheduler at ``address``."""
    distributed = require("distributed", "dask", "--dask")
    Client, LocalCluster = distributed.Client, distributed.LocalCluster
    if address == "local":
        with LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=processes,
            dashboard_address=":0",  # None still binds 8787 for the HTTP routes; ":0" takes a free port
        ) as cluster, Client(cluster) as client:
            yield client
        return
    try:
        client = Client(address, timeout="10s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise CoderivError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    with client:
        yield client


def _worker_facts(modules: tuple[str, ...]) -> tuple[str, list[str]]:
    """Run on each worker: its coderiv version and which of ``modules`` it cannot import."""
    missing = []
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    return __version__, missing


def check_workers(client: Any, modules: tuple[str, ...] = ()) -> None:
    """A one-line error unless every worker of ``client`` runs this coderiv version and can
    import ``modules`` (an extra's, e.g. ``fsspec`` for a source given by URL): a shard written
    by another version could analyse differently, and a task failing on one worker would fail
    the build late."""
    try:
        facts: dict[str, tuple[str, list[str]]] = client.run(_worker_facts, modules)
    except Exception as exc:  # a worker without coderiv cannot unpickle the function
        raise CoderivError(
            f"the Dask workers cannot run coderiv ({type(exc).__name__}: {' '.join(str(exc).split())}); "
            "install the same coderiv on every worker"
        ) from None
    if not facts:
        raise CoderivError("the Dask cluster has no workers")
    for worker, (version, missing) in sorted(facts.items()):
        if version != __version__:
            raise CoderivError(
                f"Dask worker {worker} runs coderiv {version}, this process {__version__}: install the same version on every worker"
            )
        if missing:
            raise CoderivError(f"Dask worker {worker} cannot import {', '.join(missing)}: install the same coderiv extras on every worker")


@dataclass
class ProcessCluster:
    """A running scheduler and its workers (each a process this one started)."""

    address: str
    scheduler: subprocess.Popen[bytes]
    workers: list[subprocess.Popen[bytes]]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def process_cluster(n_workers: int = 2, start_timeout: float = 30.0) -> Iterator[ProcessCluster]:
    """A ``dask scheduler`` on a free port of 127.0.0.1 and ``n_workers`` single-threaded ``dask
    worker`` processes (they inherit this process's environment, PYTHONPATH included), killed
    at the end: only the PIDs started here. Fault tests kill single workers by their PID."""
    distributed = require("distributed", "dask", "a Dask cluster")
    dask = str(Path(sys.executable).parent / "dask")
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    quiet: dict[str, Any] = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    started: list[subprocess.Popen[bytes]] = []
    try:
        started.append(subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"], **quiet))
        for _ in range(n_workers):
            started.append(subprocess.Popen(
                [dask, "worker", address, "--host", "127.0.0.1", "--nthreads", "1", "--no-dashboard", "--nworkers", "1"], **quiet
            ))
        deadline = time.monotonic() + start_timeout
        with distributed.Client(address, timeout="10s") as client:
            client.wait_for_workers(n_workers, timeout=max(1.0, deadline - time.monotonic()))
        yield ProcessCluster(address, started[0], started[1:])
    finally:
        for process in started:
            process.kill()
        for process in started:
            process.wait(timeout=10)
