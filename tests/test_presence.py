"""Presence stores (issue 27): a store whose every value is 1 (a report-ready index's chunk
store) writes neither ``vals.npy`` nor ``maxvals.npy``, its manifest record says
``"values": "presence"``, and every read and every answer is the one the files gave."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from click.testing import CliRunner

from coderiv.cli.main import main
from coderiv.errors import CorruptIndexError
from coderiv.index.builder import writer
from coderiv.index.builder.invert import Sources
from coderiv.index.builder.spill import Run
from coderiv.index.builder.writer import write_store
from coderiv.index.format.counts import OVER_AT_FILE, OVER_VAL_FILE
from coderiv.index.format.postings import Postings
from coderiv.index.index import Index
from coderiv.pairs.run import compute_pairs
from coderiv.ranking import compiled_probes, kernel, topk
from coderiv.ranking.containment import chunk_store_spec
from coderiv.ranking.measures import MEASURES
from coderiv.ranking.search import Searcher
from tests.support.files import write_docs

CHUNKS = chunk_store_spec().name  # "chunks:bits=32,n=5": store-1 of a report-ready index
#: what a presence store's folder holds: no values, no largest values, no side table
#: A chunk store's files: keys and offsets split (format 8), no values.
PRESENCE_FILES = [
    "doc_run_at.npy", "doc_run_high.npy", "docs.npy", "key_run_at.npy", "key_run_high.npy", "keys.npy",
    "ptr.npy", "ptr_run_at.npy", "ptr_run_high.npy",
]
VALUE_FILES = ["maxvals.npy", "vals.npy", OVER_AT_FILE, OVER_VAL_FILE]


def _corpus(seed: int, n: int) -> dict[str, str]:
    """``n`` documents of 40–120 words, some of them made of passages of earlier ones (shared
    chunks), words repeated within a document (terms with counts above 1)."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(300)]
    docs: dict[str, str] = {}
    for d in range(n):
        text = [rng.choice(words) for _ in range(rng.randint(40, 120))]
        if docs and rng.random() < 0.6:
            source = rng.choice(list(docs.values())).split()
            start = rng.randrange(len(source) - 15)
            at = rng.randrange(len(text))
            text[at:at] = source[start : start + rng.randint(10, 30)]
        docs[f"d{d:03d}.txt"] = " ".join(text)
    return docs


def _index(runner: CliRunner, src: Path, idx: Path, *flags: str) -> None:
    result = runner.invoke(main, ["index", str(src), "--index", str(idx), "-q", "--workers", "1", *flags])
    assert result.exit_code == 0, result.output


