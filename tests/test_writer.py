"""The index writer: a store written by ranges and merged by key range equals the in-memory
inversion, byte for byte, whatever the range sizes."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coderiv.index import Index
from coderiv.index.builder import compiled_writer, key_partition, merge, spill, writer
from coderiv.index.builder.files import NpyWriter
from coderiv.index.builder.invert import Sources
from coderiv.index.builder.segments import Segment, save_partitioned, save_segment
from coderiv.index.builder.spill import Run
from coderiv.index.builder.writer import write_store
from coderiv.index.format.counts import OVER_AT_FILE, OVER_VAL_FILE
from coderiv.index.format.encoded import narrow
from coderiv.index.format.postings import ARRAY_NAMES, Postings, from_forward
from coderiv.keys import compiled_terms
from coderiv.keys.kinds import StoreSpec
from coderiv.text.collection import RawDocument


def _sources(per_doc: list[tuple[np.ndarray, np.ndarray]], numbers: np.ndarray) -> Sources:
    """One spilled run whose row i holds the document numbered ``numbers[i]``."""
    rows = [per_doc[int(number)] for number in numbers]
    doc_ptr = np.zeros(len(rows) + 1, np.int64)
    np.cumsum([len(k) for k, _ in rows], out=doc_ptr[1:])
    keys = np.concatenate([k for k, _ in rows]) if rows else np.empty(0, np.uint64)
    vals = np.concatenate([v for _, v in rows]) if rows else np.empty(0, np.int32)
    run = Run([f"d{i}" for i in range(len(rows))], {"terms": (doc_ptr, keys.astype(np.uint64), vals.astype(np.uint32))})
    return Sources([run], [numbers.astype(np.int64)], {}, np.empty(0, np.int64))


#: The files a presence store (every value 1) does not write.
VALUE_FILES = ["maxvals.npy", "vals.npy", OVER_AT_FILE, OVER_VAL_FILE]


def _same_files_as_in_memory(
    per_doc: list[tuple[np.ndarray, np.ndarray]], folder: Path, written: Path, presence: bool = False
) -> None:
    """Every file of the written store has the bytes ``np.save`` gives the in-memory inversion's
    arrays (the side table of large values narrowed even when empty, as the writer has always
    written it); a ``presence`` store (every value 1) has all of them but the values' and
    largest values' files."""
    expected = from_forward(per_doc)
    expected.save(folder / "expected")
    np.save(folder / "expected" / OVER_AT_FILE, narrow(np.asarray(expected.vals.over_at)))
    np.save(folder / "expected" / OVER_VAL_FILE, narrow(np.asarray(expected.vals.over_val)))
    names = sorted(p.name for p in (folder / "expected").iterdir())
    assert {f"{name}.npy" for name in ARRAY_NAMES} < set(names)  # the side table of large values too
    if presence:
        assert np.unique(np.asarray(expected.vals)).tolist() == [1] and np.unique(expected.maxvals).tolist() == [1]
        names = [name for name in names if name not in VALUE_FILES]
    assert sorted(p.name for p in written.iterdir()) == names
    for name in names:
        assert (written / name).read_bytes() == (folder / "expected" / name).read_bytes(), name


@contextlib.contextmanager
def _loops(compiled: bool) -> Iterator[None]:
    """The writer with its compiled loops (numba, when installed) or with its numpy paths."""
    with pytest.MonkeyPatch.context() as patch:
        if compiled:
            if not compiled_terms.available():
                pytest.skip("numba (coderiv[fast]) not installed")
            assert compiled_terms.load() and compiled_writer.load()
        else:
            patch.setattr(compiled_writer, "load", lambda: False)
        yield


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("shuffled", [False, True])
def test_merged_store_equals_the_in_memory_inversion(tmp_path: Path, shuffled: bool, compiled: bool) -> None:
    """140,000 documents (document numbers past two 65,536 boundaries, so keys have several
    runs of high bits) cut into many ranges and segments, merged in many key ranges: every
    file, the runs included, has the bytes of :func:`from_forward`'s arrays saved (with the
    compiled loops and with the numpy paths)."""
    rng = np.random.default_rng(3)
    n = 140_000
    per_doc = []
    for _ in range(n):
        keys = np.unique(rng.choice(np.array([5, 17, 2**40, 2**63 + 9], np.uint64), rng.integers(1, 4)))
        per_doc.append((keys, rng.integers(1, 300, len(keys)).astype(np.int32)))
    numbers = rng.permutation(n) if shuffled else np.arange(n)
    weights = np.array([len(k) for k, _ in per_doc], np.int64)
    with _loops(compiled):
        written = write_store(_sources(per_doc, numbers), "terms", n, weights, tmp_path / "out", tmp_path,
                              range_postings=30_000, workers=1, merge_entries=7)
    assert len(written.docs.run_high) > len(written.keys)  # some keys do have several runs
    _same_files_as_in_memory(per_doc, tmp_path, tmp_path / "out")


