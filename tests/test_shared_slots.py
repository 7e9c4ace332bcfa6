"""Shared slots carry a worker's arrays back unchanged, at known offsets, and every slot comes
back to the ring once its batch is read: through the ring's own calls, a real forked pool, and
the writer's spill (presorted and not)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coderiv.index.builder import analysis_workers
from coderiv.index.builder.analysis_workers import AnalyzedBatch, _Worker, analyze_documents
from coderiv.index.builder.spill import Spill
from coderiv.keys.kinds import TERMS
from coderiv.ranking.containment import chunk_store_spec
from coderiv.system.shared_slots import ALIGN, SlotRing
from coderiv.text.analysis import AnalysisSettings, Analyzer
from coderiv.text.collection import RawDocument

SPECS = [TERMS, chunk_store_spec()]
WORDS = "river stone bridge harbour lantern meadow orchard quarry summit valley willow".split()


def _documents(n: int) -> list[RawDocument]:
    """``n`` plain ASCII documents of different words and lengths."""
    return [
        RawDocument(f"doc-{i:03d}.txt", " ".join(WORDS[(i * 7 + j * j) % len(WORDS)] for j in range(40 + 13 * i)).encode())
        for i in range(n)
    ]


def _plain(batch: AnalyzedBatch) -> tuple[list[str], dict[str, list[list[int]]]]:
    return batch.ids, {name: [array.tolist() for array in arrays] for name, arrays in batch.stores.items()}


def test_arrays_come_back_at_aligned_offsets() -> None:
    ring = SlotRing(3, 4096)
    arrays: list[np.ndarray] = [
        np.array([1, 2, 3], np.uint32), np.full(5, 7, np.uint8), np.array([-1, 2**40], np.int64), np.empty(0, np.uint16),
    ]
    placed = ring.put(1, arrays)
    assert placed is not None and placed.slot == 1
    assert placed.layout == ((0, "<u4", 3), (64, "|u1", 5), (128, "<i8", 2), (192, "<u2", 0))
    ring.put(2, [np.zeros(1024, np.uint32)])  # the next slot's bytes do not touch slot 1's
    views = ring.views(placed)
    assert [v.tolist() for v in views] == [[1, 2, 3], [7] * 5, [-1, 2**40], []]
    assert [v.dtype for v in views] == [np.uint32, np.uint8, np.int64, np.uint16]


def test_arrays_that_do_not_fit_are_refused() -> None:
    ring = SlotRing(1, 128)
    assert ring.put(0, [np.zeros(64, np.uint8), np.zeros(64, np.uint8)]) is not None  # exactly 128
    assert ring.put(0, [np.zeros(65, np.uint8), np.zeros(1, np.uint8)]) is None  # 128 + 64


def test_slots_are_taken_and_given_back() -> None:
    ring = SlotRing(2, 64)
    assert (ring.take(), ring.take(), ring.take()) == (0, 1, None)
    ring.give_back(0)
    assert ring.n_free() == 1 and ring.take() == 0
    ring.give_back(1)
    with pytest.raises(ValueError, match="slot 1 given back twice"):
        ring.give_back(1)


DTYPES = [np.uint8, np.uint16, np.uint32, np.uint64, np.int32, np.int64, np.float64]


@given(st.lists(st.tuples(st.sampled_from(DTYPES), st.integers(0, 300)), max_size=6), st.integers(1, 40))
@settings(max_examples=200, deadline=None)
def test_put_fits_exactly_when_the_aligned_sizes_do(shapes: list[tuple[type, int]], blocks: int) -> None:
    """Law: arrays fit a slot iff their sizes rounded up to ALIGN sum to at most the slot's
    bytes; then every array reads back equal, whatever the slot."""
    ring = SlotRing(2, blocks * ALIGN)
    rng = np.random.default_rng(len(shapes) * 1000 + blocks)
    arrays: list[np.ndarray] = [rng.integers(0, 200, n).astype(dtype) for dtype, n in shapes]
    needed = sum(-(-a.nbytes // ALIGN) * ALIGN for a in arrays)
    placed = ring.put(1, arrays)
    assert (placed is not None) == (needed <= blocks * ALIGN)
    if placed is not None:
        assert all(np.array_equal(v, a) and v.dtype == a.dtype for v, a in zip(ring.views(placed), arrays))


def test_batch_round_trip_and_release() -> None:
    """A batch moved into a slot (worker) and mapped back (parent) holds the same arrays; its
    release gives the slot back and drops the views, which the next batch would overwrite."""
    worker = _Worker(Analyzer(AnalysisSettings()), SPECS)
    names = [spec.name for spec in SPECS]
    reference = AnalyzedBatch.pack(worker.run_batch(_documents(6)), names)
    batch = AnalyzedBatch.pack(worker.run_batch(_documents(6)), names)
    ring = SlotRing(2, 1 << 20)
    slot = ring.take()
    assert slot == 0
    batch.to_slot(ring, slot)
    assert batch.stores == {} and batch.placed is not None and batch.placed_names == names
    batch.from_slot(ring, slot)
    assert _plain(batch) == _plain(reference)
    assert ring.n_free() == 1
    batch.release()
    assert batch.stores == {} and ring.n_free() == 2
    batch.release()  # twice: nothing more to give back
    assert ring.n_free() == 2


def test_a_batch_too_large_keeps_its_arrays_and_its_slot_comes_back() -> None:
    worker = _Worker(Analyzer(AnalysisSettings()), SPECS)
    batch = AnalyzedBatch.pack(worker.run_batch(_documents(6)), [spec.name for spec in SPECS])
    before = _plain(batch)
    ring = SlotRing(1, 256)
    slot = ring.take()
    assert slot == 0
    batch.to_slot(ring, slot)
    assert batch.placed is None and _plain(batch) == before
    batch.from_slot(ring, slot)
    assert ring.n_free() == 1 and _plain(batch) == before


@pytest.mark.parametrize("slot_bytes, through_slots", [(analysis_workers.SLOT_BYTES, True), (64, False)])
def test_forked_workers_give_the_in_process_batches(
    monkeypatch: pytest.MonkeyPatch, slot_bytes: int, through_slots: bool
) -> None:
    """Two forked workers hand back the batches one process makes, through the slots (or, when
    the arrays do not fit, through the pipe); once released, every slot is free again."""
    monkeypatch.setattr(analysis_workers, "BATCH_DOCS", 4)
    monkeypatch.setattr(analysis_workers, "SLOT_BYTES", slot_bytes)
    settings_ = AnalysisSettings()
    alone = [_plain(b) for b in analyze_documents(_documents(30), settings_, SPECS, workers=1)]
    forked = list(analyze_documents(_documents(30), settings_, SPECS, workers=2))
    assert len(forked) == 8 and [_plain(b) for b in forked] == alone
    assert all((b.placed is not None) == through_slots for b in forked)
    rings = {id(b.ring): b.ring for b in forked if b.ring is not None}
    assert len(rings) == (1 if through_slots else 0)
    for batch in forked:
        batch.release()
    for ring in rings.values():
        assert ring is not None and ring.n_free() == ring.n_slots == 2 * 2 + 1 + analysis_workers.HELD_SLOTS


@pytest.mark.parametrize("presort", [True, False])
def test_the_spill_gives_every_slot_back(tmp_path: Path, presort: bool) -> None:
    """Fed batches that live in slots, the writer's spill writes the runs it writes from
    ordinary arrays, and gives every slot back once a run is sorted (or written)."""
    worker = _Worker(Analyzer(AnalysisSettings()), SPECS)
    names = [spec.name for spec in SPECS]
    docs = _documents(24)
    ring = SlotRing(6, 1 << 20)
    spills = {}
    for label in ("slots", "arrays"):
        spill = Spill(tmp_path / label, names, run_postings=150, presort=presort)
        for start in range(0, 24, 4):
            batch = AnalyzedBatch.pack(worker.run_batch(docs[start:start + 4]), names)
            if label == "slots":
                slot = ring.take()
                assert slot is not None
                batch.to_slot(ring, slot)
                batch.from_slot(ring, slot)
            spill.add(batch)
        spill.flush()
        spills[label] = spill
    assert len(spills["slots"].runs) == len(spills["arrays"].runs) == 2  # 68 postings a batch, 3 batches a run
    for run_a, run_b in zip(spills["slots"].runs, spills["arrays"].runs):
        for name in names:
            assert [np.asarray(a).tolist() for a in run_a.stores[name]] == [np.asarray(b).tolist() for b in run_b.stores[name]]
    assert ring.n_free() == 6
