"""Running the pair computation on Dask (paper 003 §3: split the chunk-id space across nodes).

The key space is cut into the same blocks as in a single-process run (:func:`coderiv.pairs.counting.plan_blocks`);
each block is scattered to a worker, counted there (:meth:`coderiv.pairs.counting.BlockTask.run`) and its
pair counts come back to be summed. Integer counts make the sum independent of which worker
finished first, so the table is identical to the single-process one. ``local`` starts a
``LocalCluster`` on this machine; an address (``tcp://host:8786``) uses an existing cluster,
whose workers need coderiv installed. At most two blocks per worker thread are in flight, so the
client's memory stays bounded. A block lost with a worker (its scattered data gone with it) is
scattered and submitted again, up to :data:`BLOCK_ATTEMPTS` times; then the run stops with one
line and nothing is stored.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any

import numpy as np

from coderiv.errors import CoderivError
from coderiv.pairs.counting import BlockTask, Engine
from coderiv.system.cluster import dask_client

__all__ = ["dask_client", "dask_engine"]

#: How many times a block is submitted before a lost worker fails the run.
BLOCK_ATTEMPTS = 3


def _run(task: BlockTask) -> tuple[int, np.ndarray, np.ndarray]:
    return task.run()


def dask_engine(client: Any, window: int | None = None) -> Engine:
    """An engine running blocks on the workers of a ``distributed.Client``."""
    from distributed import as_completed

    def engine(tasks: Iterable[BlockTask]) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        threads = sum(client.nthreads().values()) or 1
        limit = window or 2 * threads
        pending = iter(tasks)
        running = as_completed()
        blocks: dict[str, tuple[BlockTask, int]] = {}

        def submit(task: BlockTask, attempt: int = 1) -> None:
            [data] = client.scatter([task], hash=False)
            future = client.submit(_run, data, pure=False)
            blocks[future.key] = (task, attempt)
            running.add(future)

        for task in islice(pending, limit):
            submit(task)
        for future in running:
            task, attempt = blocks.pop(future.key)
            try:
                result = future.result()
            except Exception as exc:  # a worker lost with the block (CancelledError, KilledWorker)
                if attempt >= BLOCK_ATTEMPTS:
                    raise CoderivError(
                        f"a pairs block failed {attempt} times on the Dask cluster ({type(exc).__name__}: "
                        f"{' '.join(str(exc).split())}); nothing was stored"
                    ) from None
                future.release()
                submit(task, attempt + 1)
                continue
            future.release()
            following = next(pending, None)
            if following is not None:
                submit(following)
            yield result

    return engine