@pytest.mark.parametrize("presence", [False, True])
def test_narrow_keys_merged_by_packed_sorts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, presence: bool) -> None:
    """Chunk-like keys (below 2^32; values all 1 or not), 140,000 documents in presorted runs:
    runs grouped and key ranges merged by one sort of packed postings
    (:mod:`~coderiv.index.builder.combined_sort`), the same bytes as the in-memory inversion."""
    rng = np.random.default_rng(5)
    n = 140_000
    per_doc = []
    for _ in range(n):
        keys = np.unique(rng.integers(0, 2**32 - 1, rng.integers(1, 4), dtype=np.uint64, endpoint=True) % np.uint64(5000))
        keys[-1] |= np.uint64(2**32 - 8192)  # some keys of 32 bits
        vals = np.ones(len(keys), np.int32) if presence else rng.integers(1, 300, len(keys)).astype(np.int32)
        per_doc.append((np.unique(keys), vals))
    sorts = []
    real = merge.sort_packed
    monkeypatch.setattr(merge, "sort_packed", lambda *a, **k: sorts.append(1) or real(*a, **k))
    weights = np.array([len(k) for k, _ in per_doc], np.int64)
    write_store(_sources(per_doc, np.arange(n)), "terms", n, weights, tmp_path / "out", tmp_path,
                range_postings=30_000, workers=1, merge_entries=700)
    assert len(sorts) > 10  # the packed merge ran, range by range
    written = Postings.load(tmp_path / "out", n, presence=presence, split=True)
    assert len(written.docs.run_high) > len(written.keys)  # some keys do have several runs
    _same_files_as_in_memory(per_doc, tmp_path, tmp_path / "out", presence)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(1, 120),
    pool=st.integers(1, 400),
    top=st.sampled_from([1, 200, 255, 256, 70_000, 2**32 - 1]),
    range_postings=st.integers(1, 60),
    merge_entries=st.integers(1, 60),
    seed=st.integers(0, 2**32 - 1),
    compiled=st.booleans(),
    widest_key=st.sampled_from([2**32 - 1, 2**64 - 1]),
)
@pytest.mark.slow
def test_any_range_and_merge_size_gives_the_same_bytes(
    n: int, pool: int, top: int, range_postings: int, merge_entries: int, seed: int, compiled: bool, widest_key: int
) -> None:
    """Random collections (empty documents, keys shared or not, values needing 1 to 4 bytes,
    32-bit keys as chunk ids or 64-bit as terms), any document range size and any merge
    budget: the same bytes as the in-memory inversion."""
    rng = np.random.default_rng(seed)
    keys_pool = rng.integers(0, widest_key, pool, dtype=np.uint64, endpoint=True)
    per_doc = []
    for _ in range(n):
        keys = np.unique(rng.choice(keys_pool, int(rng.integers(0, 12))))
        per_doc.append((keys, rng.integers(1, top, len(keys), endpoint=True).astype(np.int64)))
    weights = np.array([len(k) for k, _ in per_doc], np.int64)
    folder = Path(tempfile.mkdtemp())
    try:
        with _loops(compiled):
            written = write_store(_sources(per_doc, rng.permutation(n)), "terms", n, weights, folder / "out", folder,
                                  range_postings=range_postings, workers=1, merge_entries=merge_entries)
        presence = top == 1 and written.n_postings > 0
        assert written.is_presence == presence
        _same_files_as_in_memory(per_doc, folder, folder / "out", presence)
        assert sorted(p.name for p in folder.iterdir()) == ["expected", "out"]  # no segment left behind
    finally:
        shutil.rmtree(folder)


