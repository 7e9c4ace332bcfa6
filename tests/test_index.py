"""The persistent index: building, incremental updates, atomic commits, damage detection."""

from __future__ import annotations

import io
import json
import os
import re
import tarfile

import numpy as np
import pytest

from coderiv import Index, Searcher
from coderiv.errors import CoderivError, CorruptIndexError, IndexNotFoundError, InputError
from coderiv.index.format.generation import FORMAT_VERSION
from coderiv.index.format.storage import read_manifest, verify_files
from coderiv.index.index import resolve_index_path
from coderiv.keys.kinds import StoreSpec
from coderiv.text.analysis import AnalysisSettings
from tests.support.files import write_docs

DOCS = {
    "a.txt": "the quick brown fox jumps over the lazy dog",
    "b.txt": "a quick brown dog outpaces a lazy fox",
    "sub/c.txt": "lorem ipsum dolor sit amet consectetur",
    "sub/d.html": "<html><body><p>quick brown &amp; lazy</p><script>fox()</script></body></html>",
}


def arrays_of(index: Index) -> dict[str, np.ndarray]:
    """Every array of every store, plus document tables, for exact comparisons."""
    out = {
        "doc_lengths": np.asarray(index.doc_lengths),
        "doc_norms": np.asarray(index.doc_norms),
        "term_max_unit": np.asarray(index.term_max_unit),
    }
    for name in index.specs:
        store = index.store(name)
        for field in ("keys", "ptr", "docs", "vals", "maxvals"):
            out[f"{name}.{field}"] = np.asarray(getattr(store, field))
    return out


def assert_same_index(a: Index, b: Index) -> None:
    assert a.doc_ids == b.doc_ids
    assert a.doc_sha256 == b.doc_sha256
    left, right = arrays_of(a), arrays_of(b)
    assert left.keys() == right.keys()
    for name in left:
        np.testing.assert_array_equal(left[name], right[name], err_msg=name)


def test_build_counts_documents_terms_and_lengths(tmp_path):
    write_docs(tmp_path / "c", DOCS)
    report = Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    assert sorted(report.added) == sorted(DOCS) and report.n_docs == 4
    index = Index.open(tmp_path / "i")
    assert index.doc_ids == ["a.txt", "b.txt", "sub/c.txt", "sub/d.html"]
    # stopped: "the", "over", "a" are stopwords; the HTML's script is not text
    assert list(index.doc_lengths) == [6, 6, 6, 3]
    assert index.analyzer.terms(DOCS["a.txt"]) == ["quick", "brown", "fox", "jumps", "lazy", "dog"]
    info = index.info()
    assert info["documents"] == 4 and info["distinct_terms"] == 13 and info["postings"] == 21


def test_incremental_update_equals_full_rebuild(tmp_path):
    write_docs(tmp_path / "c", DOCS)
    Index.update_from(tmp_path / "c", tmp_path / "inc", workers=1)
    (tmp_path / "c" / "b.txt").write_text("a quick red dog", "utf-8")  # changed
    (tmp_path / "c" / "sub" / "c.txt").unlink()  # deleted
    write_docs(tmp_path / "c", {"e.txt": "new quick document about a fox"})  # added
    report = Index.update_from(tmp_path / "c", tmp_path / "inc", workers=1)
    assert (report.added, report.changed, report.removed, report.unchanged) == (["e.txt"], ["b.txt"], ["sub/c.txt"], 2)
    Index.update_from(tmp_path / "c", tmp_path / "full", workers=1)
    assert_same_index(Index.open(tmp_path / "inc"), Index.open(tmp_path / "full"))


def test_incremental_update_with_a_chunk_store_equals_rebuild(tmp_path):
    chunks = [StoreSpec.create("chunks", n=2)]
    write_docs(tmp_path / "c", DOCS)
    Index.update_from(tmp_path / "c", tmp_path / "inc", stores=chunks, workers=1)
    (tmp_path / "c" / "a.txt").write_text("the slow brown fox", "utf-8")
    Index.update_from(tmp_path / "c", tmp_path / "inc", workers=1)  # keeps its chunk store
    Index.update_from(tmp_path / "c", tmp_path / "full", stores=chunks, workers=2)
    inc, full = Index.open(tmp_path / "inc"), Index.open(tmp_path / "full")
    assert sorted(inc.specs) == ["chunks:bits=32,n=2", "terms"]
    assert_same_index(inc, full)