def _with_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer as before presence stores: every store writes its values (all 1 or not)."""
    monkeypatch.setattr(writer, "presence_segments", lambda segments: False)


def _record(root: Path, name: str) -> dict[str, object]:
    index = Index.open(root)
    record: dict[str, object] = index.manifest["stores"][name]
    return record


def _store_folder(root: Path, name: str) -> Path:
    index = Index.open(root)
    return index.generation / str(index.manifest["stores"][name]["dir"])


@pytest.fixture
def built(tmp_path: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    """(source, report-ready index as written now, the same index written with the values files)."""
    src = write_docs(tmp_path / "src", _corpus(1, 40))
    _index(runner, src, tmp_path / "presence", "--report-ready")
    with monkeypatch.context() as patch:
        _with_files(patch)
        _index(runner, src, tmp_path / "files", "--report-ready")
    return src, tmp_path / "presence", tmp_path / "files"


def test_a_report_ready_chunk_store_has_no_values_files(built: tuple[Path, Path, Path]) -> None:
    _, presence, files = built
    chunk_folder = _store_folder(presence, CHUNKS)
    assert chunk_folder.name == "store-1"
    assert sorted(p.name for p in chunk_folder.iterdir()) == PRESENCE_FILES
    assert _record(presence, CHUNKS)["values"] == "presence"
    # the terms store has counts above 1: its values are written as before
    assert _record(presence, "terms")["values"] == "counts"
    assert set(VALUE_FILES) < {p.name for p in _store_folder(presence, "terms").iterdir()}
    assert int(np.max(np.load(_store_folder(presence, "terms") / "maxvals.npy"))) > 1
    # the old path wrote the same files plus values and largest values that are all 1
    old = _store_folder(files, CHUNKS)
    assert _record(files, CHUNKS)["values"] == "counts"
    assert sorted(p.name for p in old.iterdir()) == sorted(PRESENCE_FILES + VALUE_FILES)
    assert np.unique(np.load(old / "vals.npy")).tolist() == [1] and np.unique(np.load(old / "maxvals.npy")).tolist() == [1]
    assert len(np.load(old / OVER_AT_FILE)) == 0
    for name in PRESENCE_FILES:
        assert (chunk_folder / name).read_bytes() == (old / name).read_bytes(), name


def test_a_presence_store_reads_as_its_files_did(built: tuple[Path, Path, Path]) -> None:
    """Every public read of the presence store gives the arrays (values, types) the files gave;
    its values and largest values take no memory (zero-stride views of one byte)."""
    _, presence, files = built
    new, old = Index.open(presence).store(CHUNKS), Index.open(files).store(CHUNKS)
    assert new.is_presence and not old.is_presence
    assert new.vals._raw_low.strides == (0,) and new.maxvals.strides == (0,)
    assert (len(new.vals), len(new.maxvals)) == (len(old.vals), len(old.maxvals)) == (new.n_postings, len(new.keys))
    new.check_shapes()

    def same(a: np.ndarray, b: np.ndarray) -> None:
        assert a.dtype == b.dtype and np.array_equal(a, b)

    n_keys = len(old.keys)
    positions = np.array([0, 3, n_keys // 2, n_keys - 1, 3])
    for got, want in zip(new.slices(positions), old.slices(positions)):
        same(got, want)
    for got, want in zip(new.gather(positions), old.gather(positions)):
        same(got, want)
    same(new.maxvals_at(positions), old.maxvals_at(positions))
    same(np.asarray(new.maxvals), np.asarray(old.maxvals))
    same(np.asarray(new.vals), np.asarray(old.vals))
    same(new.vals[5:40], old.vals[5:40])
    same(new.vals.ranges(np.array([0, 7]), np.array([3, 7])), old.vals.ranges(np.array([0, 7]), np.array([3, 7])))
    some = np.array([9, 0, new.n_postings - 1, 9])
    same(new.vals.take(some), old.vals.take(some))
    for doc in range(new.n_docs):
        for got, want in zip(new.doc_keys(doc), old.doc_keys(doc)):
            same(got, want)
    for got, want in zip(new.unchecked_arrays(), old.unchecked_arrays()):
        same(np.asarray(got), np.asarray(want))
    loop_vals = new.unchecked_arrays()[3]
    assert loop_vals.flags.c_contiguous and not loop_vals.flags.writeable  # a compiled loop's usual type


def _cli_json(runner: CliRunner, args: list[str], root: Path) -> object:
    result = runner.invoke(main, [*args, "--index", str(root)])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout.replace(str(root), "INDEX"))


def test_reports_containment_and_pairs_equal_those_of_the_files(
    built: tuple[Path, Path, Path], runner: CliRunner, tmp_path: Path
) -> None:
    src, presence, files = built
    docs = _corpus(1, 40)
    query = tmp_path / "q.txt"
    query.write_text(" ".join([docs["d005.txt"], docs["d017.txt"][:300], docs["d030.txt"]]), "utf-8")
    for args in (
        ["report", str(query), "--format", "json", "-q"],
        ["query", str(query), "--method", "containment", "--format", "json"],
    ):
        got, want = _cli_json(runner, args, presence), _cli_json(runner, args, files)
        assert got == want and want, args
    assert Index.open(presence).version == "gen-000001"  # (the report read the store; nothing was added)
    for method in ("chunks", "identity5"):
        new_table, _ = compute_pairs(Index.open(presence), method)
        old_table, _ = compute_pairs(Index.open(files), method)
        rows = {doc: new_table.similar(doc) for doc in docs}
        assert rows == {doc: old_table.similar(doc) for doc in docs}
        assert sum(len(row) for row in rows.values()) > 10, method  # documents do share chunks


def test_a_missing_values_file_of_a_store_not_declared_presence_is_damage(
    built: tuple[Path, Path, Path], runner: CliRunner, tmp_path: Path
) -> None:
    _, _, files = built
    folder = _store_folder(files, CHUNKS)
    (folder / "vals.npy").unlink()
    with pytest.raises(CorruptIndexError, match=r"store-1/vals\.npy") as caught:
        Index.open(files).store(CHUNKS)
    assert "\n" not in str(caught.value)
    with pytest.raises(CorruptIndexError, match=r"store-1/vals\.npy") as caught:
        Postings.load(folder, 40, split=True)  # below the manifest's checks: the store itself
    assert "\n" not in str(caught.value)
    (tmp_path / "q.txt").write_text(_corpus(1, 40)["d005.txt"], "utf-8")
    result = runner.invoke(main, ["report", str(tmp_path / "q.txt"), "--index", str(files), "-q"])
    assert result.exit_code != 0 and len(result.output.strip().splitlines()) == 1 and "vals.npy" in result.output


def test_a_store_record_without_its_values_kind_is_refused(built: tuple[Path, Path, Path]) -> None:
    """Format 8 records every store's ``values``; a record without it (a manifest of an older
    writer, or a damaged one) is refused in one line, never guessed."""
    _, _, files = built
    manifest_path = Index.open(files).generation / "manifest.json"
    manifest = json.loads(manifest_path.read_text("utf-8"))
    for record in manifest["stores"].values():
        del record["values"]
    manifest_path.write_text(json.dumps(manifest), "utf-8")
    with pytest.raises(CorruptIndexError, match="store-1 has values None, which this coderiv cannot read; rebuild it"):
        Index.open(files).store(CHUNKS)


def test_an_unknown_values_kind_is_refused(built: tuple[Path, Path, Path]) -> None:
    _, presence, _ = built
    manifest_path = Index.open(presence).generation / "manifest.json"
    manifest = json.loads(manifest_path.read_text("utf-8"))
    manifest["stores"][CHUNKS]["values"] = "bits"
    manifest_path.write_text(json.dumps(manifest), "utf-8")
    with pytest.raises(CorruptIndexError, match="store-1 has values 'bits', which this coderiv cannot read; rebuild it"):
        Index.open(presence).store(CHUNKS)


def test_an_update_keeps_presence_and_equals_a_fresh_build(built: tuple[Path, Path, Path], runner: CliRunner, tmp_path: Path) -> None:
    """Documents added, one changed and one removed: the update (postings kept from the presence
    store, others analysed) writes a presence store again, the bytes of a fresh build's."""
    src, presence, _ = built
    more = _corpus(2, 12)
    write_docs(src, {f"e{name}": text for name, text in more.items()})
    (src / "d003.txt").write_text(more["d000.txt"] + " w1 w2 w3 w4 w5 w6", "utf-8")
    (src / "d011.txt").unlink()
    _index(runner, src, presence)  # the flag not given again
    updated = Index.open(presence)
    assert updated.version == "gen-000002" and updated.n_docs == 40 + 12 - 1
    assert _record(presence, CHUNKS)["values"] == "presence"
    assert sorted(p.name for p in _store_folder(presence, CHUNKS).iterdir()) == PRESENCE_FILES
    _index(runner, src, tmp_path / "fresh", "--report-ready")
    for name in PRESENCE_FILES:
        assert (_store_folder(presence, CHUNKS) / name).read_bytes() == (_store_folder(tmp_path / "fresh", CHUNKS) / name).read_bytes()
    table, _ = compute_pairs(updated, "chunks")
    fresh, _ = compute_pairs(Index.open(tmp_path / "fresh"), "chunks")
    assert {d: table.similar(d) for d in updated.doc_ids} == {d: fresh.similar(d) for d in updated.doc_ids}