def test_npy_writer_writes_what_np_save_writes(tmp_path: Path) -> None:
    """Pieces appended (none, empty, several) give the bytes of one ``np.save``."""
    for dtype in (np.uint8, np.uint16, np.int64, np.uint64):
        pieces = [np.arange(5), np.empty(0), np.arange(7, 1000)]
        for count in range(len(pieces) + 1):
            writer = NpyWriter(tmp_path / "w.npy", np.dtype(dtype))
            for piece in pieces[:count]:
                writer.append(piece)
            writer.close()
            whole = np.concatenate([np.empty(0), *pieces[:count]]).astype(dtype)
            np.save(tmp_path / "s.npy", whole)
            assert (tmp_path / "w.npy").read_bytes() == (tmp_path / "s.npy").read_bytes()


def _run_segments(
    per_doc: list[tuple[np.ndarray, np.ndarray]], cuts: list[int], folder: Path, partitioned: list[bool],
) -> list[Segment]:
    """The documents cut into runs at ``cuts``, each saved as a presorted run's segment:
    partitioned (:mod:`~coderiv.index.builder.key_partition`) or sorted by (key, document)."""
    segments = []
    for number, (a, b) in enumerate(zip([0, *cuts], [*cuts, len(per_doc)])):
        keys = np.concatenate([k for k, _ in per_doc[a:b]]).astype(np.uint64)
        vals = np.concatenate([v for _, v in per_doc[a:b]]).astype(np.uint32)
        counts = np.array([len(k) for k, _ in per_doc[a:b]], np.int64)
        split = key_partition.partition_run(keys, counts, vals, np.uint16 if b - a <= 1 << 16 else np.uint32)
        if partitioned[number]:
            assert split is not None
            segments.append(save_partitioned(folder / f"run{number}", split, a))
        else:
            grouped = compiled_writer.group_run(keys, counts, a, vals)
            segments.append(save_segment(folder / f"run{number}", *grouped, a, b - a))
    return segments


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize(("presence", "partitioned"), [(True, "all"), (False, "all"), (True, "some"), (False, "some")])
def test_partitioned_runs_merge_to_the_in_memory_inversion(tmp_path: Path, compiled: bool, presence: bool, partitioned: str) -> None:
    """Runs of chunk-like keys (below 2^32, one of them of 32 bits, values all 1 or not) kept
    as partitions of their keys and merged by ranges of whole partitions (here of at most 50
    postings: hundreds of ranges), or (``some``) beside runs sorted by key, which the merge then
    takes all by key: the bytes of the in-memory inversion either way."""
    rng = np.random.default_rng(8)
    per_doc = []
    for d in range(3000):
        keys = np.unique(rng.integers(0, 2**32 - 1, int(rng.integers(0, 9)), dtype=np.uint64, endpoint=True))
        if d == 1500:
            keys = np.append(keys[keys < 2**32 - 1], np.uint64(2**32 - 1))
        vals = np.ones(len(keys), np.int32) if presence else rng.integers(1, 70_000, len(keys)).astype(np.int32)
        per_doc.append((keys, vals))
    kinds = [True, True, True] if partitioned == "all" else [True, False, True]
    with _loops(compiled):
        segments = _run_segments(per_doc, [1000, 2000], tmp_path, kinds)
        assert segments[0].parts is not None and segments[0].shift == 16 and (segments[1].parts is not None) == kinds[1]
        merge.merge_segments(segments, tmp_path / "out", 50)
    _same_files_as_in_memory(per_doc, tmp_path, tmp_path / "out")
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith("-by-key")]  # the sorted copies removed