@pytest.mark.slow
def test_tiny_runs_and_ranges_give_the_same_index(tmp_path, monkeypatch):
    """Spilling many runs, inverting many document ranges and merging them changes nothing."""
    texts = {f"doc{i:03d}.txt": f"word{i % 7} common text number{i} word{i % 3} more{i % 11}" for i in range(120)}
    write_docs(tmp_path / "c", texts)
    chunks = [StoreSpec.create("chunks", n=2)]
    Index.update_from(tmp_path / "c", tmp_path / "one", stores=chunks, workers=1)
    monkeypatch.setattr("coderiv.index.builder.spill.RUN_POSTINGS", 7)
    monkeypatch.setattr("coderiv.index.builder.writer.RANGE_POSTINGS", 13)
    monkeypatch.setattr("coderiv.index.builder.cosine_statistics.CHUNK_POSTINGS", 13)
    monkeypatch.setattr("coderiv.index.builder.invert.ENCODE_CHUNK", 5)
    monkeypatch.setattr("coderiv.index.format.split_numbers.ENCODE_CHUNK", 5)
    Index.update_from(tmp_path / "c", tmp_path / "many", stores=chunks, workers=2)  # ranges in 2 processes
    assert_same_index(Index.open(tmp_path / "one"), Index.open(tmp_path / "many"))
    for i in range(0, 120, 9):  # an update through many ranges, with kept documents from the old index
        (tmp_path / "c" / f"doc{i:03d}.txt").write_text(f"changed text {i} number{i}", "utf-8")
    (tmp_path / "c" / "doc005.txt").unlink()
    Index.update_from(tmp_path / "c", tmp_path / "many", workers=1)
    monkeypatch.undo()
    Index.update_from(tmp_path / "c", tmp_path / "fresh", stores=chunks, workers=1)
    assert_same_index(Index.open(tmp_path / "many"), Index.open(tmp_path / "fresh"))


def test_unchanged_collection_writes_no_new_generation(tmp_path):
    write_docs(tmp_path / "c", DOCS)
    Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    report = Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    assert not report.modified and report.unchanged == 4
    assert Index.open(tmp_path / "i").generation.name == "gen-000001"


def test_changed_analysis_settings_rebuild_everything(tmp_path):
    write_docs(tmp_path / "c", DOCS)
    Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    report = Index.update_from(tmp_path / "c", tmp_path / "i", settings=AnalysisSettings(stop=False), workers=1)
    assert report.rebuilt and "no stopping" in report.rebuilt
    index = Index.open(tmp_path / "i")
    assert not index.settings.stop and list(index.doc_lengths)[0] == 9


def test_parallel_and_serial_builds_are_identical(tmp_path):
    write_docs(tmp_path / "c", {f"doc{i:03d}.txt": f"word{i % 7} common text number {i} word{i % 3}" for i in range(300)})
    Index.update_from(tmp_path / "c", tmp_path / "serial", workers=1)
    Index.update_from(tmp_path / "c", tmp_path / "parallel", workers=2)
    assert_same_index(Index.open(tmp_path / "serial"), Index.open(tmp_path / "parallel"))


def test_tar_archive_gives_the_same_index_as_the_folder(tmp_path):
    write_docs(tmp_path / "c", DOCS)
    with tarfile.open(tmp_path / "c.tar.gz", "w:gz") as archive:
        for name in reversed(sorted(DOCS)):  # archive order must not matter
            data = DOCS[name].encode()
            member = tarfile.TarInfo(name)
            member.size = len(data)
            archive.addfile(member, io.BytesIO(data))
    Index.update_from(tmp_path / "c", tmp_path / "folder", workers=1)
    Index.update_from(tmp_path / "c.tar.gz", tmp_path / "tar", workers=1)
    assert_same_index(Index.open(tmp_path / "folder"), Index.open(tmp_path / "tar"))


