"""What the fault tests share: a collection slow enough to index that a test can kill the
indexer midway, and the source tree that child processes import coderiv from."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.support.files import write_docs

#: coderiv's source tree, put first on a child process's PYTHONPATH
SRC = Path(__file__).resolve().parents[2] / "src"
WORDS = "river delta marsh wetland estuary sediment tide channel levee basin floodplain meander".split()


def slow_collection(folder: Path, count: int = 240) -> Path:
    """reStructuredText documents: docutils makes each take ~20 ms, so indexing lasts seconds."""
    rng = np.random.default_rng(7)
    for i in range(count):
        body = "\n\n".join(" ".join(rng.choice(WORDS, 40)) + f" doc{i} para{p}." for p in range(12))
        write_docs(folder, {f"d{i:04d}.rst": f"Title {i}\n========\n\n{body}\n\n.. note:: see :ref:`x{i}`\n"})
    return folder