def _sources(per_doc: list[tuple[np.ndarray, np.ndarray]]) -> Sources:
    doc_ptr = np.zeros(len(per_doc) + 1, np.int64)
    np.cumsum([len(k) for k, _ in per_doc], out=doc_ptr[1:])
    keys = np.concatenate([k for k, _ in per_doc]).astype(np.uint64)
    vals = np.concatenate([v for _, v in per_doc]).astype(np.uint32)
    run = Run([f"d{i}" for i in range(len(per_doc))], {"chunks": (doc_ptr, keys, vals)})
    return Sources([run], [np.arange(len(per_doc))], {}, np.empty(0, np.int64))


@pytest.mark.parametrize("top", [1, 2])
def test_one_value_of_two_writes_the_values(tmp_path: Path, top: int) -> None:
    """Chunk-like keys all 1 but (``top`` 2) one posting: that store writes its values as
    always and reads the 2 back; the all-1 store writes none."""
    rng = np.random.default_rng(4)
    per_doc = [(np.unique(rng.integers(0, 2**32, 6, dtype=np.uint64)), np.ones(6, np.int32)) for _ in range(200)]
    per_doc = [(keys, np.ones(len(keys), np.int32)) for keys, _ in per_doc]
    per_doc[57][1][2] = top
    written = write_store(_sources(per_doc), "chunks", 200, np.full(200, 6), tmp_path / "out", tmp_path, workers=1)
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    if top == 1:
        assert written.is_presence and names == PRESENCE_FILES
        return
    assert not written.is_presence and names == sorted(PRESENCE_FILES + VALUE_FILES)
    key = per_doc[57][0][2]
    position = int(written.lookup(np.array([key], np.uint64))[0])
    docs, vals, _ = written.slices(np.array([position]))
    assert vals[docs.tolist().index(57)] == 2 and int(written.maxvals_at(np.array([position]))[0]) == 2
    assert int(np.asarray(written.vals).sum()) == sum(len(k) for k, _ in per_doc) + 1
    shutil.rmtree(tmp_path / "out")