def test_a_run_without_postings_beside_partitioned_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run whose documents have no postings of the store is a sorted segment of nothing: the
    others are still merged by partitions (none is sorted first), with the in-memory bytes."""
    rng = np.random.default_rng(10)
    per_doc = [(np.unique(rng.integers(0, 2**32 - 1, 4, dtype=np.uint64)), np.ones(4, np.int32)) for _ in range(100)]
    per_doc[40:60] = [(np.empty(0, np.uint64), np.empty(0, np.int32))] * 20
    segments = _run_segments(per_doc, [40, 60], tmp_path, [True, False, True])
    assert segments[1].n_postings == 0
    monkeypatch.setattr(merge, "_sorted", lambda segment: pytest.fail("a partitioned run was sorted"))
    merge.merge_segments(segments, tmp_path / "out", 30)
    _same_files_as_in_memory(per_doc, tmp_path, tmp_path / "out")


def test_partitioned_runs_of_different_widths_merge_by_the_widest(tmp_path: Path) -> None:
    """A run whose keys all lie below 4,096 (shift 0: a partition per key value) and runs of 32-bit
    keys (shift 16): the merge's units are the widest run's partitions."""
    rng = np.random.default_rng(9)
    narrow = [(np.unique(rng.integers(0, 4095, 5, dtype=np.uint64)), np.ones(5, np.int32)) for _ in range(200)]
    wide = [(np.unique(rng.integers(0, 2**32 - 1, 5, dtype=np.uint64)), np.ones(5, np.int32)) for _ in range(200)]
    per_doc = [(k, np.ones(len(k), np.int32)) for k, _ in wide[:100] + narrow + wide[100:]]
    segments = _run_segments(per_doc, [100, 300], tmp_path, [True, True, True])
    assert [s.shift for s in segments] == [16, 0, 16]
    merge.merge_segments(segments, tmp_path / "out", 30)
    _same_files_as_in_memory(per_doc, tmp_path, tmp_path / "out")


def _generation_bytes(root: Path) -> dict[str, bytes]:
    """Every file of an index's generation but the manifest (which has the creation time)."""
    generation = max(root.glob("gen-*"))
    files = [p for p in sorted(generation.rglob("*")) if p.is_file() and p.name != "manifest.json"]
    return {str(p.relative_to(generation)): p.read_bytes() for p in files}