def test_bad_files_are_reported_not_fatal(tmp_path):
    folder = write_docs(tmp_path / "c", {"good.txt": "a real document about rivers"})
    (folder / "empty.txt").write_bytes(b"")
    (folder / "stops.txt").write_text("the and of", "utf-8")
    (folder / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (folder / "latin1.txt").write_bytes("caf\xe9 rivers".encode("latin-1"))
    (folder / ".hidden.txt").write_text("never indexed", "utf-8")
    report = Index.update_from(folder, tmp_path / "i", workers=1)
    assert {s.doc_id: s.reason.split(" ")[0] for s in report.skipped} == {
        "empty.txt": "empty", "stops.txt": "empty", "image.png": "binary",
    }
    assert report.lossy == ["latin1.txt"]
    assert Index.open(tmp_path / "i").doc_ids == ["good.txt", "latin1.txt"]


def test_a_crash_during_commit_leaves_the_previous_index_intact(tmp_path, monkeypatch):
    write_docs(tmp_path / "c", DOCS)
    Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    before = Searcher(Index.open(tmp_path / "i")).search(DOCS["a.txt"]).matches
    write_docs(tmp_path / "c", {"a.txt": "completely different words now"})

    def crash(*args, **kwargs):
        raise OSError("disk on fire")

    monkeypatch.setattr("coderiv.index.format.storage.os.rename", crash)
    with pytest.raises(CoderivError, match="disk on fire; the index was left as it was before"):
        Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    monkeypatch.undo()
    index = Index.open(tmp_path / "i")
    assert index.generation.name == "gen-000001"
    assert Searcher(index).search(DOCS["a.txt"]).matches == before
    assert not list((tmp_path / "i").glob("tmp-*"))  # the staging folder was cleaned up


def test_missing_index_is_a_clear_error(tmp_path):
    with pytest.raises(IndexNotFoundError, match="no index at"):
        Index.open(tmp_path / "nothing")


@pytest.mark.parametrize("damage", ["truncate", "delete", "manifest", "pointer"])
def test_damaged_index_is_detected(tmp_path, damage):
    write_docs(tmp_path / "c", DOCS)
    Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    generation = tmp_path / "i" / "gen-000001"
    if damage == "truncate":
        path = generation / "store-0" / "docs.npy"
        path.write_bytes(path.read_bytes()[:-4])
    elif damage == "delete":
        (generation / "doc_lengths.npy").unlink()
    elif damage == "manifest":
        (generation / "manifest.json").write_text("{not json", "utf-8")
    else:
        (tmp_path / "i" / "CURRENT").write_text("gen-000009\n", "utf-8")
    with pytest.raises(CorruptIndexError):
        Index.open(tmp_path / "i")


def test_verify_finds_flipped_bytes_that_keep_the_size(tmp_path):
    write_docs(tmp_path / "c", DOCS)
    Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    assert Index.open(tmp_path / "i").verify() == []
    path = tmp_path / "i" / "gen-000001" / "store-0" / "docs.npy"
    data = bytearray(path.read_bytes())
    data[-4] ^= 0x01  # the last posting names another document, still in range: only checksums see it
    path.write_bytes(bytes(data))
    generation = tmp_path / "i" / "gen-000001"
    assert verify_files(generation, read_manifest(generation), full=True) == ["store-0/docs.npy: checksum mismatch in block 0"]
    index = Index.open(tmp_path / "i")  # reads no store
    with pytest.raises(CorruptIndexError, match="index damaged: store-0/docs.npy block 0"):  # one block: checked as the store loads
        index.store("terms")


def test_a_damaged_index_is_rebuilt_by_the_next_index_run(tmp_path):
    write_docs(tmp_path / "c", DOCS)
    Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    (tmp_path / "i" / "gen-000001" / "doc_lengths.npy").unlink()
    report = Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    assert sorted(report.added) == sorted(DOCS)
    assert Index.open(tmp_path / "i").n_docs == 4


def test_bad_sources(tmp_path):
    with pytest.raises(InputError, match="no such folder"):
        Index.update_from(tmp_path / "missing", tmp_path / "i")
    (tmp_path / "plain.txt").write_text("x", "utf-8")
    with pytest.raises(InputError, match="neither a folder nor a tar"):
        Index.update_from(tmp_path / "plain.txt", tmp_path / "i")
    (tmp_path / "emptydir").mkdir()
    with pytest.raises(CoderivError, match="no indexable documents"):
        Index.update_from(tmp_path / "emptydir", tmp_path / "i")


def test_index_location_defaults(monkeypatch, tmp_path):
    monkeypatch.delenv("CODERIV_INDEX", raising=False)
    assert str(resolve_index_path()) == ".coderiv"
    monkeypatch.setenv("CODERIV_INDEX", str(tmp_path))
    assert resolve_index_path() == tmp_path
    assert str(resolve_index_path("elsewhere")) == "elsewhere"
    assert os.fspath(resolve_index_path(tmp_path / "x")) == os.fspath(tmp_path / "x")


def test_an_index_of_another_format_version_is_refused_then_rebuilt(tmp_path):
    write_docs(tmp_path / "c", DOCS)
    Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    manifest_path = tmp_path / "i" / "gen-000001" / "manifest.json"
    manifest = json.loads(manifest_path.read_text("utf-8"))
    manifest["format_version"] = 1
    manifest_path.write_text(json.dumps(manifest), "utf-8")
    with pytest.raises(CorruptIndexError, match=f"index format 1 is not this coderiv's format {FORMAT_VERSION}; rebuild"):
        Index.open(tmp_path / "i")
    report = Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    assert sorted(report.added) == sorted(DOCS)
    assert Index.open(tmp_path / "i").manifest["format_version"] == FORMAT_VERSION


def test_a_file_over_the_size_limit_is_skipped_without_being_read(tmp_path, monkeypatch):
    monkeypatch.setattr("coderiv.text.collection.MAX_DOCUMENT_BYTES", 100)
    monkeypatch.setattr("coderiv.index.builder.analysis_workers.MAX_DOCUMENT_BYTES", 100)
    folder = write_docs(tmp_path / "c", {"small.txt": "a small document", "big.txt": "word " * 100})
    from coderiv.text import collection

    read = []
    original = collection._read_regular

    def recording(path, name):
        data, info, binary = original(path, name)
        read.append((name, len(data)))
        return data, info, binary

    monkeypatch.setattr(collection, "_read_regular", recording)
    report = Index.update_from(folder, tmp_path / "i", workers=1)
    assert [(s.doc_id, s.reason) for s in report.skipped] == [("big.txt", "too large (500 bytes > 100)")]
    assert read == [("big.txt", 0), ("small.txt", 16)]


def test_document_numbers_out_of_range_are_caught_as_the_store_loads_in_a_one_block_file(tmp_path):
    write_docs(tmp_path / "c", DOCS)
    Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    path = tmp_path / "i" / "gen-000001" / "store-0" / "docs.npy"
    data = bytearray(path.read_bytes())
    data[-4:] = (0xFFFFFFFF).to_bytes(4, "little")  # same size, last posting names document 4294967295
    path.write_bytes(bytes(data))
    # loading a store (on its first use) checks each file's first block (the .npy header's): here the whole file
    index = Index.open(tmp_path / "i")
    with pytest.raises(CorruptIndexError, match=re.escape("index damaged: store-0/docs.npy block 0; rebuild with coderiv index")):
        index.store("terms")


def test_an_open_index_keeps_serving_its_snapshot_after_an_update(tmp_path):
    write_docs(tmp_path / "c", DOCS)
    chunks = [StoreSpec.create("chunks", n=2)]
    Index.update_from(tmp_path / "c", tmp_path / "i", stores=chunks, workers=1)
    reader = Index.open(tmp_path / "i")
    before = Searcher(reader).search(DOCS["a.txt"]).matches
    write_docs(tmp_path / "c", {"a.txt": "completely different words now", "e.txt": "a new document"})
    Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    assert not (tmp_path / "i" / "gen-000001").exists()  # the old generation is gone from disk
    assert Searcher(reader).search(DOCS["a.txt"]).matches == before  # the reader still has it
    # 2-word chunks of the old generation: 6, 6, 6 and 3 terms give 5 + 5 + 5 + 2 postings
    assert reader.store("chunks:bits=32,n=2").n_postings == 5 + 5 + 5 + 2
    assert Index.open(tmp_path / "i").n_docs == 5




def test_a_file_name_that_is_not_utf8_is_indexed_under_an_escaped_id(tmp_path):
    folder = tmp_path / "c"
    write_docs(folder, {"plain.txt": "ordinary words here"})
    (folder / os.fsdecode(b"caf\xe9.txt")).write_text("the cafe menu lists coffee", "utf-8")
    with tarfile.open(tmp_path / "c.tar", "w", encoding="utf-8", errors="surrogateescape") as archive:
        archive.add(folder / os.fsdecode(b"caf\xe9.txt"), arcname=os.fsdecode(b"caf\xe9.txt"))
    for source, out in ((folder, "i"), (tmp_path / "c.tar", "t")):
        report = Index.update_from(source, tmp_path / out, workers=1)
        assert report.escaped == ["caf\\xe9.txt"]
        assert "caf\\xe9.txt" in Index.open(tmp_path / out).doc_ids
    from coderiv.text.collection import read_member

    assert read_member(folder, "caf\\xe9.txt") == b"the cafe menu lists coffee"
    assert read_member(tmp_path / "c.tar", "caf\\xe9.txt") == b"the cafe menu lists coffee"




def test_a_leading_dot_slash_is_stripped_exactly_so_hidden_members_stay_hidden(tmp_path):
    archive_path = tmp_path / "home.tar"
    with tarfile.open(archive_path, "w") as archive:
        for name, text in (("./.hidden/secret.txt", b"secret words"), ("./.git/config", b"config words"), ("./a.txt", b"plain words")):
            info = tarfile.TarInfo(name)
            info.size = len(text)
            archive.addfile(info, io.BytesIO(text))
    Index.update_from(archive_path, tmp_path / "i", workers=1)
    assert Index.open(tmp_path / "i").doc_ids == ["a.txt"]


def test_an_index_inside_its_own_collection_is_not_indexed(tmp_path):
    write_docs(tmp_path / "c", DOCS)
    Index.update_from(tmp_path / "c", tmp_path / "c" / "ix", workers=1)
    write_docs(tmp_path / "c", {"e.txt": "another document"})
    report = Index.update_from(tmp_path / "c", tmp_path / "c" / "ix", workers=1)
    assert report.added == ["e.txt"]
    assert Index.open(tmp_path / "c" / "ix").doc_ids == sorted([*DOCS, "e.txt"])


@pytest.mark.parametrize("array", ["keys", "vals"])
def test_flipped_bytes_in_keys_or_values_are_a_clear_error_when_read(tmp_path, array):
    write_docs(tmp_path / "c", {f"d{n}.txt": f"word{n} shared text number{n} more{n} other{n} " * (n + 1) for n in range(40)})
    Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    path = tmp_path / "i" / "gen-000001" / "store-0" / f"{array}.npy"
    data = bytearray(path.read_bytes())
    for offset in range(len(data) - 64, len(data)):
        data[offset] ^= 0xFF
    path.write_bytes(bytes(data))
    # a file of one block is checked whole at open (its first block holds the .npy header)
    with pytest.raises(CorruptIndexError, match=re.escape(f"index damaged: store-0/{array}.npy block 0; rebuild with coderiv index")):
        Searcher(Index.open(tmp_path / "i")).search("word3 shared text", top=5)



def test_an_update_never_reuses_damaged_postings(tmp_path):
    """Flipped bytes in the previous generation (document lengths, which an update copies and
    no structural check can judge): the update sees them and rebuilds."""
    docs = {f"d{n}.txt": f"word{n} shared text number {n} " * 3 for n in range(6)}
    write_docs(tmp_path / "c", docs)
    Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    path = tmp_path / "i" / "gen-000001" / "doc_lengths.npy"
    data = bytearray(path.read_bytes())
    for offset in range(len(data) - 16, len(data)):
        data[offset] ^= 0xFF
    path.write_bytes(bytes(data))
    write_docs(tmp_path / "c", {"d0.txt": "a changed first document"})
    report = Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    # the open checks each file's first block (here the whole table), so the damaged index does not open as the old one
    assert report.rebuilt == "the index was damaged; rebuilt with the analysis and stores it recorded"
    assert sorted(report.added) == sorted(docs) and not report.changed
    Index.update_from(tmp_path / "c", tmp_path / "fresh", workers=1)
    assert Index.open(tmp_path / "i").verify() == []
    assert_same_index(Index.open(tmp_path / "i"), Index.open(tmp_path / "fresh"))