def test_a_terms_store_of_single_occurrences_ranks_as_its_files_did(
    tmp_path: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No document repeats a word: the terms store is a presence store too, and every measure's
    ranking (pruned, by the numpy passes and by the compiled ones where numba is installed, which
    read its values unchecked) and identity5's pairs (weighted by the values) equal the files'."""
    docs = {name: " ".join(dict.fromkeys(text.split())) for name, text in _corpus(3, 30).items()}
    src = write_docs(tmp_path / "src", docs)
    _index(runner, src, tmp_path / "presence")
    with monkeypatch.context() as patch:
        _with_files(patch)
        _index(runner, src, tmp_path / "files")
    assert _record(tmp_path / "presence", "terms")["values"] == "presence"
    assert _record(tmp_path / "files", "terms")["values"] == "counts"
    new, old = Index.open(tmp_path / "presence"), Index.open(tmp_path / "files")
    kinds: list[type[kernel.NumpyPasses]] = [kernel.NumpyPasses]
    if compiled_probes.available() and compiled_probes.load():
        kinds.append(kernel.CompiledPasses)
    query = " ".join([docs["d004.txt"], docs["d020.txt"]])
    for kind in kinds:
        with mock.patch.object(topk, "_passes", kind):
            for measure in MEASURES.names():
                got = [(m.doc_id, m.score) for m in Searcher(new).search(query, measure, top=5).matches]
                want = [(m.doc_id, m.score) for m in Searcher(old).search(query, measure, top=5).matches]
                assert got == want and len(want) == 5, (kind, measure)
    assert np.array_equal(np.load(new.generation / "doc_norms.npy"), np.load(old.generation / "doc_norms.npy"))
    new_table, _ = compute_pairs(new, "identity5")
    old_table, _ = compute_pairs(old, "identity5")
    assert {d: new_table.similar(d) for d in docs} == {d: old_table.similar(d) for d in docs}
