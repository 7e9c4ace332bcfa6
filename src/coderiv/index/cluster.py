"""A Dask client for work spread over a cluster: a new LocalCluster on this machine (``local``)
or an existing scheduler (``tcp://host:8786``), whose workers need coderiv installed and must
see the paths they are given (a shared file system). Used by sharded index builds and by
``pairs --dask``."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

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