@pytest.mark.parametrize("order", ["ids", "shuffled", "late"])
def test_runs_sorted_during_analysis_give_the_range_sorts_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, order: str) -> None:
    """A fresh build whose runs are sorted while analysis goes on writes the bytes of the build
    sorted by document range afterwards, and writes no forward files for its runs. Documents not
    given in id order (their run numbers are not 0, 1, …) fall back to the range sorts, with the
    same bytes; when the order breaks late (``late``), the runs already sorted get their forward
    files back from their segments. The chunk store's runs are partitioned by key
    (:mod:`~coderiv.index.builder.key_partition`), the terms store's sorted."""
    saved = spill.save_segment
    kept: list[Segment] = []  # every presorted segment

    def saving_segment(*args: object, **kwargs: object) -> Segment:
        segment = saved(*args, **kwargs)  # type: ignore[arg-type]
        kept.append(segment)
        return segment

    saved_partitioned = spill.save_partitioned

    def saving_partitioned(*args: object, **kwargs: object) -> Segment:
        segment = saved_partitioned(*args, **kwargs)  # type: ignore[arg-type]
        kept.append(segment)
        return segment

    monkeypatch.setattr(spill, "save_segment", saving_segment)
    monkeypatch.setattr(spill, "save_partitioned", saving_partitioned)
    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(40)]
    docs = [RawDocument(f"doc{i:04d}.txt", " ".join(rng.choice(words, int(rng.integers(1, 60)))).encode()) for i in range(300)]
    if order == "shuffled":
        docs = [docs[i] for i in rng.permutation(len(docs))]
    elif order == "late":
        docs = docs[:280] + docs[280:][::-1]
        compiled_terms.load()  # the runs grouped by the compiled loop (coderiv[fast]), when installed
    stores = [StoreSpec.create("chunks", n=4)]
    monkeypatch.setattr("coderiv.index.builder.spill.RUN_POSTINGS", 500)  # many runs
    monkeypatch.setattr("coderiv.index.builder.writer.RANGE_POSTINGS", 700)
    monkeypatch.setattr("coderiv.index.builder.analysis_workers.BATCH_DOCS", 50)  # runs presorted before the order breaks late
    ranged, forward = [], []
    invert_ranges, save_forward = writer.invert_ranges, spill.save_forward

    def counting(*args: object, **kwargs: object) -> list[Segment]:
        ranged.append(args[1])
        return invert_ranges(*args, **kwargs)  # type: ignore[arg-type]

    def saving(*args: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        forward.append(args[1])
        return save_forward(*args)  # type: ignore[arg-type]

    monkeypatch.setattr("coderiv.index.builder.writer.invert_ranges", counting)
    monkeypatch.setattr("coderiv.index.builder.spill.save_forward", saving)
    Index.update_from(docs, tmp_path / "presorted", stores=stores, workers=1)
    assert ranged == ([] if order == "ids" else ["terms", "chunks:bits=32,n=4"])
    assert (len(forward) == 0) == (order == "ids")
    assert any(segment.parts is not None for segment in kept) == (order != "shuffled")  # the chunk store's runs partitioned
    monkeypatch.setattr("coderiv.index.builder.writer.presorted_segments", lambda sources, name: None)
    Index.update_from(docs, tmp_path / "ranged", stores=stores, workers=2)
    assert _generation_bytes(tmp_path / "presorted") == _generation_bytes(tmp_path / "ranged")
    assert len(list((tmp_path / "presorted").rglob("tmp-*"))) == 0  # no scratch left behind


@pytest.mark.parametrize(("n_docs", "top"), [(3, 7), (1 << 16, 65_535), (1 << 16 | 1, 65_536), (None, 2**32 - 1)])
def test_segment_files_in_two_bytes_read_back_the_same(tmp_path: Path, n_docs: int | None, top: int) -> None:
    """A presorted run's documents (less its first number) and values are written in 2 bytes when
    they fit, else 4; reads give the same uint32 numbers either way."""
    rng = np.random.default_rng(1)
    base = 70_000 if n_docs is not None else 0
    docs = np.sort(rng.integers(base, base + (n_docs or 2**31), 1000)).astype(np.uint32)
    vals = rng.integers(1, top, 1000, endpoint=True).astype(np.uint32)
    vals[0] = top
    keys, counts = np.array([3, 9], np.uint64), np.array([400, 600], np.uint32)
    maxima = np.array([vals[:400].max(), vals[400:].max()], np.uint32)
    segment = save_segment(tmp_path / "s", keys, counts, docs, vals, maxima, base, n_docs)
    assert (segment.narrow_docs, segment.narrow_vals) == (n_docs is not None and n_docs <= 1 << 16, top < 1 << 16)
    assert (tmp_path / "s" / "docs.bin").stat().st_size == 1000 * (2 if segment.narrow_docs else 4)
    assert np.array_equal(segment.read("docs", 0, 1000), docs) and np.array_equal(segment.read("vals", 0, 1000), vals)
    out = np.empty(10, np.uint32)
    segment.read_into("docs", 990, out)
    assert np.array_equal(out, docs[990:]) and segment.max_val == top


def test_chunk_segments_in_eight_bytes_a_posting_read_back_the_same(tmp_path: Path) -> None:
    """Keys below 2^32 in 4 bytes, postings per key in 2, documents in 2, and values all 1 (a
    presence store) not written at all: 8 bytes a posting; reads give uint64 keys, uint32 rest."""
    keys = np.array([3, 2**32 - 1], np.uint64)
    counts = np.array([2, 1], np.uint32)
    docs = np.array([70_000, 70_005, 70_001], np.uint32)
    ones = np.ones(3, np.uint32)
    segment = save_segment(tmp_path / "s", keys, counts, docs, ones, np.ones(2, np.uint32), 70_000, 10)
    assert segment.narrow_keys and segment.narrow_counts and segment.constant
    assert sorted(p.name for p in (tmp_path / "s").iterdir()) == ["counts.bin", "docs.bin", "keys.bin"]
    assert sum(p.stat().st_size for p in (tmp_path / "s").iterdir()) == 2 * 4 + 2 * 2 + 3 * 2
    assert segment.read("keys", 0, 2).tolist() == [3, 2**32 - 1] and segment.read("keys", 0, 2).dtype == np.uint64
    assert segment.read("docs", 1, 2).tolist() == [70_005, 70_001] and segment.read("counts", 0, 2).tolist() == [2, 1]
    assert segment.read("vals", 0, 3).tolist() == [1, 1, 1] and segment.read("max", 1, 1).tolist() == [1]
    wide = save_segment(tmp_path / "w", np.array([2**32], np.uint64), np.array([70_000], np.uint32),
                                np.arange(70_000, dtype=np.uint32), np.full(70_000, 2, np.uint32), np.array([2], np.uint32))
    assert not (wide.narrow_keys or wide.narrow_counts) and wide.constant and wide.read("keys", 0, 1).tolist() == [2**32]


def test_counts_past_two_bytes_travel_and_sort_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch whose counts need 4 bytes (a word 70,000 times) beside batches in 2 bytes: the
    presorted build and the range sorts write the same files, and the count is kept whole."""
    docs = [RawDocument(f"d{i:03d}.txt", f"alpha beta{i % 7} gamma{i}".encode()) for i in range(40)]
    docs.insert(20, RawDocument("d019x.txt", b"many " * 70_000 + b"alpha"))
    monkeypatch.setattr("coderiv.index.builder.analysis_workers.BATCH_DOCS", 8)  # several batches, one of them wide
    monkeypatch.setattr("coderiv.index.builder.spill.RUN_POSTINGS", 30)
    Index.update_from(docs, tmp_path / "presorted", workers=1)
    monkeypatch.setattr("coderiv.index.builder.writer.presorted_segments", lambda sources, name: None)
    Index.update_from(docs, tmp_path / "ranged", workers=1)
    assert _generation_bytes(tmp_path / "presorted") == _generation_bytes(tmp_path / "ranged")
    index = Index.open(tmp_path / "presorted")
    assert int(np.max(index.terms.maxvals)) == 70_000 and int(index.doc_lengths[index.number("d019x.txt")]) == 70_001


def test_a_set_stop_ends_the_merge_between_key_ranges(tmp_path: Path) -> None:
    """The thread writing a report-ready index's chunk store is told to stop when the terms
    store fails: the merge raises before its next key range, leaving the rest unwritten."""
    per_doc = [(np.array([i, 10**6 + i], np.uint64), np.ones(2, np.int32)) for i in range(50)]
    stop = threading.Event()
    stop.set()
    with pytest.raises(merge.WriteStopped, match="writing out stopped"):
        write_store(_sources(per_doc, np.arange(50)), "terms", 50, np.full(50, 2), tmp_path / "out", tmp_path,
                    range_postings=40, workers=1, merge_entries=8, stop=stop)
    assert (tmp_path / "out" / "keys.npy").stat().st_size < 128 + 100 * 8  # the header, at most one range


def test_a_failing_terms_store_fails_a_report_ready_build_cleanly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The chunk store is written by a thread beside the terms store; an error in the terms
    store's statistics is the build's error, and no generation is left behind."""
    source = tmp_path / "docs"
    source.mkdir()
    for i in range(30):
        (source / f"{i:02d}.txt").write_text(f"alpha beta gamma delta {i} epsilon zeta eta theta")

    def broken(*args: object) -> None:
        raise RuntimeError("statistics failed")

    monkeypatch.setattr("coderiv.index.builder.cosine_statistics.cosine_statistics", broken)  # imported by the build when it runs
    with pytest.raises(RuntimeError, match="statistics failed"):
        Index.update_from(source, tmp_path / "index", stores=[StoreSpec.create("chunks", n=5)], workers=1)
    assert not list((tmp_path / "index").glob("gen-*")) and not list((tmp_path / "index").glob("tmp-*"))


def test_a_merged_range_s_runs_start_where_the_high_bits_change() -> None:
    docs = np.array([3, 70_000, 70_001, 140_000, 5, 65_535, 65_536], np.uint32)
    run_at, run_high = merge.range_runs(docs)
    assert run_at.tolist() == [0, 1, 3, 4, 6] and run_high.tolist() == [0, 1, 2, 0, 1]
    assert [a.tolist() for a in merge.range_runs(np.array([7, 0, 65_535], np.uint32))] == [[0], [0]]
    assert [len(a) for a in merge.range_runs(np.zeros(0, np.uint32))] == [0, 0]
