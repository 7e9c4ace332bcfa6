"""The index writer: a store written by ranges and merged equals the in-memory inversion."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from coderiv.index.postings import from_forward
from coderiv.index.writer import Run, Sources, write_store


@pytest.mark.parametrize("shuffled", [False, True])
def test_merged_store_equals_the_in_memory_inversion(tmp_path: Path, shuffled: bool) -> None:
    """140,000 documents (document numbers past two 65,536 boundaries, so keys have several
    runs of high bits) cut into many ranges and segments: every array, the runs included,
    equals :func:`from_forward`'s."""
    rng = np.random.default_rng(3)
    n = 140_000
    per_doc = []
    for _ in range(n):
        keys = np.unique(rng.choice(np.array([5, 17, 2**40, 2**63 + 9], np.uint64), rng.integers(1, 4)))
        per_doc.append((keys, rng.integers(1, 300, len(keys)).astype(np.int32)))
    numbers = rng.permutation(n) if shuffled else np.arange(n)
    rows = [per_doc[int(number)] for number in numbers]  # run row i holds the document numbered numbers[i]
    doc_ptr = np.zeros(n + 1, np.int64)
    np.cumsum([len(k) for k, _ in rows], out=doc_ptr[1:])
    run = Run([f"d{i}" for i in range(n)], {"terms": (
        doc_ptr, np.concatenate([k for k, _ in rows]), np.concatenate([v for _, v in rows]).astype(np.uint32))})
    sources = Sources([run], [numbers.astype(np.int64)], {}, np.empty(0, np.int64))
    weights = np.array([len(k) for k, _ in per_doc], np.int64)
    written = write_store(sources, "terms", n, weights, tmp_path / "out", tmp_path, range_postings=30_000, workers=1)
    expected = from_forward(per_doc)
    for name in ("keys", "ptr", "vals", "maxvals"):
        assert np.array_equal(getattr(written, name), getattr(expected, name)), name
        assert getattr(written, name).dtype == getattr(expected, name).dtype, name
    for name in ("low", "run_at", "run_high"):
        got, want = getattr(written.docs, name), getattr(expected.docs, name)
        assert got.dtype == want.dtype and np.array_equal(got, want), name
    assert len(written.docs.run_high) > len(written.keys)  # some keys do have several runs
